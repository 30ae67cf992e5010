"""What a table shows on screen, cell by cell, as the terminal draws it (issue 34: at 120
columns the Leaderboard's win rate read ``n=1`` for n=110, its column running past the table's
right edge). A cell is read from the rendered lines of the table, cropped where the table and
its containers crop it, so a number cut at an edge is read cut; and the numbers in a text."""

from __future__ import annotations

import re

from textual.geometry import Region
from textual.widgets import DataTable

from testkit.cuts import visible_region

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
"""A figure as the screens write it: digits, with decimals or thousands (``5,895``, ``61.4``);
its sign is read apart (``+66/-53`` are two numbers)."""


def numbers(text: str) -> list[str]:
    """The figures in ``text``, in order, as written (``61.4% [48.6, 72.7] n=110`` →
    ``['61.4', '48.6', '72.7', '110']``)."""
    return NUMBER.findall(text)


def shown_cells(screen, table: DataTable) -> dict[str, dict[str, str]]:
    """``{row key: {column key: text}}`` of the rows the screen shows of ``table``: each
    visible cell's text as drawn, padding stripped, cut where the screen cuts it (a column
    partly past the right edge gives its head; one wholly past it, or left of the view,
    gives ``''``)."""
    visible = visible_region(screen, table)
    if visible is None or not table.columns:
        return {}
    view = table.scrollable_content_region.intersection(visible)
    origin = table.region.offset
    strips = table.render_lines(Region(0, 0, table.region.width, table.region.height))
    header = table.header_height if table.show_header else 0
    top = table.scrollable_content_region.y + header
    columns = list(table.columns.values())
    out: dict[str, dict[str, str]] = {}
    for y in range(max(view.y, top), view.bottom):
        index = int(table.scroll_y) + (y - top)
        if index >= table.row_count:
            break
        strip = strips[y - origin.y]
        row: dict[str, str] = {}
        x = table.scrollable_content_region.x - int(table.scroll_x)
        for column in columns:
            width = column.get_render_width(table)
            start, end = max(x, view.x), min(x + width, view.right)
            row[column.key.value] = strip.crop(start - origin.x, end - origin.x).text.strip() \
                if end > start else ""
            x += width
        out[table.ordered_rows[index].key.value] = row
    return out
