"""The quick comparison (``g``): both packaged generators on a seeded sample of the demo pool,
with and without context and with MiniLM retrieval, so a first launch has numbers to look at
within minutes; once the run is done its arena is judged, pairwise, by the default judge
(:func:`engine.arena.trust.default_judge.default_judge`: on the demo pool, whose questions have short
gold answers, ``reference:answer-match``, the run's own EM_loose then F1) when that judge needs
no LLM, so the Leaderboard has ratings seconds later, says which judge made them and checks the
ranking against accuracy. Answers get New run's token budget (64); Live and the report count
the ones cut at it."""

from __future__ import annotations

from engine.datasets.demo_pool import DEMO_NAME
from engine.runs.config import DEFAULT_MAX_TOKENS
from mirage_tui.jobs import JobController

QUICK_NAME = "quick-comparison"
QUICK_GENERATORS = ("smollm2-135m-instruct", "gemma3-270m")
QUICK_RETRIEVER = "minilm-l6-v2"
QUICK_SAMPLE = 10
QUICK_MAX_TOKENS = DEFAULT_MAX_TOKENS      # New run's default: answers are not cut short


def quick_comparison_config(threads: int | None = None):
    """Both packaged generators on a seeded sample of the demo pool: base, oracle, mixed and
    MiniLM retrieval at 1, 3 and 5 (120 items; a few minutes on two CPU cores)."""
    from engine.runs import RunConfig

    return RunConfig(dataset=DEMO_NAME, generators=list(QUICK_GENERATORS),
                     settings=["base", "oracle", "mixed", "retrieved@1", "retrieved@3",
                               "retrieved@5"],
                     retrievers=[QUICK_RETRIEVER], sample=QUICK_SAMPLE, seed=0,
                     max_tokens=QUICK_MAX_TOKENS, threads=threads, name=QUICK_NAME)


def missing_models(config) -> list[str]:
    """What of ``config``'s models is not installed here, each with how to get it."""
    from engine.runs.plan import check_embedder, check_generator

    missing = []
    for name in config.generators:
        try:
            check_generator(name)
        except LookupError as exc:
            missing.append(str(exc))
    for name in config.retrievers:
        try:
            check_embedder(name)
        except LookupError as exc:
            missing.append(str(exc))
    return missing


def judge_quick_comparison(store, run_name: str = QUICK_NAME, progress=None, cancel=None):
    """``(choice, summary)``: the default judge of the run, and the arena it judged (None when
    the default judge is an LLM, minutes of judging: the Leaderboard's j offers it); a
    :class:`QuickJudging` job's work (``progress``, ``cancel`` as every engine job's)."""
    from engine.arena.judges.kinds import is_offline_judge
    from engine.arena.judging.job import judge_arena
    from engine.arena.trust.default_judge import default_judge
    from engine.runs.lookup import load_run

    run = load_run(store, run_name)
    choice = default_judge(store, run)
    if not is_offline_judge(choice.spec):
        return choice, None
    return choice, judge_arena(store, run, choice.spec, order=choice.order, progress=progress,
                               cancel=cancel)


def quick_judged_text(choice, summary) -> str:
    """What the app says once the quick comparison's arena is judged (or why it is not)."""
    from mirage_tui.durations import duration

    if summary is None:
        judge = choice.spec or "no judge"
        return (f"The quick comparison's arena is not judged automatically: its default judge "
                f"is {judge}: {choice.why}. j on the Leaderboard (4) judges it.")
    text = (f"Leaderboard: {summary.arena} of {summary.run}, {summary.status}, "
            f"{summary.done}/{summary.total} battles in {duration(summary.seconds)}, judged by "
            f"{choice.spec}: {choice.why}.")
    return text + (f" {summary.message}" if summary.message else "") + " 4 opens it."


class QuickJudging(JobController):
    """The quick comparison's arena, judged by its default judge once its run is done: a job
    like any other (progress in ``latest``, cancelled between battles and resumable by ``j`` on
    the Leaderboard, waited for when the app quits). Its messages are its own, so the app tells
    them from the run controller's."""

    NAME = "judge the quick comparison"

    class Started(JobController.Started):
        pass

    class Progress(JobController.Progress):
        pass

    class Finished(JobController.Finished):
        """``summary``: ``(choice, arena summary)`` of :func:`judge_quick_comparison`."""

    class Failed(JobController.Failed):
        pass

    def __init__(self, app) -> None:
        super().__init__(app, group="quick-judge")

    def judge(self, run_name: str = QUICK_NAME) -> bool:
        """Start judging ``run_name``'s arena (False when it cannot start now)."""
        return self.launch(self.NAME, lambda store, progress, cancel: judge_quick_comparison(
            store, run_name, progress=progress, cancel=cancel))
