"""The inspector's cells: values as text, and one item's row of the list."""

from __future__ import annotations

from rich.text import Text

from mirage_tui.widgets.safe_text import elided_cell, elided_column, safe_line


def plain(value) -> Text:
    # DataTable reads a str cell as markup: "[1]" in an answer would vanish
    return safe_line(value)


def value_text(value: float | None) -> str:
    if value is None:
        return "—"
    return str(int(value)) if float(value).is_integer() else f"{value:.3g}"


ITEM_COLUMNS = ("system", "setting", "query", "lang", "EM", "pattern", "question", "response")
# each column's sort (``engine.results.inspector.SORT_KEYS``)
COLUMN_SORTS = dict(zip(ITEM_COLUMNS, ("system", "setting", "query", "language", "em",
                                       "pattern", "question", "response")))


def column_label(column: str, sort: str | None, descending: bool) -> str:
    """A column's header: its name, with ▲ / ▼ when the list is sorted by it (the default
    order is by system)."""
    if COLUMN_SORTS[column] != (sort or "system"):
        return column
    return f"{column} {'▼' if descending else '▲'}"


def item_key(row) -> str:
    """The list's row key of an item: system, setting and query rowid."""
    return f"{row.system}\t{row.setting}\t{row.query_rowid}"


def page_cells(rows: list, width: int) -> list[list[Text]]:
    """A page of items (``engine.results.inspector.ItemRow``) as list rows for a screen
    ``width`` cells wide: ids elided with one cut that keeps the page's rows apart, the
    question and the response in whole words (issue 27)."""
    sys_w, set_w, qid_w = (18, 12, 14) if width >= 110 else \
        (15, 8, 14) if width >= 95 else (9, 6, 10)
    # the fixed columns (lang 4, EM 3, pattern 7), 8 × 2 cells of padding, the border, the
    # scrollbar and the sorted column's " ▲": what is left goes to the question and the
    # response (the response is what is read; Enter shows both in full)
    rest = max(16, width - (sys_w + set_w + qid_w + 14 + 16 + 4 + 2))
    question_w = rest * 3 // 8 if width >= 95 else rest // 2
    columns = [elided_column([getattr(r, f) for r in rows], w)
               for f, w in (("system", sys_w), ("setting", set_w), ("query_id", qid_w))]
    out = []
    for i, row in enumerate(rows):
        em = value_text(row.em_loose) if not row.error else "err"
        out.append([columns[0][i], columns[1][i], columns[2][i], plain(row.language or "—"),
                    plain(em), plain(row.pattern or "—"),
                    elided_cell(row.query, question_w, prose=True),
                    elided_cell(row.response or row.error or "—", rest - question_w,
                                prose=True)])
    return out
