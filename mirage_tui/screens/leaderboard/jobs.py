"""The Leaderboard's long work (:class:`LeaderboardJobs`): judging an arena (``j``) and
computing the surrogate's features (``u``), one at a time through its own
:class:`~mirage_tui.jobs.JobController`, with one progress bar and status line, and ``x`` to
cancel either (in the footer only while a job runs; a hidden ``x`` says that nothing is
running). A cancelled job stops after its step (a battle, a response); what it stored is kept
and the next ``j`` or ``u`` resumes from there; leaving the screen cancels it the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget
from textual.widgets import ProgressBar

from mirage_tui.commands import PaletteCommand
from mirage_tui.dialogs.judge_arena import JudgeArenaScreen
from mirage_tui.jobs import MIN_INTERVAL, JobController
from mirage_tui.screens.features import store_of
from mirage_tui.screens.leaderboard.board import judged_line, judging_line
from mirage_tui.screens.leaderboard.data import compute_surrogate_features

if TYPE_CHECKING:
    from engine.store.runs import RunInfo

JUDGE, FEATURES = "judge", "features"


def features_line(event) -> str:
    """The status line while the surrogate's features are computed."""
    return (f"Computing the model-free features of {event.name}: {event.done}/{event.total} "
            f"{event.unit} ({event.cached} stored already) · x cancels")


def features_done_line(summary) -> str:
    """What a features pass did (``engine.arena.surrogate.features.stored.FeatureSummary``)."""
    what = "cancelled" if summary.cancelled else "done"
    return (f"Surrogate features of {summary.run}: {what}, {summary.computed} responses "
            f"computed now, {summary.skipped} stored already, of {summary.responses}"
            + ("; u computes the rest" if summary.cancelled else ""))


