"""Computing a run's features into the store, and reading them back per contestant.

Features are stored in ``scores`` (keyed by the generation and the query, like every answer
metric) under their ``feat:`` names (:data:`engine.arena.surrogate.features.specs.FEATURES`). Features
already stored for a response are not computed again, and each response's new features are
written in one transaction, so an interrupted pass resumes where it stopped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterable

from engine.arena.surrogate.features.judged import JudgedScorer
from engine.arena.surrogate.features.responses import load_responses
from engine.arena.surrogate.features.specs import MODEL_FREE, PREFIX
from engine.arena.surrogate.features.text import model_free_features
from engine.arena.types import arena_system
from engine.jobs import Job, JobEvent, Progress
from engine.results.records import load_items
from engine.runs.lookup import RunInfo
from engine.stats import Estimate, interval
from engine.store import Store, batched
from engine.store.features import save_features, stored_feature_rows
from models.base import Generator


@dataclass
class FeatureSummary:
    """What one :func:`compute_features` pass did."""

    run: str
    responses: int                   # responses in scope (distinct generation × query)
    computed: int = 0                # responses that got at least one new feature
    skipped: int = 0                 # responses that had every wanted feature already
    features_written: int = 0
    judge: str | None = None
    reranker: str | None = None
    features: list[str] = field(default_factory=list)
    judge_calls: int = 0             # judge calls made now
    judge_cached: int = 0            # judge calls answered from the cache
    parse_failures: int = 0          # judge replies that could not be parsed (cached ones too)
    errors: list[str] = field(default_factory=list)
    cancelled: bool = False
    seconds: float = 0.0

    def as_json(self) -> dict:
        return dict(self.__dict__)


def _in_scope(system: str, setting: str, systems) -> bool:
    return systems is None or system in systems or arena_system(system, setting) in systems


def _load_judge(judge, n_threads: int | None) -> Generator:
    if isinstance(judge, str):
        from models.catalog import load_generator
        return load_generator(judge, **({"n_threads": n_threads} if n_threads else {}))
    return judge


def compute_features(store: Store, run: RunInfo, *, judge: str | Generator | None = None,
                     systems: Iterable[str] | None = None,
                     queries: Iterable[int] | None = None, n_threads: int | None = None,
                     progress: Progress | None = None, cancel=None,
                     reranker=None) -> FeatureSummary:
    """Compute and store the heuristic features of a run's responses.

    ``judge=None`` computes the model-free features only (language, citations, ROUGE-L, BLEU);
    a judge (a catalog name, loaded with ``n_threads``, or a Generator) adds support, reranker,
    overlap and fluency. ``reranker``: a :class:`models.rerankers.CrossEncoderReranker` (or
    anything with ``name`` and ``score(query, passages)``) to use instead of the judge model.
    ``systems``: run system labels or arena contestants (``system | setting``); ``queries``:
    query rowids. Features already stored are skipped; ``cancel`` (an Event or a callable) is
    checked between responses; ``progress`` receives a :class:`~engine.jobs.JobEvent` (kind
    ``features``, responses done of those in scope, the ones already scored cached) after each,
    and the last one (done or cancelled) at the end.
    """
    systems = None if systems is None else set(systems)
    queries = None if queries is None else set(queries)
    seen: dict[tuple[str, int], list[int]] = {}
    for item in load_items(store, run, metrics=[]):
        if item.generation_key is None or not _in_scope(item.system, item.setting, systems):
            continue
        if queries is not None and item.query_rowid not in queries:
            continue
        seen.setdefault((item.generation_key, item.query_rowid), list(item.context or []))

    scorer = None
    if judge is not None or reranker is not None:
        if judge is None:
            raise ValueError("a reranker is given but no judge: the judged features need one")
        scorer = JudgedScorer(store, _load_judge(judge, n_threads), reranker)
    return _FeaturesPass(store, run, seen, scorer, progress, cancel).run()


class _FeaturesPass(Job):
    """One :func:`compute_features` pass as a :class:`~engine.jobs.Job`: the job's policy for
    a cancel (between responses; what is stored stays), a full disk and an error, and its
    events (every response's; the last one, done or cancelled, always)."""

    kind = "features pass"

    def __init__(self, store: Store, run: RunInfo, seen: dict, scorer, progress, cancel):
        super().__init__(progress, cancel, min_interval=0.0)
        self.store, self.scorer = store, scorer
        self.wanted = [f.name() for f in MODEL_FREE] + (
            list(scorer.names().values()) if scorer else [])
        self.fs = FeatureSummary(run.name, len(seen), features=self.wanted,
                                 judge=scorer.judge_scorer if scorer else None,
                                 reranker=scorer.reranker_name if scorer else None)
        self.stored: dict[tuple[str, int], set[str]] = {}
        for r in stored_feature_rows(store, run.id):
            self.stored.setdefault((r[0], r[1]), set()).add(r[2])
        self.todo = [(k, q, ctx) for (k, q), ctx in seen.items()
                     if not set(self.wanted) <= self.stored.get((k, q), set())]
        self.fs.skipped = len(seen) - len(self.todo)
        self.done = self.fs.skipped
        self.working_on = "features"

    def missing(self, response) -> set[str]:
        return set(self.wanted) - self.stored.get((response.generation_key,
                                                   response.query_rowid), set())

    def work(self) -> None:
        fs, scorer = self.fs, self.scorer
        self.working_on = f"features: {fs.skipped} responses already scored"
        self.emit(force=True)
        self.working_on = "features"
        for batch in batched(self.todo, 50):
            responses = load_responses(self.store, batch)
            for response, judged, errors in (
                    scorer.each(responses, self.missing, self.cancel) if scorer is not None
                    else ((r, [], []) for r in responses)):
                self.check_cancel()
                values = [v for v in model_free_features(response)
                          if v.metric in self.missing(response)] + judged
                fs.errors += errors
                if values:
                    save_features(self.store, [(response.generation_key, response.query_rowid,
                                                v.metric, v.value, v.detail) for v in values])
                    fs.computed += 1
                    fs.features_written += len(values)
                self.done += 1
                self.emit()
            if scorer is not None and scorer.stopped:
                fs.errors.append(scorer.stopped)
                return None
        return None

    def event(self, status: str, message: str | None) -> JobEvent:
        return _event(self.fs, status, self.done,
                      self.working_on if status == "running" else "features")

    def summary(self, status: str, message: str | None) -> FeatureSummary:
        fs = self.fs
        fs.cancelled = status == "cancelled"
        if status == "failed" and message:
            fs.errors.append(message)
        if self.scorer is not None:
            fs.judge_calls = self.scorer.counters.calls
            fs.judge_cached = self.scorer.counters.cached
            fs.parse_failures = self.scorer.counters.parse_failures
        fs.seconds = time.perf_counter() - self.started
        return fs


def _event(summary: FeatureSummary, status: str, done: int, what: str) -> JobEvent:
    """Where a :func:`compute_features` pass is, as a job's event."""
    return JobEvent("features", summary.run, status, done, summary.responses, unit="responses",
                    cached=summary.skipped, new=done - summary.skipped, working_on=what)


def feature_values(store: Store, run: RunInfo, features: Iterable[str] | None = None, *,
                   queries: Iterable[int] | None = None
                   ) -> dict[str, dict[str, list[float | None]]]:
    """Each contestant's (``system | setting``) stored values of each feature, one per response
    (NULLs kept as None); only ``queries`` when given."""
    queries = None if queries is None else set(queries)
    wanted = None if features is None else set(features)
    out: dict[str, dict[str, list[float | None]]] = {}
    for item in load_items(store, run):
        if item.generation_key is None or (queries is not None
                                           and item.query_rowid not in queries):
            continue
        for metric, value in item.scores.items():
            if not metric.startswith(PREFIX) or (wanted is not None and metric not in wanted):
                continue
            contestant = arena_system(item.system, item.setting)
            out.setdefault(contestant, {}).setdefault(metric, []).append(value)
    return out


def system_features(store: Store, run: RunInfo, features: Iterable[str] | None = None, *,
                    queries: Iterable[int] | None = None, n_boot: int = 1000,
                    seed: int = 0) -> dict[str, dict[str, Estimate]]:
    """Mean of each feature per contestant (``system | setting``, as the arena names them),
    with its 95% CI over responses (:func:`engine.stats.interval`: Clopper–Pearson floor for
    [0, 1] features such as citation recall, so all-zero features are not ``0 [0, 0]``) and n
    (NULL values left out of n).
    ``features``: stored metric names (default every ``feat:`` metric)."""
    values = feature_values(store, run, features, queries=queries)
    return {system: {metric: interval(None, vals, n_boot=n_boot, seed=seed)
                     for metric, vals in sorted(per.items())}
            for system, per in sorted(values.items())}
