"""What the screens do alike with a :class:`~textual.widgets.DataTable`."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
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


def refill_fitting(table: DataTable, columns: dict[str, str], rows: list[tuple[str, dict]],
                   priority: list[str], reserve: int = 0) -> list[str]:
    """Fill ``table`` with ``rows`` (row key, cells by column key) in the ``columns`` (key:
    label, display order) that fit its width whole, the most important first
    (:func:`columns_that_fit`), the highlighted row kept; returns the labels left out, for
    the table to say so; ``reserve`` cells are kept free (a container's scrollbar to come).
    Call it again on a resize."""
    def width(cell) -> int:
        return cell.cell_len if isinstance(cell, Text) else cell_len(str(cell))

    widths = {k: max([cell_len(label)] + [width(cells[k]) for _, cells in rows])
              for k, label in columns.items()}
    available = table.scrollable_content_region.width or (table.app.size.width - 4)
    if not table.show_vertical_scrollbar and \
            len(rows) + 1 > table.scrollable_content_region.height:    # the rows bring one
        available -= table.styles.scrollbar_size_vertical
    available -= reserve
    fit = set(columns_that_fit(widths, priority, available))
    keep = highlighted_key(table)
    table.clear(columns=True)
    for key, label in columns.items():
        if key in fit:
            table.add_column(label, key=key)
    for row_key, cells in rows:
        table.add_row(*(cells[k] for k in columns if k in fit), key=row_key)
    if keep is not None and any(keep == k for k, _ in rows):
        table.move_cursor(row=table.get_row_index(keep))
    return [label for key, label in columns.items() if key not in fit]
