"""Live run's keys on the run itself (:class:`RunControls`): ``c`` cancels it (now, the item in
progress cut; resumable), ``r`` resumes a stopped one. A key is in the footer only while it can
act (the screen's ``check_action`` asks :meth:`RunControls.can_cancel` and
:meth:`RunControls.can_resume`); pressed when it cannot, it says why. Both act through the
app's run controller, which is the state they read: the run shown and its newest report are
the screen's and its report's, handed in with each call."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding
from textual.widget import Widget

from mirage_tui.screens.features import controller_of, running_now

if TYPE_CHECKING:
    from engine.results.report import RunReport


def finished(report: RunReport | None) -> bool:
    """The run of ``report`` is done, with no item left to do."""
    return report is not None and report.status == "done" and not report.items.pending


class RunControls(Widget):
    """Cancel and resume the run shown (module docstring). It draws nothing: the
    notifications, and the progress lines as the run goes or stops, are what is seen of it."""

    KEYS: ClassVar[list[Binding]] = [
        Binding("c", "cancel_run", "Cancel run"),
        Binding("c", "why_not('cancel_run')", "Cancel run", show=False),
        Binding("r", "resume_run", "Resume"),
        Binding("r", "why_not('resume_run')", "Resume", show=False),
    ]
    """Its keys; the screen binds them, so that they act wherever the focus is. A key is in
    the footer only while it can act; pressed when it cannot, the hidden binding after it
    says why (Textual tries a key's bindings in turn)."""

    DEFAULT_CSS = "RunControls { display: none; }"

    def can_cancel(self, run_name: str | None) -> bool:
        """The app's run is ``run_name``, and it is going."""
        return running_now(self, run_name)

    def can_resume(self, run_name: str | None, report: RunReport | None) -> bool:
        """No run is going, and ``run_name`` (its newest report: ``report``) stopped before
        its end."""
        controller = controller_of(self)
        going = controller is not None and controller.running
        return not (going or finished(report) or run_name is None)

    def cancel(self, run_name: str | None) -> None:
        """Cancel ``run_name``, or say that it is not going."""
        if not self.can_cancel(run_name):
            self.notify("This run is not going; nothing to cancel.", timeout=3)
            return
        from mirage_tui.workbench import workbench_of

        workbench = workbench_of(self.app)
        if workbench is not None:
            workbench.action_cancel_run()

    def resume(self, run_name: str | None, report: RunReport | None) -> None:
        """Resume ``run_name`` (its newest report: ``report``), or say why it cannot."""
        controller = controller_of(self)
        if run_name is None or controller is None:
            return
        if controller.running:
            if controller.run_name == run_name:
                self.notify("This run is going already.", timeout=3)
            else:
                self.notify(f"Run {controller.run_name} is going; one run at a time.",
                            severity="warning", timeout=5)
            return
        if finished(report):
            self.notify(f"Run {run_name} is finished; nothing to resume.", timeout=3)
            return
        controller.resume(run_name)