class LeaderboardJobs(Widget):
    """Judging and features (module docstring): its job controller, the kind of job running
    and the progress bar are its own; the screen hands it the run and the arena with each
    key, shows its :class:`Status` lines and reads the arenas again on :class:`Done`. Seen of
    it: the progress bar, while a job runs."""

    KEYS: ClassVar[list[Binding]] = [
        Binding("j", "judge", "Judge"),
        Binding("x", "cancel_job", "Cancel"),
        Binding("x", "cancel_job_why", "Cancel", show=False),     # says that nothing runs
        Binding("u", "surrogate_features", "Features"),
    ]
    """Its keys; the screen binds them, so that they act wherever the focus is."""

    PALETTE: ClassVar[tuple[PaletteCommand, ...]] = (
        PaletteCommand("leaderboard: cancel", "Stop judging or the surrogate's features (x)",
                       "cancel_job"),
    )
    """Its palette command beside the screen's (judging and the features have theirs there,
    where they are listed)."""

    DEFAULT_CSS = "LeaderboardJobs { height: auto; display: none; }"

    @dataclass
    class Status(Message):
        """The screen's status line says ``line`` (a job started, went on or failed)."""
        line: str

    @dataclass
    class Done(Message):
        """A job ended: the screen reads the arenas again (``arena``: the one judged, shown
        next; None after the features)."""
        arena: str | None = None

    def __init__(self) -> None:
        super().__init__()
        self.controller = JobController(self, group="lb-job")
        self.job_kind: str | None = None

    def compose(self) -> ComposeResult:
        yield ProgressBar(id="lb-progress", show_eta=False)

    @property
    def running(self) -> bool:
        return self.controller.running

    def _launch(self, kind: str, name: str, work, status: str) -> bool:
        if not self.controller.launch(name, work):
            return False
        self.job_kind = kind
        self.query_one("#lb-progress", ProgressBar).update(total=None, progress=0)
        self.display = True
        self.post_message(self.Status(status))
        self.refresh_bindings()
        return True

    # ------------------------------------------------------------------ judging

    def judge(self, run: RunInfo | None) -> None:
        """``j``: the judge dialog for ``run`` (as the screen looked it up), then judging its
        arena."""
        if self.controller.running:
            self.notify(f"{self._job_what()} is running; x cancels it.", timeout=3)
            return
        if run is None:
            self.notify("No run to judge yet.", timeout=3)
            return

        def chosen(answer: tuple[str, int, str] | None) -> None:
            if answer is None or store_of(self) is None:
                return
            judge_name, queries, order = answer

            def work(store, progress, cancel):
                from engine.arena.judging.job import judge_arena

                return judge_arena(store, run, judge_name, pairs="all", queries=queries,
                                   order=order, progress=progress, cancel=cancel,
                                   min_interval=MIN_INTERVAL)

            self._launch(JUDGE, run.name, work,
                         f"Judging {run.name} with {judge_name} on {queries} queries"
                         + (f", {order} orders" if order != "random" else "")
                         + "… (x cancels)")

        self.app.push_screen(JudgeArenaScreen(run), chosen)

    # ------------------------------------------------------------------ surrogate features

    def surrogate_features(self, run: RunInfo | None, arena: str | None) -> None:
        """``u``: the model-free features of ``run``'s ``arena``."""
        if store_of(self) is None or run is None or arena is None:
            self.notify("No arena to compute the surrogate for.", timeout=3)
            return
        if self.controller.running:
            self.notify(f"{self._job_what()} is running; x cancels it.", timeout=3)
            return

        def work(store, progress, cancel):
            return compute_surrogate_features(store, run, arena, progress=progress,
                                              cancel=cancel)

        self._launch(FEATURES, run.name, work,
                     "Computing the model-free features (language, citations, ROUGE-L, "
                     "BLEU)… (x cancels)")

    # ------------------------------------------------------------------ the job's messages

    @on(JobController.Progress)
    def _job_progress(self, message: JobController.Progress) -> None:
        message.stop()
        self.controller.progress_handled()
        p = self.controller.latest
        if p is None or not self.controller.running:
            return
        self.query_one("#lb-progress", ProgressBar).update(total=p.total or None,
                                                           progress=p.done)
        line = judging_line(p) if self.job_kind == JUDGE else features_line(p)
        if self.controller.cancelling:
            line = f"{line.removesuffix(' · x cancels')} · cancelling after this step…"
        self.post_message(self.Status(line))

    @on(JobController.Failed)
    def _job_failed(self, message: JobController.Failed) -> None:
        message.stop()
        what = "Judging" if self.job_kind == JUDGE else "The features"
        self._job_ended()
        self.post_message(self.Status(f"{what} failed: {message.error}"))
        self.app.notify(message.error, title=f"{what} failed", severity="error",
                        markup=False, timeout=15)

    @on(JobController.Finished)
    def _job_done(self, message: JobController.Finished) -> None:
        message.stop()
        kind = self.job_kind
        self._job_ended()
        s = message.summary
        if kind == JUDGE:
            self.app.notify(judged_line(s), title="Judging", markup=False, timeout=10,
                            severity="information" if s.status == "done" else "warning")
            self.post_message(self.Done(s.arena))
        else:
            self.app.notify(features_done_line(s), title="Surrogate", markup=False,
                            timeout=6, severity="warning" if s.cancelled else "information")
            self.post_message(self.Done())

    def _job_ended(self) -> None:
        self.display = False
        self.job_kind = None
        self.refresh_bindings()

    # ------------------------------------------------------------------ cancel

    def cancel(self) -> None:
        """``x``: stop the job after its step, or say that nothing runs."""
        self.controller.cancel_key("Nothing is being judged or computed.",
                             "Judging stops after the current battle and resumes from the "
                             "cache." if self.job_kind == JUDGE else
                             "The features stop after the current response; u computes the "
                             "rest.")

    def _job_what(self) -> str:
        return "Judging" if self.job_kind == JUDGE else "Computing the features"

    def on_unmount(self) -> None:
        self.controller.cancel_quietly()      # the job stops after its step, stays resumable
