"""What the screens do alike with a :class:`~textual.widgets.DataTable`."""

from __future__ import annotations

from textual.widgets import DataTable


def highlighted_key(table: DataTable) -> str | None:
    """The key of the row under the table's cursor; None when the table is empty."""
    if not table.row_count:
        return None
    row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
    return row_key.value
