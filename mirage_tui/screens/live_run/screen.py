"""The Live run screen: which run it follows and its progress lines. Its report, computed and
drawn, is :mod:`.report_view`; its keys (cancel, resume, Enter inspects) :mod:`.run_keys`
(both mixed in). What is drawn comes from :mod:`.panels`."""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, ProgressBar, Static
from textual.worker import Worker

from mirage_tui.commands import PaletteCommand
from mirage_tui.screens.base import BaseScreen
from mirage_tui.screens.live_run.panels import (cut_part, ended_line, event_counts,
                                                stored_counts, working_line)
from mirage_tui.screens.live_run.report_view import REPORT_INTERVAL, ReportView
from mirage_tui.screens.live_run.run_keys import LiveRunKeys
from mirage_tui.widgets.adaptability import AdaptabilityPanel
from mirage_tui.widgets.footer import Footer


class LiveRunScreen(ReportView, LiveRunKeys, BaseScreen):
    """Progress, accuracy, adaptability and retrieval of one run; see the package docstring."""

    # keyboard-first: Enter on the highlighted bar inspects its items straight away
    AUTO_FOCUS = "#live-adaptability"

    # a key is in the footer only while it can act; pressed when it cannot, the hidden
    # binding after it says why (Textual tries a key's bindings in turn)
    BINDINGS = [
        Binding("c", "cancel_run", "Cancel run"),
        Binding("c", "why_not('cancel_run')", "Cancel run", show=False),
        Binding("r", "resume_run", "Resume"),
        Binding("r", "why_not('resume_run')", "Resume", show=False),
        Binding("d", "toggle_gold", "Gold def"),
        Binding("d", "why_not('toggle_gold')", "Gold def", show=False),
        Binding("f5", "reload_report", "Reload", show=False),
        Binding("escape", "app.go_back", "Back", show=False),
    ]

    PALETTE = (
        PaletteCommand("live: switch the gold definition",
                       "Score retrieval against the other gold definition (d)", "toggle_gold"),
        PaletteCommand("live: reload the report", "Compute the shown run's report again (f5)",
                       "reload_report"),
    )
    PALETTE_AFTER = "live_run"

    DEFAULT_CSS = """
    LiveRunScreen #live-title {
        height: auto;
        padding: 0 1;
        text-style: bold;
        color: $text-primary;
    }
    LiveRunScreen #live-progress-row {
        height: 1;
        padding: 0 1;
    }
    LiveRunScreen #live-progress {
        width: auto;
        margin-right: 1;
    }
    LiveRunScreen #live-counts {
        width: 1fr;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    LiveRunScreen #live-now {
        height: 1;
        padding: 0 1;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    LiveRunScreen #live-body {
        height: 1fr;
    }
    LiveRunScreen #live-body DataTable {
        height: auto;
        max-height: 100%;
        border: round $primary 50%;
        border-title-color: $text-primary;
        border-subtitle-color: $text-muted;
    }
    LiveRunScreen #live-body DataTable:focus {
        border: round $accent;
    }
    LiveRunScreen #live-notes {
        height: auto;
        padding: 0 1;
        color: $text-muted;
    }
    """

    @dataclass
    class ReportLoaded(Message):
        run: str
        report: object          # engine.results.report.RunReport

    @dataclass
    class ReportFailed(Message):
        run: str | None
        error: str

    @dataclass
    class NoRun(Message):
        pass

    def __init__(self, run_name: str | None = None) -> None:
        super().__init__()
        self.run_name = run_name
        self.report = None              # the report's state beside it: ReportView's own
        self._drawn_done: int | None = None
        self._eta_event, self._eta_at = None, 0.0    # the event the ETA shown is from, when
        self._mounted = False
        self.gold: str | None = None    # the Retrieval panel's gold definition (None: the run's)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Live run", id="live-title", markup=False)
        with Horizontal(id="live-progress-row"):
            yield ProgressBar(id="live-progress", show_eta=False)
            yield Static("", id="live-counts", markup=False)
        yield Static("", id="live-now", markup=False)
        # Tab moves between the panels (each shows its focus), never to the scroll itself
        with VerticalScroll(id="live-body", can_focus=False):
            accuracy = DataTable(id="live-accuracy", cursor_type="row", zebra_stripes=True)
            accuracy.border_title = "Accuracy · EM_loose (95% CI, n) · Enter inspects"
            yield accuracy
            yield AdaptabilityPanel(id="live-adaptability")
            retrieval = DataTable(id="live-retrieval", cursor_type="row", zebra_stripes=True)
            retrieval.border_title = "Retrieval · mean over queries (95% CI)"
            yield retrieval
            yield Static("", id="live-notes", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._mounted = True
        self.query_one("#live-retrieval").display = False
        self.set_interval(0.5, self._tick)
        self._follow()

    def on_screen_resume(self) -> None:
        self._follow()

    # ------------------------------------------------------------------ which run

    @property
    def controller(self):
        return self.run_controller

    def follows_the_running_run(self) -> bool:
        controller = self.controller
        return controller is not None and controller.run_name is not None \
            and controller.run_name == self.run_name

    def _follow(self) -> None:
        """Show the controller's run, else the one shown, else the newest stored run."""
        controller = self.controller
        if controller is not None and controller.run_name and (
                controller.running or self.run_name is None):
            if controller.run_name != self.run_name:
                self.show_run(controller.run_name)
                return
        if self.run_name is None:
            store = self.store
            if store is not None:
                self.find_last_run(store)
            else:
                self._set_title("No run yet")
            return
        self.progress_changed()
        self.reload_report(force=True)

    def show_run(self, run_name: str) -> None:
        """Switch to ``run_name``: clear the panels, then load its report."""
        if not self._mounted:       # shown before it was mounted: on_mount draws it
            self.run_name = run_name
            return
        self.query_one("#live-progress-row").display = True
        if run_name != self.run_name:
            self.run_name = run_name
            self.report = None
            self._drawn_done = None
            self._clear_panels()
        self.progress_changed()
        self.reload_report(force=True)

    @work(thread=True, exclusive=True, exit_on_error=False, group="live-find",
          name="find the newest run")
    def find_last_run(self, store) -> None:
        from engine.store.runs import known_runs

        try:
            runs = known_runs(store)          # oldest first
        finally:
            store.close()
        if runs:
            self.app.call_from_thread(self.show_run, runs[-1])
        else:
            self.post_message(self.NoRun())

    def on_live_run_screen_no_run(self) -> None:
        self._set_title("No run yet")
        self.query_one("#live-progress-row").display = False
        self.query_one("#live-now", Static).update(
            "Press n for a new run, or g for the quick comparison.")

    # ------------------------------------------------------------------ progress

    def progress_changed(self) -> None:
        """Redraw the progress lines (the app calls this, throttled, as events arrive)."""
        if self.run_name is None or not self._mounted:
            return
        controller = self.controller
        bar = self.query_one("#live-progress", ProgressBar)
        counts = self.query_one("#live-counts", Static)
        now = self.query_one("#live-now", Static)
        event = controller.latest if self.follows_the_running_run() else None
        if event is not None:
            if event is not self._eta_event:
                self._eta_event, self._eta_at = event, time.monotonic()
            bar.update(total=max(event.total, 1), progress=event.done)
            age = time.monotonic() - self._eta_at if controller.running else 0.0
            # a run that stopped shows no ETA: cleared the moment it stops
            counts.update(event_counts(event, age, running=controller.running,
                                       cut=cut_part(self.report)))
            if controller.running:
                now.update(working_line(event, controller.cancelling, age))
            else:
                now.update(self._ended_line())
            self._title_from(status=("running" if controller.running else None))
            if event.done != self._drawn_done:
                self._drawn_done = event.done
                self._report_dirty = True
        elif self.follows_the_running_run() and controller.running:
            bar.update(total=None)
            counts.update("planning…")
            now.update("running · planning the run and loading models · c cancels")
        elif self.report is not None:
            items = self.report.items
            bar.update(total=max(items.total, 1), progress=items.done)
            counts.update(stored_counts(items, cut_part(self.report)))
            now.update(self._ended_line())
        elif self.follows_the_running_run() and controller.error:
            bar.update(total=1, progress=0)
            counts.update("no items")
            now.update(self._ended_line())
            self._title_from(status="failed")
        self.refresh_bindings()

    def _ended_line(self) -> str:
        controller, current = self.controller, self.follows_the_running_run()
        return ended_line(controller.error if current else None,
                          controller.summary if current else None, self.report)

    def run_ended(self) -> None:
        """The controller's run stopped: final progress and a fresh report."""
        if not self._mounted:
            return
        self.progress_changed()
        self.reload_report(force=True, changed=True)

    def _tick(self) -> None:
        if self.follows_the_running_run() and self.controller.running:
            self.progress_changed()        # the ETA counts down between events (a load)
        if self._report_dirty and not self._report_busy and \
                time.monotonic() - self._report_started >= REPORT_INTERVAL:
            self.reload_report()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # then BaseScreen's handler reports the error
        if event.worker.group == "live-report" and event.state.name in ("ERROR", "CANCELLED"):
            self._report_busy = False
