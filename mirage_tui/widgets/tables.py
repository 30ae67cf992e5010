"""What the screens do alike with a :class:`~textual.widgets.DataTable`."""

from __future__ import annotations

from textual.widgets import DataTable


def highlighted_key(table: DataTable) -> str | None:
    """The key of the row under the table's cursor; None when the table is empty."""
    if not table.row_count:
        return None
    row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
    return row_key.value


def columns_that_fit(widths: dict[str, int], priority: list[str], available: int,
                     padding: int = 2) -> list[str]:
    """The columns to show in ``available`` cells: the most important first (``priority``),
    each ``widths[key] + padding`` wide, until the next would not fit; the first is always
    shown. Returned in ``priority`` order (the caller keeps its own display order)."""
    shown: list[str] = []
    used = 0
    for key in priority:
        need = widths.get(key, 0) + padding
        if shown and used + need > available:
            continue        # a narrower, less important column may still fit
        shown.append(key)
        used += need
    return shown
