"""Live run's keys: ``c`` cancels the run (now, the item in progress cut; resumable), ``r`` resumes a
stopped one, and Enter on an adaptability bar or an accuracy row opens the Inspector on those
items. A key is in the footer only while it can act (``check_action``); pressed when it
cannot, it says why. A part of :class:`~.screen.LiveRunScreen` (a mixin; what it uses
of the screen: :class:`LiveRunKeysHost`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual.widgets import DataTable

from mirage_tui.screens.hosts import ScreenHost
from mirage_tui.widgets.adaptability import AdaptabilityPanel

if TYPE_CHECKING:
    from engine.results.report import RunReport
    from mirage_tui.run_controller import RunController


class LiveRunKeysHost(ScreenHost, Protocol):
    """What :class:`LiveRunKeys` uses of its host beyond a screen's own (``ScreenHost``)."""

    run_name: str | None
    report: RunReport | None

    @property
    def controller(self) -> RunController | None: ...

    def follows_the_running_run(self) -> bool: ...


if TYPE_CHECKING:
    _Host = LiveRunKeysHost
else:
    _Host = object


class LiveRunKeys(_Host):
    """Cancel, resume, inspect (module docstring)."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Cancel only while this run goes, resume only when it stopped before its end, the
        gold definition only with retrieval; otherwise the key leaves the footer (and says
        why when pressed: :meth:`action_why_not`)."""
        controller = self.controller
        going = controller is not None and controller.running
        if action == "cancel_run":
            return going and self.follows_the_running_run()
        if action == "toggle_gold":
            return self.report is not None and bool(self.report.retrieval)
        if action == "resume_run":
            finished = self.report is not None and self.report.status == "done" \
                and not self.report.items.pending
            return not (going or finished or self.run_name is None)
        return True

    def action_why_not(self, action: str) -> None:
        """A key pressed while its action cannot act: the action itself says why."""
        if self.run_name is None:
            self.notify("No run is shown yet: n starts one.", timeout=3)
            return
        getattr(self, f"action_{action}")()

    def action_cancel_run(self) -> None:
        controller = self.controller
        if not (self.follows_the_running_run() and controller is not None
                and controller.running):
            self.notify("This run is not going; nothing to cancel.", timeout=3)
            return
        workbench = self.workbench
        if workbench is not None:
            workbench.action_cancel_run()

    def action_resume_run(self) -> None:
        if self.run_name is None:
            return
        controller = self.controller
        if controller is None:
            return
        if controller.running:
            if self.follows_the_running_run():
                self.notify("This run is going already.", timeout=3)
            else:
                self.notify(f"Run {controller.run_name} is going; one run at a time.",
                            severity="warning", timeout=5)
            return
        if self.report is not None and self.report.status == "done" \
                and not self.report.items.pending:
            self.notify(f"Run {self.run_name} is finished; nothing to resume.", timeout=3)
            return
        controller.resume(self.run_name)

    def on_adaptability_panel_category_selected(
            self, message: AdaptabilityPanel.CategorySelected) -> None:
        self._open_inspector(system=message.system, setting=message.setting,
                             category=message.category)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
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
