"""The app's runs: start one through the run controller and follow it on Live run, the quick
comparison (``g``: its models looked for, then the run, then its arena judged), cancel (asked
first), resume (the shown or last stopped run; the next launch offers one stopped by quitting
or killed: resume, open, later, or never ask about it again), and the controller's messages
(started, progress, finished, failed) handed to Live run.

Mixed into :class:`mirage_tui.app.MirageApp`; what it uses of the app is
:class:`AppRunsHost`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from textual import work
from textual.message import Message

from mirage_tui.dialogs.run_questions import cancel_run_question, resume_question
from mirage_tui.quick_comparison import (QUICK_NAME, QuickJudging, missing_models,
                                         quick_comparison_config, quick_judged_text)
from mirage_tui.run_controller import RunController, resumable_runs
from mirage_tui.screens.hosts import NodeHost
from mirage_tui.widgets.estimates import duration

if TYPE_CHECKING:
    from textual.screen import Screen

    from engine.store import Store
    from mirage_tui.screens.live_run import LiveRunScreen


class AppRunsHost(NodeHost, Protocol):
    """What :class:`AppRuns` uses of the app (:class:`mirage_tui.app.MirageApp`) beyond a
    Textual node's own."""

    store: Store | None
    threads: int | None
    run_controller: RunController
    quick_judging: QuickJudging
    has_runs: bool = False
    quit_when_idle: bool = False
    QuickChecked: Callable[..., Message]

    @property
    def live_screen(self) -> LiveRunScreen | None: ...

    def go_to(self, mode: str) -> bool: ...

    async def show_mode(self, mode: str) -> Screen | None: ...

    def show_run(self, run_name: str) -> None: ...

    def push_screen(self, screen: Any, callback: Callable[[Any], object] | None = None) -> Any: ...

    def call_from_thread(self, callback: Callable[..., object], *args: Any,
                         **kwargs: Any) -> Any: ...

    def exit(self) -> None: ...


if TYPE_CHECKING:
    _Host = AppRunsHost
else:
    _Host = object


