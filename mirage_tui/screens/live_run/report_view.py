"""Live run's report: recomputed in a thread worker (at most every ``REPORT_INTERVAL`` seconds
while items finish, never on the UI thread) and drawn into the accuracy table, the
adaptability bars and the retrieval table (``d`` switches its gold definition). A part of
:class:`~.screen.LiveRunScreen` (a mixin; what it uses of the screen:
:class:`ReportViewHost`; whether a report is in flight is its own). What is drawn comes from
:mod:`.panels`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Protocol

from rich.text import Text
from textual import work
from textual.message import Message
from textual.widgets import DataTable, Static

from engine.metrics.definitions import GOLD_DEFINITIONS
from mirage_tui.screens.hosts import ScreenHost
from mirage_tui.screens.live_run.panels import (accuracy_columns, fill_table, gold_subtitle,
                                                report_notes, retrieval_columns, run_title)
from mirage_tui.widgets.adaptability import AdaptabilityPanel

if TYPE_CHECKING:
    from engine.results.report import RunReport
    from mirage_tui.run_controller import RunController

REPORT_INTERVAL = 2.0
"""Seconds between report recomputations while a run works."""


class ReportViewHost(ScreenHost, Protocol):
    """What :class:`ReportView` uses of its host beyond a screen's own (``ScreenHost``)."""

    run_name: str | None
    report: RunReport | None = None
    gold: str | None = None
    ReportLoaded: Callable[..., Message]
    ReportFailed: Callable[..., Message]

    @property
    def controller(self) -> RunController | None: ...

    def follows_the_running_run(self) -> bool: ...

    def progress_changed(self) -> None: ...


if TYPE_CHECKING:
    _Host = ReportViewHost
else:
    _Host = object


class ReportView(_Host):
    """The report of the run shown, computed and drawn (module docstring)."""

    _report_busy = False
    """A report is being computed."""
    _report_dirty = False
    """Rows changed since the report in flight (or the last one) started."""
    _report_started = 0.0
    """When the last report started (``time.monotonic``)."""

    def _running_here(self) -> bool:
        """The screen follows the app's run, and it is going."""
        controller = self.controller
        return self.follows_the_running_run() and controller is not None and controller.running

    def action_reload_report(self) -> None:
        self.reload_report(force=True, changed=True)

    def reload_report(self, force: bool = False, changed: bool = False) -> None:
        """Recompute the report in a worker: at once with ``force``, else at most every
        ``REPORT_INTERVAL`` seconds. ``changed``: rows changed since the report in flight (if
        any) started, so it must be computed again when that one lands."""
        store = self.store
        if self.run_name is None or store is None:
            return
        if self._report_busy:
            self._report_dirty = self._report_dirty or changed
            return
        if not force and time.monotonic() - self._report_started < REPORT_INTERVAL:
            self._report_dirty = True
            return
        self._report_busy = True
        self._report_dirty = False
        self._report_started = time.monotonic()
        self.compute_report(store, self.run_name)

    @work(thread=True, exclusive=False, exit_on_error=False, group="live-report",
          name="compute the run report")
    def compute_report(self, store, run_name: str) -> None:
        from engine.results.report import build_report
        from engine.runs.lookup import load_run

        try:
            report = build_report(store, load_run(store, run_name))
            self.post_message(self.ReportLoaded(run_name, report))
        except Exception as exc:  # noqa: BLE001 - RunNotFound, a run being replaced
            self.post_message(self.ReportFailed(run_name, f"{type(exc).__name__}: {exc}"))
        finally:
            store.close()

    def on_live_run_screen_report_loaded(self, message: Message) -> None:
        self._report_busy = False
        if message.run != self.run_name:
            self.reload_report(force=True)
            return
        self.report = message.report
        self._draw_report()
        self.progress_changed()
        if self._report_dirty and not self._running_here():
            self.reload_report(force=True)   # the run ended while this one was computed

    def on_live_run_screen_report_failed(self, message: Message) -> None:
        self._report_busy = False
        if message.run != self.run_name:
            return
        if self._running_here():
            return   # not stored yet: the run is still being planned
        self.query_one("#live-notes", Static).update(f"No report: {message.error}")

    def _set_title(self, text: str) -> None:
        self.query_one("#live-title", Static).update(text)

    def _title_from(self, status: str | None = None) -> None:
        self._set_title(run_title(self.run_name, self.report, status))

    def _clear_panels(self) -> None:
        self.query_one("#live-accuracy", DataTable).clear(columns=True)
        self.query_one(AdaptabilityPanel).show([])
        retrieval = self.query_one("#live-retrieval", DataTable)
        retrieval.clear(columns=True)
        retrieval.display = False
        self.query_one("#live-notes", Static).update("")
        self._title_from()

    def _draw_report(self) -> None:
        report = self.report
        if report is None:
            return
        self._title_from(status="running" if self._running_here() else None)
        self._draw_accuracy(report)
        self.query_one(AdaptabilityPanel).show(report.systems)
        self._draw_retrieval(report)
        self.query_one("#live-notes", Static).update(report_notes(report))

    def _draw_accuracy(self, report) -> None:
        table = self.query_one("#live-accuracy", DataTable)
        columns, keys, template = accuracy_columns(report)
        fill_table(table, columns, keys)
        table.border_subtitle = Text(f"prompt {template}" if template else "")

    def _draw_retrieval(self, report) -> None:
        table = self.query_one("#live-retrieval", DataTable)
        gold = self.shown_gold()
        entries = report.retrieval_by_gold.get(gold, report.retrieval)
        table.display = bool(entries)
        if not entries:
            return
        fill_table(table, *retrieval_columns(entries))
        table.border_subtitle = Text(gold_subtitle(gold, report.definitions))

    def shown_gold(self) -> str:
        """The gold definition the Retrieval panel shows: the one ``d`` chose, else the
        report's (the run's recorded one, else oracle)."""
        return self.gold or (self.report.gold if self.report is not None
                             else GOLD_DEFINITIONS[0])

    def action_toggle_gold(self) -> None:
        """Switch the Retrieval panel between the two gold definitions (both are computed)."""
        if self.report is None or not self.report.retrieval:
            self.notify("This run has no retrieval to score.", timeout=3)
            return
        current = GOLD_DEFINITIONS.index(self.shown_gold())
        self.gold = GOLD_DEFINITIONS[(current + 1) % len(GOLD_DEFINITIONS)]
        self._draw_retrieval(self.report)
