"""The Leaderboard's long work: judging an arena (``j``) and computing the surrogate's
features (``u``), one at a time through the screen's :class:`~mirage_tui.jobs.JobController`
(``self.jobs``), with one progress bar and status line, and ``x`` to cancel either (in the
footer only while a job runs; a hidden ``x`` says that nothing is running). A cancelled job
stops after its step (a battle, a response); what it stored is kept and the next ``j`` or
``u`` resumes from there.

Mixed into :class:`mirage_tui.screens.leaderboard.screen.LeaderboardScreen` (what it uses of
the screen: :class:`LeaderboardJobsHost`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual.binding import Binding
from textual.widgets import ProgressBar, Static

from mirage_tui.commands import PaletteCommand
from mirage_tui.dialogs.judge_arena import JudgeArenaScreen
from mirage_tui.jobs import MIN_INTERVAL, JobController
from mirage_tui.screens.hosts import ScreenHost
from mirage_tui.screens.leaderboard.board import judged_line, judging_line
from mirage_tui.screens.leaderboard.data import compute_surrogate_features

JUDGE, FEATURES = "judge", "features"

BINDINGS = [
    Binding("x", "cancel_job", "Cancel"),
    Binding("x", "cancel_job_why", "Cancel", show=False),     # says that nothing runs
]
PALETTE = (
    PaletteCommand("leaderboard: cancel", "Stop judging or the surrogate's features (x)",
                   "cancel_job"),
)


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


class LeaderboardJobsHost(ScreenHost, Protocol):
    """What :class:`LeaderboardJobs` uses of its host beyond a screen's own (``ScreenHost``)."""

    run_name: str | None
    arena: str | None = None

    def action_refresh(self) -> None: ...


if TYPE_CHECKING:
    _Host = LeaderboardJobsHost
else:
    _Host = object


class LeaderboardJobs(_Host):
    """Judging and features (what it uses of the screen: :class:`LeaderboardJobsHost`; its
    job controller and the kind of job running are its own)."""

    def start_jobs(self) -> None:
        self.jobs = JobController(self, group="lb-job")
        self.job_kind: str | None = None

    def _launch(self, kind: str, name: str, work, status: str) -> bool:
        if not self.jobs.launch(name, work):
            return False
        self.job_kind = kind
        bar = self.query_one("#lb-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        self.query_one("#lb-status", Static).update(status)
        self.refresh_bindings()
        return True

    # ------------------------------------------------------------------ judging

    def action_judge(self) -> None:
        if self.jobs.running:
            self.notify(f"{self._job_what()} is running; x cancels it.", timeout=3)
            return
        if self.run_name is None:
            self.notify("No run to judge yet.", timeout=3)
            return
        run = self.run_name

        def chosen(answer: tuple[str, int, str] | None) -> None:
            if answer is None or self.store is None:
                return
            judge_name, queries, order = answer

            def work(store, progress, cancel):
                from engine.arena.judging.job import judge_arena
                from engine.runs.lookup import load_run

                return judge_arena(store, load_run(store, run), judge_name, pairs="all",
                                   queries=queries,
                                   order=order, progress=progress, cancel=cancel,
                                   min_interval=MIN_INTERVAL)

            self._launch(JUDGE, run, work,
                         f"Judging {run} with {judge_name} on {queries} queries"
                         + (f", {order} orders" if order != "random" else "")
                         + "… (x cancels)")

        self.app.push_screen(JudgeArenaScreen(run), chosen)

    # ------------------------------------------------------------------ surrogate features

    def action_surrogate_features(self) -> None:
        store = self.store
        if store is None or self.run_name is None or self.arena is None:
            self.notify("No arena to compute the surrogate for.", timeout=3)
            return
        if self.jobs.running:
            self.notify(f"{self._job_what()} is running; x cancels it.", timeout=3)
            return
        run, arena = self.run_name, self.arena

        def work(store, progress, cancel):
            return compute_surrogate_features(store, run, arena, progress=progress,
                                              cancel=cancel)

        self._launch(FEATURES, run, work,
                     "Computing the model-free features (language, citations, ROUGE-L, "
                     "BLEU)… (x cancels)")

    # ------------------------------------------------------------------ the job's messages
    # (the screen's @on handlers call these: Textual collects @on from the screen's own class)

    def job_progress(self, message: JobController.Progress) -> None:
        self.jobs.progress_handled()
        p = self.jobs.latest
        if p is None or not self.jobs.running:
            return
        bar = self.query_one("#lb-progress", ProgressBar)
        bar.update(total=p.total or None, progress=p.done)
        line = judging_line(p) if self.job_kind == JUDGE else features_line(p)
        if self.jobs.cancelling:
            line = f"{line.removesuffix(' · x cancels')} · cancelling after this step…"
        self.query_one("#lb-status", Static).update(line)

    def job_failed(self, message: JobController.Failed) -> None:
        what = "Judging" if self.job_kind == JUDGE else "The features"
        self._job_ended()
        self.query_one("#lb-status", Static).update(f"{what} failed: {message.error}")
        self.app.notify(message.error, title=f"{what} failed", severity="error",
                        markup=False, timeout=15)

    def job_done(self, message: JobController.Finished) -> None:
        kind = self.job_kind
        self._job_ended()
        s = message.summary
        if kind == JUDGE:
            self.app.notify(judged_line(s), title="Judging", markup=False, timeout=10,
                            severity="information" if s.status == "done" else "warning")
            self.arena = s.arena
        else:
            self.app.notify(features_done_line(s), title="Surrogate", markup=False,
                            timeout=6, severity="warning" if s.cancelled else "information")
        self.action_refresh()

    def _job_ended(self) -> None:
        self.query_one("#lb-progress").display = False
        self.job_kind = None
        self.refresh_bindings()

    # ------------------------------------------------------------------ cancel

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``x`` is in the footer only while a job runs."""
        return self.jobs.running if action == "cancel_job" else True

    def action_cancel_job(self) -> None:
        self.jobs.cancel_key("Nothing is being judged or computed.",
                             "Judging stops after the current battle and resumes from the "
                             "cache." if self.job_kind == JUDGE else
                             "The features stop after the current response; u computes the "
                             "rest.")

    def action_cancel_job_why(self) -> None:
        self.action_cancel_job()

    def _job_what(self) -> str:
        return "Judging" if self.job_kind == JUDGE else "Computing the features"