class AppRuns(_Host):
    """The app's one run at a time, seen from its keys and messages (module docstring; what it
    uses of the app: :class:`AppRunsHost`)."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "quick_comparison":
            return not self.has_runs   # in the footer until the first run exists
        return True

    def action_quick_run(self) -> None:
        self.action_quick_comparison()

    def start_run(self, config, *, force_new: bool = False, plan=None) -> bool:
        """Start ``config`` (``plan``: its plan, made already) through the run controller and
        follow it on Live run."""
        return self.run_controller.start(config, force_new=force_new, plan=plan)

    def action_quick_comparison(self) -> None:
        if self.store is None:
            self.notify("The workspace is still opening.", severity="warning")
            return
        if self.run_controller.running:
            self.notify("A run is going; the quick comparison waits until it ends.",
                        severity="warning")
            return
        self.check_quick_models()

    @work(thread=True, exclusive=True, exit_on_error=False, group="quick",
          name="check quick comparison models")
    def check_quick_models(self) -> None:
        self.post_message(self.QuickChecked(missing_models(quick_comparison_config())))

    def on_mirage_app_quick_checked(self, message: Message) -> None:
        if message.missing:
            self.notify("The quick comparison needs models that are not installed:\n"
                        + "\n".join(f"• {m}" for m in message.missing),
                        title="Quick comparison", severity="error", markup=False, timeout=30)
            return
        self.start_run(quick_comparison_config(self.threads))

    def action_cancel_run(self) -> None:
        controller = self.run_controller
        if not controller.running:
            self.notify("No run is going.", timeout=3)
            return
        if controller.cancelling:
            self.notify("Already stopping.", timeout=3)
            return

        def answered(answer: str | None) -> None:
            if answer == "stop":
                controller.cancel()
                self.notify(f"Stopping {controller.run_name} now. It is "
                            "resumable: r on Live run, u on Runs.", title="Cancel",
                            markup=False)

        self.push_screen(cancel_run_question(controller.run_name), answered)

    def action_resume_run(self, run_name: str = "") -> None:
        name = run_name or self.run_controller.run_name
        if not name:
            self.resume_last()
            return
        if self.run_controller.resume(name):
            self.go_to("live")

    @work(thread=True, exclusive=True, exit_on_error=False, group="resume",
          name="find a run to resume")
    def resume_last(self) -> None:
        store = self.store
        if store is None:
            return
        try:
            runs = resumable_runs(store)
        finally:
            store.close()
        if runs:
            self.call_from_thread(self.action_resume_run, runs[0]["name"])
        else:
            self.notify("No stopped run to resume.", timeout=3)

    def offer_resume(self, run: dict, stopped: int = 1) -> None:
        """The next launch after a run stopped by quitting (or killed) asks whether to
        continue it; "later" (or Escape) asks again at the next launch, "never" never does."""

        def answered(answer: str | None) -> None:
            if answer == "resume":
                self.action_resume_run(run["name"])
            elif answer == "open":
                self.show_run(run["name"])
            elif answer == "never":
                self.never_ask(run["name"])

        self.push_screen(resume_question(run, stopped), answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="never-ask",
          name="never ask about a run")
    def never_ask(self, run_name: str) -> None:
        from engine.runs.stops import never_ask

        store = self.store
        if store is None:
            return
        try:
            never_ask(store, run_name)
        finally:
            store.close()           # this thread's connection
        self.notify(f"Launches will not ask about {run_name} again; u on Runs resumes it.",
                    markup=False, timeout=5)

    async def on_run_controller_started(self, message: RunController.Started) -> None:
        self.has_runs = True
        self.refresh_bindings()
        # Live's own screen, whatever was opened over it (an Inspector started from Live)
        await self.show_mode("live")
        screen = self.live_screen
        if screen is not None:
            screen.show_run(message.run)

    def on_run_controller_progress(self, message: RunController.Progress) -> None:
        self.run_controller.progress_handled()
        screen = self.live_screen
        if screen is not None:
            screen.progress_changed()

    def on_run_controller_finished(self, message: RunController.Finished) -> None:
        s = message.summary
        if s.status == "done":
            self.notify(f"Run {s.run} is done: {s.done}/{s.total} items ({s.generated} "
                        f"generated, {s.cached} from the store, {s.errors} errors) in "
                        f"{duration(s.seconds)}.", title="Run finished", markup=False,
                        timeout=10)
        elif s.status == "cancelled":
            self.notify(f"Run {s.run} stopped at {s.done}/{s.total} items. It is resumable: "
                        "r on Live run.", title="Run cancelled", severity="warning",
                        markup=False, timeout=10)
        else:
            self.notify(f"Run {s.run} failed: {s.message}", title="Run failed",
                        severity="error", markup=False, timeout=20)
        if s.status == "done" and s.run == QUICK_NAME:
            self.judge_quick_comparison(s.run)
        self._run_ended()

    def judge_quick_comparison(self, run_name: str) -> None:
        """The quick comparison's arena, by the default judge (:class:`QuickJudging`)."""
        if self.quick_judging.judge(run_name):
            self.notify("Judging the quick comparison's arena; the Leaderboard shows its "
                        "ratings when it is done (the palette's \"quick comparison: stop "
                        "judging\" stops it; j on the Leaderboard resumes it).",
                        title="Quick comparison", markup=False, timeout=10)

    def action_stop_quick_judging(self) -> None:
        self.quick_judging.cancel_key(
            "The quick comparison's arena is not being judged.",
            "Stopping the quick comparison's judging after its battles in flight; j on the "
            "Leaderboard resumes it.")

    def on_quick_judging_progress(self, message: QuickJudging.Progress) -> None:
        self.quick_judging.progress_handled()

    def on_quick_judging_finished(self, message: QuickJudging.Finished) -> None:
        choice, summary = message.summary
        failed = summary is not None and summary.status == "failed"
        self.notify(quick_judged_text(choice, summary), title="Quick comparison",
                    severity="error" if failed else "information", markup=False, timeout=20)

    def on_quick_judging_failed(self, message: QuickJudging.Failed) -> None:
        self.notify(f"The quick comparison's arena was not judged: {message.error}",
                    title="Quick comparison", severity="error", markup=False, timeout=20)

    def on_run_controller_failed(self, message: RunController.Failed) -> None:
        self.notify(f"Run {message.run} did not start: {message.error}", title="Run failed",
                    severity="error", markup=False, timeout=20)
        self._run_ended()

    def _run_ended(self) -> None:
        screen = self.live_screen
        if screen is not None:
            screen.run_ended()
        if self.quit_when_idle:
            self.exit()
