"""The Live run screen: which run it follows, its title and progress lines. Its parts are
widgets that each hold their own state and say what happened by messages: the report, computed
and drawn, with Enter inspecting its items (:class:`~.report_view.ReportView`), and ``c`` and
``r``, cancel and resume (:class:`~.run_keys.RunControls`). Their keys are bound here, in the
footer's order, so that each acts wherever the focus is; the screen hands them the run it
shows. What is drawn comes from :mod:`.panels`."""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Header, ProgressBar, Static
from textual.worker import get_current_worker

from mirage_tui.commands import PaletteCommand
from mirage_tui.screens.base import BaseScreen
from mirage_tui.screens.features import failures_as, in_footer_order
from mirage_tui.screens.live_run.messages import NewestRunFailed
from mirage_tui.screens.live_run.panels import (cut_part, ended_line, event_counts, run_title,
                                                stored_counts, working_line)
from mirage_tui.screens.live_run.report_view import ReportView
from mirage_tui.screens.live_run.run_keys import RunControls
from mirage_tui.widgets.footer import Footer

FOOTER_ORDER = ("cancel_run", "resume_run", "toggle_gold", "reload_report", "app.go_back",
                "why_not")
"""The screen's and its parts' keys, in the footer's order; each key's hidden binding that says
why it cannot act comes after the one that acts."""


class LiveRunScreen(BaseScreen):
    """Progress, accuracy, adaptability and retrieval of one run; see the package docstring."""

    # keyboard-first: Enter on the highlighted bar inspects its items straight away
    AUTO_FOCUS = "#live-adaptability"

    BINDINGS = in_footer_order(FOOTER_ORDER, RunControls.KEYS, ReportView.KEYS,
                               [Binding("escape", "app.go_back", "Back", show=False)])

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
    class NoRun(Message):
        pass

    def __init__(self, run_name: str | None = None) -> None:
        super().__init__()
        self.run_name = run_name
        self._drawn_done: int | None = None
        self._eta_event, self._eta_at = None, 0.0    # the event the ETA shown is from, when
        self._mounted = False
        self.report_view = ReportView(run_name, id="live-body")
        self.controls = RunControls()

    @property
    def report(self):
        """The newest report of the run shown (:class:`ReportView`'s)."""
        return self.report_view.report

    @property
    def gold(self) -> str | None:
        """The Retrieval panel's gold definition (None: the run's; :class:`ReportView`'s)."""
        return self.report_view.gold

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Live run", id="live-title", markup=False)
        with Horizontal(id="live-progress-row"):
            yield ProgressBar(id="live-progress", show_eta=False)
            yield Static("", id="live-counts", markup=False)
        yield Static("", id="live-now", markup=False)
        yield self.report_view
        yield Footer(compact=True)
        yield self.controls

    def on_mount(self) -> None:
        self._mounted = True
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
        self.report_view.reload(force=True)

    def show_run(self, run_name: str) -> None:
        """Switch to ``run_name``: clear the panels, then load its report."""
        if not self._mounted:       # shown before it was mounted: on_mount draws it
            self.run_name = run_name
            self.report_view.show(run_name)
            return
        self.query_one("#live-progress-row").display = True
        if run_name != self.run_name:
            self.run_name = run_name
            self._drawn_done = None
            self.report_view.show(run_name)
            self._title_from()
        self.progress_changed()
        self.report_view.reload(force=True)

    @work(thread=True, exclusive=True, exit_on_error=False, group="live-find",
          name="find the newest run")
    def find_last_run(self, store) -> None:
        from engine.store.runs import known_runs

        worker = get_current_worker()
        with failures_as(self, lambda error: NewestRunFailed(error, worker), store):
            runs = known_runs(store)          # oldest first
            if runs:
                self.app.call_from_thread(self.show_run, runs[-1])
            else:
                self.post_message(self.NoRun())

    def on_live_run_screen_no_run(self) -> None:
        self._set_title("No run yet")
        self.query_one("#live-progress-row").display = False
        self.query_one("#live-now", Static).update(
            "Press n for a new run, or g for the quick comparison.")

    @on(NewestRunFailed)
    def _newest_run_failed(self, message: NewestRunFailed) -> None:
        if message.worker is None or not message.worker.is_cancelled:
            message.tell(self.app)

    # ------------------------------------------------------------------ the report

    @on(ReportView.Shown)
    def _report_shown(self) -> None:
        self._title_from(status="running" if self.report_view.running_here() else None)
        self.progress_changed()

    def _set_title(self, text: str) -> None:
        self.query_one("#live-title", Static).update(text)

    def _title_from(self, status: str | None = None) -> None:
        self._set_title(run_title(self.run_name, self.report, status))

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
                self.report_view.rows_changed()
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
        self.report_view.reload(force=True, changed=True)

    def _tick(self) -> None:
        if self.follows_the_running_run() and self.controller.running:
            self.progress_changed()        # the ETA counts down between events (a load)

    # ------------------------------------------------------------------ keys

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Each part says whether its key can act now; one that cannot leaves the footer (and
        says why when pressed: :meth:`action_why_not`)."""
        if action == "cancel_run":
            return self.controls.can_cancel(self.run_name)
        if action == "resume_run":
            return self.controls.can_resume(self.run_name, self.report)
        if action == "toggle_gold":
            return self.report_view.has_retrieval()
        return True

    def action_why_not(self, action: str) -> None:
        """A key pressed while its action cannot act: the action itself says why."""
        if self.run_name is None:
            self.notify("No run is shown yet: n starts one.", timeout=3)
            return
        getattr(self, f"action_{action}")()

    def action_cancel_run(self) -> None:
        self.controls.cancel(self.run_name)

    def action_resume_run(self) -> None:
        self.controls.resume(self.run_name, self.report)

    def action_toggle_gold(self) -> None:
        self.report_view.toggle_gold()

    def action_reload_report(self) -> None:
        self.report_view.reload(force=True, changed=True)
