"""The inspector's cells: values as text, and one item's row of the list."""

from __future__ import annotations

from rich.text import Text

from mirage_tui.widgets.safe_text import (elided_cell, elided_column, safe_line,
                                          system_caption, system_column, whole_width)


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


def _id_widths(width: int, systems: list, settings: list) -> tuple[int, int, int]:
    """The system, setting and query id columns' widths on a screen ``width`` cells wide:
    the system and setting a little wider when their differing part needs it."""
    sys_w, set_w, qid_w = (18, 12, 14) if width >= 110 else \
        (15, 8, 14) if width >= 95 else (9, 6, 10)
    sys_cap, set_cap = (24, 16) if width >= 110 else (18, 12) if width >= 95 else (11, 8)
    return (max(sys_w, min(sys_cap, whole_width(systems))),
            max(set_w, min(set_cap, whole_width(settings))), qid_w)


def page_cells(rows: list, width: int, systems: list | None = None,
               settings: list | None = None) -> list[list[Text]]:
    """A page of items (``engine.results.inspector.ItemRow``) as list rows for a screen
    ``width`` cells wide: ids elided with one cut that keeps the page's rows apart, the
    question and the response in whole words; the systems and settings kept apart
    among all the run's (``systems``, ``settings``) by the part that differs, their columns
    a little wider when that needs it (never ``re…239`` for three settings)."""
    systems = list(systems or []) + [r.system for r in rows]
    settings = list(settings or []) + [r.setting for r in rows]
    sys_w, set_w, qid_w = _id_widths(width, systems, settings)
    # the fixed columns (lang 4, EM 3, pattern 7), 8 × 2 cells of padding, the border, the
    # scrollbar and the sorted column's " ▲": what is left goes to the question and the
    # response (the response is what is read; Enter shows both in full)
    rest = max(16, width - (sys_w + set_w + qid_w + 14 + 16 + 4 + 2))
    question_w = rest * 3 // 8 if width >= 95 else rest // 2
    columns = [system_column([r.system for r in rows], sys_w, systems),
               system_column([r.setting for r in rows], set_w, settings),
               elided_column([r.query_id for r in rows], qid_w)]
    out = []
    for i, row in enumerate(rows):
        em = value_text(row.em_loose) if not row.error else "err"
        out.append([columns[0][i], columns[1][i], columns[2][i], plain(row.language or "—"),
                    plain(em), plain(row.pattern or "—"),
                    elided_cell(row.query, question_w, prose=True),
                    elided_cell(row.response or row.error or "—", rest - question_w,
                                prose=True)])
    return out


def page_caption(width: int, systems: list, settings: list) -> str:
    """What :func:`page_cells` leaves out of every system and setting of the run (the words
    they all share), said once under the list; empty when nothing is."""
    sys_w, set_w, _ = _id_widths(width, systems, settings)
    return " · ".join(c for c in (system_caption(systems, sys_w),
                                  system_caption(settings, set_w)) if c)
