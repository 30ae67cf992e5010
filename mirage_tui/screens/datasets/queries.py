"""The datasets screen's queries table, as plain data: what it shows and how far it has been
loaded (:class:`QueriesShown`), the cells, the column widths and the status line."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text

from engine.datasets.catalog import DatasetSummary
from mirage_tui.widgets.safe_text import elided_cell, safe_line

PAGE_SIZE = 200
LOAD_MORE_MARGIN = 20  # rows from the end at which the next page is fetched


def languages_cell(languages: dict[str, int], shown: int = 4) -> str:
    """``en 20 · es 20 · de 20``; past ``shown`` languages, ``+N more``."""
    parts = [f"{lang} {count}" for lang, count in list(languages.items())[:shown]]
    if len(languages) > shown:
        parts.append(f"+{len(languages) - shown} more")
    return " · ".join(parts) or "—"


def number(value: int | str) -> Text:
    return Text(str(value), justify="right")


def plain(value: str) -> Text:
    # DataTable reads a str cell as markup: a question with "[1]" in it would be mangled
    return safe_line(value)


@dataclass
class QueryFilter:
    language: str | None = None
    search: str = ""


@dataclass
class QueriesShown:
    """What the queries table is showing, and how far it has been loaded."""
    dataset: DatasetSummary | None = None
    filter: QueryFilter = field(default_factory=QueryFilter)
    ids: list[str] = field(default_factory=list)
    exhausted: bool = True
    loading: bool = False
    widths: tuple[int, int, int] | None = None  # source, question, answers
    generation: int = 0

    def wants_more(self, near_row: int) -> bool:
        """Whether the row the user is near calls for the next page now."""
        return not self.loading and not self.exhausted and \
            near_row >= len(self.ids) - LOAD_MORE_MARGIN


def column_widths(rows: list[dict], width: int) -> tuple[int, int, int]:
    """Widths for source, question and answers that fit a table ``width`` cells wide, so the
    answers stay on screen (at 80 columns too) instead of behind a horizontal scroll."""
    id_w = max((len(r["query_id"]) for r in rows), default=8)
    lang_w = max((len(r["language"] or "—") for r in rows), default=4)
    # inside the border: 2 cells of padding per column (5 columns) and the scrollbar (2)
    rest = max(30, width - 12 - min(id_w, 32) - max(lang_w, 4))
    longest_source = max((len(r["source"] or "—") for r in rows), default=1)
    source_w = max(6, min(longest_source, rest // 6))
    answers_w = max(10, rest // 4)
    return source_w, max(12, rest - source_w - answers_w), answers_w


def query_cells(row: dict, widths: tuple[int, int, int]) -> list[Text]:
    """One query's row: id, language, source, question, answers (clipped to ``widths``)."""
    source_w, question_w, answers_w = widths
    return [plain(row["query_id"]), plain(row["language"] or "—"),
            elided_cell(row["source"] or "—", source_w, prose=True),
            elided_cell(row["text"], question_w, prose=True),
            elided_cell(" | ".join(row["answers"]), answers_w, prose=True)]


def status_line(shown: QueriesShown) -> str | None:
    """The line above the queries table; None while no dataset is open."""
    d = shown.dataset
    if d is None:
        return None
    if d.kind != "qa" or d.queries == 0:
        extra = "; attached to retrieval pools as a collection" if d.kind != "qa" else ""
        return f"{d.label}: a collection of {d.chunks} chunks, no queries{extra}."
    loaded = len(shown.ids)
    if shown.filter.search:
        what = f"{loaded}{'' if shown.exhausted else '+'} matching “{shown.filter.search}”"
    else:
        total = d.languages.get(shown.filter.language, 0) if shown.filter.language \
            else d.queries
        what = f"{loaded} of {total} queries" + (
            f" in {shown.filter.language}" if shown.filter.language else "")
    tail = " · loading…" if shown.loading else (
        "" if shown.exhausted else " · scroll (or m) for more")
    sources = f" · {len(d.sources)} sources" if d.sources else ""
    collections = f" · + {', '.join(d.collections)}" if d.collections else ""
    return f"{d.label}: {what}{sources}{collections}{tail} · Enter opens a query"
