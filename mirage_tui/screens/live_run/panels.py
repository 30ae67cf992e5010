"""What Live run draws, as lines and table columns: the progress lines (of a run going in this
session, of a stored one), the title, the accuracy and retrieval tables' columns from a
:class:`~engine.results.report.RunReport`, and :func:`fill_table` that puts columns in a table.
Pure formatting: the screen decides when, these say what."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from engine.results.records import ItemCounts, split_system, system_without_template
from engine.results.report import ReportDefinitions
from engine.results.retrieval_table import RetrievalRow
from engine.results.text import served_text
from engine.runs.tally import cut_words
from engine.stats import Estimate
from engine.units import fmt_interval
from mirage_tui.widgets.estimates import duration, estimate_cell, setting_label

RETRIEVAL_ROWS = tuple((f"{metric}@{k}", f"{label}@{k}")
                       for metric, label in (("p", "P"), ("r", "R"), ("ndcg", "NDCG"))
                       for k in (1, 3, 5))
"""(report key, label) of the retrieval table's rows."""

Columns = list[tuple[str, list[str]]]
"""A table as columns: (label, one cell a row), the first column the rows' labels."""


# --------------------------------------------------------------------------- progress


def cut_part(report) -> str | None:
    """``3 cut at the token limit (2 while thinking)``: the answers of the run's ``report``
    (its replies table, :mod:`engine.results.replies`) cut at the token limit; None when none
    was (or before a report)."""
    replies = getattr(report, "replies", None) or []
    cut = sum(r.cut for r in replies)
    return cut_words(cut, sum(r.cut_while_thinking for r in replies)) if cut else None


def event_counts(event, age: float = 0.0, running: bool = True, cut: str | None = None) -> str:
    """The progress line of a run of this session (timings included); ``age``: seconds since
    the event came (the screen's timer counts the ETA down between events). A run that no
    longer runs (``running`` false: done, cancelled, failed) has no ETA: it is left out the
    moment the run stops. ``cut``: its answers cut at the token limit (:func:`cut_part`)."""
    eta = 0.0 if event.total and event.done >= event.total else event.eta_seconds
    eta = None if eta is None else max(0.0, eta - age)
    # most important first: a narrow terminal cuts the end of the line, never the ETA
    parts = [f"{event.done}/{event.total} {event.unit}",
             *([f"ETA {duration(eta)}"] if running else []),
             f"{event.rate:.0f} {event.rate_unit}" if event.rate else f"– {event.rate_unit}",
             f"{event.errors} errors", f"{event.cached} cached"]
    if event.detail.truncated:
        parts.append(f"{event.detail.truncated} truncated")
    if cut:
        parts.append(cut)
    return " · ".join(parts)


def stored_counts(items: ItemCounts, cut: str | None = None) -> str:
    """The progress line of a stored run (no timings: they belong to the session); ``cut``:
    its answers cut at the token limit (:func:`cut_part`)."""
    parts = [f"{items.done}/{items.total} items", f"{items.errors} errors"]
    if items.truncated:
        parts.append(f"{items.truncated} truncated")
    if cut:
        parts.append(cut)
    if items.pending:
        parts.append(f"{items.pending} pending")
    return " · ".join(parts)


def working_line(event, cancelling: bool, age: float = 0.0) -> str:
    """What a running run does now, from its newest event: what it works on, and while a
    model works, how long the item now running has run (``age``: seconds since the event
    came, so it counts up between events) and its tokens so far where the backend counts
    them: a long item never looks like a freeze."""
    state = "cancelling" if cancelling else "running"
    run = event.detail
    doing = event.message or (f"now {run.system} · {setting_label(run.setting)}"
                              if run.system else "starting")
    working = getattr(run, "running_s", None)
    if working is not None and event.total and event.done < event.total:
        tokens = getattr(run, "running_tokens", None)
        doing += (f" · item {event.done + 1} at work {duration(working + age)}"
                  + (f", {tokens} tokens so far" if tokens is not None else ""))
    note = f" · {run.pace_note}" if getattr(run, "pace_note", None) else ""
    return f"{state} · {doing}{note} · c cancels (resumable)"


