"""What the screens do alike with a :class:`~textual.widgets.DataTable`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

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


@dataclass(frozen=True)
class Elastic:
    """A column that narrows before any other is left out: names elided alike
    (:func:`~mirage_tui.widgets.safe_text.elided_column`). ``cells(width)``: its cells, one per
    row, in ``width`` cells; it is never narrower than ``least`` (where they stay apart)."""

    key: str
    least: int
    cells: Callable[[int], list]


def scrollbar_to_come(pane) -> int:
    """The cells a scrolling ``pane`` (around a table) may yet take for its vertical
    scrollbar: none when it shows one already (the table's width is without it)."""
    return 0 if pane.show_vertical_scrollbar else pane.styles.scrollbar_size_vertical


def left_out_line(hidden: list[str], how: str | None = None) -> str:
    """A table's line (its border's subtitle) naming the columns :func:`refill_fitting` left
    out whole, and where else to read them (``how``: a key); empty when none was."""
    if not hidden:
        return ""
    return f"{', '.join(hidden)}: wider screen" + (f" or {how}" if how else "")


def title_naming(title: str, hidden: list[str], how: str | None = None) -> str:
    """A table's title with the columns left out named after it (:func:`left_out_line`), for
    a table whose bottom border is out of sight or absent."""
    return " · ".join(x for x in (title, left_out_line(hidden, how)) if x)


def fit_widths(widths: dict[str, int], priority: list[str], available: int,
               elastic: tuple[str, int] | None = None) -> dict[str, int]:
    """The columns shown in ``available`` cells and each one's width: :func:`columns_that_fit`
    on their full ``widths``, but an ``elastic`` column (key, least width) counts as its least
    and then takes what the shown ones leave, up to its full width. A column is shown at its
    full width or not at all, the elastic one aside (its cells are elided to its width)."""
    need = dict(widths)
    if elastic is not None:
        key, least = elastic
        need[key] = min(widths[key], least)
    fit = columns_that_fit(need, priority, available)
    shown = {k: need[k] for k in fit}
    if elastic is not None and elastic[0] in shown:
        room = available - sum(w + 2 for w in shown.values())
        shown[elastic[0]] = min(widths[elastic[0]], need[elastic[0]] + max(0, room))
    return shown


def refill_fitting(table: DataTable, columns: dict[str, str], rows: list[tuple[str, dict]],
                   priority: list[str], reserve: int = 0,
                   elastic: Elastic | None = None) -> list[str]:
    """Fill ``table`` with ``rows`` (row key, cells by column key) in the ``columns`` (key:
    label, display order) that fit its width whole, the most important first
    (:func:`fit_widths`), the highlighted row kept; returns the labels left out, for the
    table to say so (:func:`left_out_line`); ``reserve`` cells are kept free (a container's
    scrollbar to come). The ``elastic`` column narrows to its ``least`` before any column is
    left out. No column is ever cut: a number shows whole or its column is left out. Call it
    again on a resize."""
    def width(cell) -> int:
        return cell.cell_len if isinstance(cell, Text) else cell_len(str(cell))

    widths = {k: max([cell_len(label)] + [width(cells[k]) for _, cells in rows])
              for k, label in columns.items()}
    available = table.scrollable_content_region.width or (table.app.size.width - 4)
    if not table.show_vertical_scrollbar and \
            len(rows) + 1 > table.scrollable_content_region.height:    # the rows bring one
        available -= table.styles.scrollbar_size_vertical
    available -= reserve
    least = None if elastic is None else \
        (elastic.key, max(elastic.least, cell_len(columns[elastic.key])))
    fit = fit_widths(widths, priority, available, least)
    if elastic is not None and elastic.key in fit:
        fitted = elastic.cells(fit[elastic.key])
        rows = [(key, {**cells, elastic.key: cell}) for (key, cells), cell in zip(rows, fitted)]
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
