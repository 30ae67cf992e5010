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
from engine.jobs import JobEvent, Progress, is_cancelled
from engine.results.records import load_items
from engine.store.runs import RunInfo
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
    started = time.perf_counter()
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
    wanted = [f.name() for f in MODEL_FREE] + (list(scorer.names().values()) if scorer else [])
    summary = FeatureSummary(run.name, len(seen), features=wanted,
                             judge=scorer.judge_scorer if scorer else None,
                             reranker=scorer.reranker_name if scorer else None)

    stored: dict[tuple[str, int], set[str]] = {}
    for r in stored_feature_rows(store, run.id):
        stored.setdefault((r[0], r[1]), set()).add(r[2])
    todo = [(k, q, ctx) for (k, q), ctx in seen.items()
            if not set(wanted) <= stored.get((k, q), set())]
    summary.skipped = len(seen) - len(todo)
    done = summary.skipped
    if progress:
        progress(_event(summary, "running", done,
                        f"features: {summary.skipped} responses already scored"))

    def missing(response) -> set[str]:
        return set(wanted) - stored.get((response.generation_key, response.query_rowid), set())

    for batch in batched(todo, 50):
        responses = load_responses(store, batch)
        for response, judged, errors in (
                scorer.each(responses, missing, cancel) if scorer is not None
                else ((r, [], []) for r in responses)):
            if is_cancelled(cancel):
                summary.cancelled = True
                break
            values = [v for v in model_free_features(response)
                      if v.metric in missing(response)] + judged
            summary.errors += errors
            if values:
                save_features(store, [(response.generation_key, response.query_rowid,
                                        v.metric, v.value, v.detail) for v in values])
                summary.computed += 1
                summary.features_written += len(values)
            done += 1
            if progress:
                progress(_event(summary, "running", done, "features"))
        if scorer is not None and scorer.stopped:
            summary.errors.append(scorer.stopped)
        if summary.cancelled or (scorer is not None and scorer.stopped):
            break
    if scorer is not None:
        summary.judge_calls = scorer.counters.calls
        summary.judge_cached = scorer.counters.cached
        summary.parse_failures = scorer.counters.parse_failures
    summary.seconds = time.perf_counter() - started
    if progress:
        progress(_event(summary, "cancelled" if summary.cancelled else "done", done, "features"))
    return summary


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
