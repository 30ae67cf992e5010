"""Live run's report (:class:`ReportView`): the scrolling body under the progress lines, which
holds the report of the run shown, recomputes it in a thread worker (at most every
``REPORT_INTERVAL`` seconds while items finish, never on the UI thread) and draws it into the
accuracy table, the adaptability bars and the retrieval table (``d`` switches its gold
definition). Enter on an accuracy row or an adaptability bar opens the Inspector on those
items. The run is looked up by its name once; each report after that reads it again by its id
(its status and header change while it runs), by name again only when that run is gone (a run
replaced under the same name). What is drawn comes from :mod:`.panels`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static
from textual.worker import Worker

from engine.metrics.definitions import GOLD_DEFINITIONS
from mirage_tui.screens.base import report_worker_error
from mirage_tui.screens.features import failures_as, running_now, store_of
from mirage_tui.screens.live_run.messages import LiveReportFailed, ReportLoaded
from mirage_tui.screens.live_run.panels import (accuracy_columns, fill_table, gold_subtitle,
                                                report_notes, retrieval_columns)
from mirage_tui.widgets.adaptability import AdaptabilityPanel

if TYPE_CHECKING:
    from engine.results.report import RunReport
    from engine.store import Store
    from engine.runs.lookup import RunInfo

REPORT_INTERVAL = 2.0
"""Seconds between report recomputations while a run works."""


def stored_run(store: Store, name: str, held: RunInfo | None) -> RunInfo:
    """The run called ``name`` as it is stored now: read by the id of ``held`` (the same run,
    found before), looked up by name when none is held or that one is gone or renamed
    (:func:`engine.runs.lookup.load_run`: ``RunNotFound`` when there is none)."""
    from engine.runs.lookup import RunNotFound, load_run, run_now

    if held is not None and held.name == name:
        try:
            now = run_now(store, held)
        except RunNotFound:
            now = None
        if now is not None and now.name == name:
            return now
    return load_run(store, name)


class ReportView(VerticalScroll, can_focus=False):
    """The report of the run shown, computed and drawn (module docstring). Tab moves between
    its panels (each shows its focus), never to the scroll itself."""

    KEYS: ClassVar[list[Binding]] = [
        Binding("d", "toggle_gold", "Gold def"),
        Binding("d", "why_not('toggle_gold')", "Gold def", show=False),
        Binding("f5", "reload_report", "Reload", show=False),
    ]
    """Its keys; the screen binds them, so that they act wherever the focus is (``d`` is in
    the footer only while the run retrieved: :meth:`has_retrieval`)."""

    @dataclass
    class Shown(Message):
        """A report of the run shown is drawn: the screen redraws its title and progress."""

    def __init__(self, run_name: str | None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run_name = run_name
        self.run: RunInfo | None = None     # the run shown, as found by its name
        self.report: RunReport | None = None
        self.gold: str | None = None    # the Retrieval panel's gold definition (None: the run's)
        self._busy = False              # a report is being computed
        self._dirty = False             # rows changed since the one in flight (or the last) began
        self._started = 0.0             # when the last report began (time.monotonic)

    def compose(self) -> ComposeResult:
        accuracy = DataTable(id="live-accuracy", cursor_type="row", zebra_stripes=True)
        accuracy.border_title = "Accuracy · EM_loose (95% CI, n) · Enter inspects"
        yield accuracy
        yield AdaptabilityPanel(id="live-adaptability")
        retrieval = DataTable(id="live-retrieval", cursor_type="row", zebra_stripes=True)
        retrieval.border_title = "Retrieval · mean over queries (95% CI)"
        yield retrieval
        yield Static("", id="live-notes", markup=False)

    def on_mount(self) -> None:
        self.query_one("#live-retrieval").display = False
        self.set_interval(0.5, self._due)

    # ------------------------------------------------------------------ which run

    def show(self, run_name: str) -> None:
        """Show ``run_name`` from now on; another run than the one shown clears the panels
        until its report comes."""
        if run_name == self.run_name:
            return
        self.run_name, self.run, self.report = run_name, None, None
        if self.is_mounted:
            self._clear()

    def running_here(self) -> bool:
        """The app's run is the one shown, and it is going."""
        return running_now(self, self.run_name)

    # ------------------------------------------------------------------ computing

    def rows_changed(self) -> None:
        """Items finished since the report in flight (or the last one) began: computed again
        once ``REPORT_INTERVAL`` has passed."""
        self._dirty = True

    def reload(self, force: bool = False, changed: bool = False) -> None:
        """Recompute the report in a worker: at once with ``force``, else at most every
        ``REPORT_INTERVAL`` seconds. ``changed``: rows changed since the report in flight (if
        any) started, so it must be computed again when that one lands."""
        store = store_of(self)
        if self.run_name is None or store is None:
            return
        if self._busy:
            self._dirty = self._dirty or changed
            return
        if not force and time.monotonic() - self._started < REPORT_INTERVAL:
            self._dirty = True
            return
        self._busy = True
        self._dirty = False
        self._started = time.monotonic()
        self.compute_report(store, self.run_name, self.run)

    def _due(self) -> None:
        if self._dirty and not self._busy and \
                time.monotonic() - self._started >= REPORT_INTERVAL:
            self.reload()

    @work(thread=True, exclusive=False, exit_on_error=False, group="live-report",
          name="compute the run report")
    def compute_report(self, store, run_name: str, held: RunInfo | None) -> None:
        from engine.results.report import build_report

        # RunNotFound (not stored yet, or deleted), sqlite errors
        with failures_as(self, lambda error: LiveReportFailed(error, run_name), store):
            run = stored_run(store, run_name, held)
            self.post_message(ReportLoaded(run_name, build_report(store, run), run))

    @on(ReportLoaded)
    def _loaded(self, message: ReportLoaded) -> None:
        self._busy = False
        if message.run != self.run_name:
            self.reload(force=True)
            return
        self.run, self.report = message.info, message.report
        self._draw(message.report)
        self.post_message(self.Shown())
        if self._dirty and not self.running_here():
            self.reload(force=True)   # the run ended while this one was computed

    @on(LiveReportFailed)
    def _failed(self, message: LiveReportFailed) -> None:
        self._busy = False
        if message.run != self.run_name or self.running_here():
            return   # another run's, or not stored yet: the run is still being planned
        self.query_one("#live-notes", Static).update(f"No report: {message.error}")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state.name in ("ERROR", "CANCELLED"):
            self._busy = False
        report_worker_error(event)

    # ------------------------------------------------------------------ drawing

    def _clear(self) -> None:
        self.query_one("#live-accuracy", DataTable).clear(columns=True)
        self.query_one(AdaptabilityPanel).show([])
        retrieval = self.query_one("#live-retrieval", DataTable)
        retrieval.clear(columns=True)
        retrieval.display = False
        self.query_one("#live-notes", Static).update("")

    def _draw(self, report: RunReport) -> None:
        self._draw_accuracy(report)
        self.query_one(AdaptabilityPanel).show(report.systems)
        self._draw_retrieval(report)
        self.query_one("#live-notes", Static).update(report_notes(report))

    def _draw_accuracy(self, report: RunReport) -> None:
        table = self.query_one("#live-accuracy", DataTable)
        columns, keys, template = accuracy_columns(report)
        fill_table(table, columns, keys)
        table.border_subtitle = Text(f"prompt {template}" if template else "")

    def _draw_retrieval(self, report: RunReport) -> None:
        table = self.query_one("#live-retrieval", DataTable)
        gold = self.shown_gold()
        entries = report.retrieval_by_gold.get(gold, report.retrieval)
        table.display = bool(entries)
        if not entries:
            return
        fill_table(table, *retrieval_columns(entries))
        table.border_subtitle = Text(gold_subtitle(gold, report.definitions))

    # ------------------------------------------------------------------ keys

    def has_retrieval(self) -> bool:
        return self.report is not None and bool(self.report.retrieval)

    def shown_gold(self) -> str:
        """The gold definition the Retrieval panel shows: the one ``d`` chose, else the
        report's (the run's recorded one, else oracle)."""
        return self.gold or (self.report.gold if self.report is not None
                             else GOLD_DEFINITIONS[0])

    def toggle_gold(self) -> None:
        """Switch the Retrieval panel between the two gold definitions (both are computed)."""
        if self.report is None or not self.report.retrieval:
            self.notify("This run has no retrieval to score.", timeout=3)
            return
        current = GOLD_DEFINITIONS.index(self.shown_gold())
        self.gold = GOLD_DEFINITIONS[(current + 1) % len(GOLD_DEFINITIONS)]
        self._draw_retrieval(self.report)

    # ------------------------------------------------------------------ Enter inspects

    @on(AdaptabilityPanel.CategorySelected)
    def _category_selected(self, message: AdaptabilityPanel.CategorySelected) -> None:
        self._open_inspector(system=message.system, setting=message.setting,
                             category=message.category)

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "live-accuracy":
            # Enter on an accuracy row: the Inspector on that setting's items
            self._open_inspector(setting=event.row_key.value)
        elif event.data_table.id == "live-retrieval":
            self.notify("Retrieval scores are means over queries: Enter on an accuracy row or "
                        "an adaptability bar inspects items.", timeout=4)

    def _open_inspector(self, **filters) -> None:
        if self.run_name is None:
            return
        try:
            from mirage_tui.screens.inspector import InspectorScreen
        except ImportError as exc:
            self.notify(f"The inspector is not available in this build ({exc}).",
                        severity="warning", markup=False)
            return
        self.app.push_screen(InspectorScreen(self.run_name, **filters))