def ended_line(error: str | None, summary, report) -> str:
    """How a run that is not going ended: ``error`` (it did not start) and ``summary`` of
    this session's run, else the stored ``report``'s status."""
    if error:
        return f"did not start: {error}"
    status = summary.status if summary else (report.status if report else "")
    if summary is not None and summary.message and status != "done":
        return f"{status}: {summary.message} · r resumes"
    if status == "done":
        return "done · Enter on a bar inspects its items · 4 Leaderboard"
    if status in ("cancelled", "running", "failed", "planned"):
        return f"{status} · r resumes it"
    return status


def run_title(run_name: str | None, report, status: str | None = None) -> str:
    """``name · dataset · sample of … · BACKEND · status``: the backend each generator ran
    on, with its device (:func:`engine.results.text.served_text`: ``llama.cpp on CPU``,
    ``llama-server``, ``HTTP endpoint``), else ``on DEVICES``; the report's status unless
    ``status`` says otherwise."""
    parts = [run_name or "?"]
    if report is not None:
        parts.append(report.dataset)
        sample = report.sample
        if sample:
            parts.append(f"sample of {sample.queries} of {sample.of} queries "
                         f"(seed {sample.seed})")
        served = served_text(report.header)
        devices = report.header.devices
        if served:
            parts.append(served)
        elif devices:
            parts.append("on " + ", ".join(devices))
    parts.append(status or (report.status if report is not None else "…"))
    return " · ".join(parts)


# --------------------------------------------------------------------------- the report


def report_notes(report) -> str:
    notes = list(report.notes)
    if report.partial:
        notes.insert(0, "Partial: the run has items still to do; numbers cover the "
                        "finished ones.")
    notes += report.definition_lines()
    return "\n".join(notes)


def accuracy_columns(report) -> tuple[Columns, list[str], str | None]:
    """Accuracy: a row a setting, a column a system (its generator alone when every system
    has the same prompt template, which is then returned), the row keys."""
    systems = list(report.accuracy)
    settings: list[str] = []
    for by_setting in report.accuracy.values():
        settings += [s for s in by_setting if s not in settings]
    templates = {split_system(s)[1] for s in systems}
    short = len(templates) == 1
    columns = [("setting", [setting_label(s) for s in settings])]
    columns += [(system_without_template(system) if short else system,
                 [estimate_cell(report.accuracy[system].get(s)) for s in settings])
                for system in systems]
    template = next(iter(templates)) if short and templates else None
    return columns, settings, template


def retrieval_cell(est: Estimate | None) -> str:
    if est is None:
        return fmt_interval(None)
    return fmt_interval(est.value, est.lo, est.hi)


def retrieval_columns(entries: list[RetrievalRow]) -> tuple[Columns, list[str]]:
    """Retrieval: a row a metric the run has, a column a retriever (with its n), the row
    keys."""
    rows = [(key, label) for key, label in RETRIEVAL_ROWS
            if any(key in e.metrics for e in entries)]
    columns = [("metric", [label for _, label in rows])]
    columns += [(f"{e.retriever_name} (n={e.n})",
                 [retrieval_cell(e.metrics.get(key)) for key, _ in rows])
                for e in entries]
    return columns, [key for key, _ in rows]


def gold_subtitle(gold: str, definitions: ReportDefinitions | None) -> str:
    """The Retrieval panel's subtitle: the gold definition shown, what it leaves out or adds,
    and the key that switches it."""
    rows = definitions.answer_match_rows if definitions else 0
    if not rows:
        extra = "no answer-match rows"
    elif gold == "oracle":
        extra = f"{rows} answer-match rows not counted"
    else:
        extra = f"incl. {rows} answer-match rows"
    return f"gold {gold} ({extra}) · d switches"


def fill_table(table: DataTable, columns: Columns, keys: list[str]) -> None:
    """Replace the table's columns and rows. Widths are computed here, not left to the
    table's auto-sizing, so a redraw in quick succession never leaves narrow columns."""
    table.clear(columns=True)
    for index, (label, cells) in enumerate(columns):
        width = max([len(label), *(len(c) for c in cells)])
        table.add_column(label, key=f"c{index}", width=width)
    for row, key in enumerate(keys):
        table.add_row(*(Text(cells[row], justify="left" if index == 0 else "right")
                        for index, (_, cells) in enumerate(columns)), key=key)
