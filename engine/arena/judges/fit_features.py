"""What a fitted judge reads of a pair (:mod:`engine.arena.judges.fitted`): each feature's
difference ``f(B) - f(A)`` between the two answers shown.

- ``cos:EMBEDDER`` (``cos:minilm-l6-v2``, ``cos:e5-small-q4``), ``f1``, ``char3``: each answer's
  similarity to the reference answer, as the reference judges compute it
  (:meth:`engine.arena.judges.reference.ReferenceJudge.similarities`; vectors cached in the
  store);
- ``length``: log(1 + words);
- ``judge:LLM``: that judge's P(B) - P(A) averaged over both orders, both calls through the
  judgments cache; a feature of the pair, not of each answer.

:meth:`FeatureSet.rows` takes the pairs through :mod:`engine.inflight` (the judge's
concurrency, a query's pairs one after another, transient failures retried, a stalled call cut
by the watchdog) with progress as :class:`~engine.jobs.JobEvent` s (kind ``fit``) and a
cancel that cuts the judge's calls in flight (``generator.abort()``): the verdicts judged so
far stay cached, so the same fit again asks only the rest.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from functools import partial
from typing import Sequence

from engine.arena.judges.cache import cached_verdict
from engine.arena.judges.llm import open_llm_judge
from engine.arena.judges.orders import shown_score
from engine.arena.types import ArenaError
from engine.arena.judges.reference import PREFIX as REFERENCE_PREFIX, ReferenceJudge
from engine.arena.judges.registry import feature_judge
from engine.inflight import Policy, Request, default_concurrency, in_flight, watchdog_for
from engine.jobs import CANCELLED, JobEvent, Progress, Stop, eta
from engine.store import Store
from engine.suggest import did_you_mean
from models.judges import Verdict

PREFIX = "fitted:"
DEFAULT_FEATURES = ("cos:minilm-l6-v2", "f1", "char3", "length")
BLEND_FEATURES = ("f1", "cos:minilm-l6-v2", "cos:e5-small-q4")     # reference:blend's
FEATURES = {"cos:minilm-l6-v2": "cosine of MiniLM-L6 embeddings with the reference",
            "cos:e5-small-q4": "cosine of e5-small embeddings with the reference",
            "f1": "token F1 with the reference",
            "char3": "character 3-gram recall of the reference",
            "length": "log(1 + words)",
            "judge:LLM": "the LLM's P(B) - P(A), averaged over both orders (--judge LLM)"}
DEFAULT_LLM_TEMPLATE = "ragqa_arena_pairwise"


class FitError(ArenaError):
    """Labels or features a judge cannot be fitted on (one line)."""


_SKLEARN_WORDS = (
    ("only one class", "a cross-validation fold's training pairs all prefer one side; label "
                       "more pairs that prefer the other answer"),
    ("0 feature(s)", "no feature to fit on"),
    ("0 sample(s)", "no pair to fit on"),
    ("NaN", "a feature is not a number on some pair (NaN)"),
    ("infinity", "a feature is infinite on some pair"),
)


def sklearn_checked(fit):
    """``fit(x, y)`` with scikit-learn's refusals (its ValueErrors, several lines naming its
    own classes) as one-line :class:`FitError` s in the terms of a fit."""
    @functools.wraps(fit)
    def checked(x, y):
        try:
            return fit(x, y)
        except ValueError as exc:
            text = str(exc)
            words = next((w for key, w in _SKLEARN_WORDS if key in text), None)
            first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
            raise FitError("cannot fit the judge: " + (words or f"scikit-learn says: {first}")
                           ) from None
    return checked


def parse_features(text: str | None, judge: str | None = None,
                   default: Sequence[str] = DEFAULT_FEATURES) -> list[str]:
    """Feature names from ``--features`` (comma-separated; else ``default``), with
    ``judge:LLM`` added for ``--judge LLM``; FitError names an unknown one."""
    if text is None:
        text = ",".join(default)
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise FitError(f"--features {text!r} names no feature; give one or more of "
                       f"{', '.join(FEATURES)} (comma-separated), or leave --features out for "
                       f"the defaults ({', '.join(default)})")
    if judge and f"judge:{judge}" not in names:
        names.append(f"judge:{judge}")
    known = [n for n in FEATURES if n != "judge:LLM"]
    for n in names:
        if n.startswith("judge:"):
            spec = n[len("judge:"):].strip()
            if not spec or not feature_judge(spec):
                raise FitError(f"feature {n!r}: judge:LLM takes an LLM judge (a catalog name, "
                               "GGUF path or endpoint); reference similarities are features "
                               f"of their own ({', '.join(known)})")
        elif n not in FEATURES and not (n.startswith("cos:") and len(n) > 4):
            raise FitError(f"unknown feature {n!r}{did_you_mean(n, known)} (features: "
                           f"{', '.join(known)}, judge:LLM)")
    if len(set(names)) != len(names):
        raise FitError(f"feature named twice in {','.join(names)!r}")
    return names


def needs_reference(name: str) -> bool:
    return name.startswith("cos:") or name in ("f1", "char3")


class FeatureSet:
    """Computes ``f(B) - f(A)`` of each feature for one shown pair."""

    def __init__(self, names: Sequence[str], store: Store | None, *,
                 template: str = DEFAULT_LLM_TEMPLATE, n_threads: int | None = None,
                 llms: dict | None = None):
        self.names = list(names)
        self.store = store
        self.template, self.n_threads = template, n_threads
        self._similarity = {n: ReferenceJudge(REFERENCE_PREFIX + n.removeprefix("cos:"), store)
                            for n in self.names if needs_reference(n)}
        self._llms = dict(llms or {})       # judge feature -> an open PairwiseJudge
        self.calls = self.cached = 0        # the LLM features' verdicts: asked, from the cache
        self._counts = threading.Lock()

    @property
    def needs_reference(self) -> bool:
        return bool(self._similarity)

    def similarity_keys(self) -> dict[str, str]:
        """Each similarity feature's judge identity key (the embedder's, for a cosine)."""
        return {n: j.generator.identity.key() for n, j in self._similarity.items()}

    def prepare(self, texts) -> None:
        texts = list(dict.fromkeys(t for t in texts if t))
        for judge in self._similarity.values():
            judge.prepare(texts)

    def differences(self, query: str, answer_a: str, answer_b: str,
                    references: Sequence[str]) -> list[float]:
        out = []
        for n in self.names:
            if n in self._similarity:
                s_a, s_b = self._similarity[n].similarities([answer_a, answer_b], references)
                out.append(s_b - s_a)
            elif n == "length":
                out.append(math.log1p(len(answer_b.split())) - math.log1p(len(answer_a.split())))
            else:
                out.append(self._judge_difference(n, query, answer_a, answer_b, references))
        return out

    def rows(self, pairs, *, name: str, progress: Progress | None = None,
             cancel=None, min_interval: float = 0.2) -> list[list[float]]:
        """:meth:`differences` of each pair (``query``, ``answer_a``, ``answer_b``,
        ``references``), in order, through :mod:`engine.inflight` (module docstring). A pair
        whose judge failed is a FitError naming it; a cancel (``cancel`` set) a
        ``Stop('cancelled')`` once the calls in flight are cut; ``name`` is the fit's."""
        pairs = list(pairs)
        judges = [self._llm(n) for n in self.names if n.startswith("judge:")]
        generators = [j.generator for j in judges]
        lead = generators[0] if generators else None
        policy = Policy(concurrency=default_concurrency(lead) if lead is not None else 1,
                        watchdog=watchdog_for(lead) if lead is not None else None)
        aborts = [a for a in (getattr(g, "abort", None) for g in generators) if a is not None]
        started, last = time.perf_counter(), [0.0]
        done: list[list[float]] = []

        def emit(force: bool = False, status: str = "running") -> None:
            moment = time.perf_counter()
            if progress is None or (not force and moment - last[0] < min_interval):
                return
            last[0] = moment
            progress(JobEvent(
                "fit", name, status, len(done), len(pairs), unit="pairs", cached=self.cached,
                new=self.calls, rate=self.calls / max(moment - started, 1e-9),
                rate_unit="calls/s", eta_seconds=eta(len(done), len(pairs),
                                                     moment - started, self.calls),
                working_on=(f"{self.calls} judge call(s), {self.cached} cached"
                            if judges else None)))

        requests = (Request(i, partial(self.differences, p.query, p.answer_a, p.answer_b,
                                       p.references), group=p.query)
                    for i, p in enumerate(pairs))
        emit(force=True)
        for outcome in in_flight(requests, name=name, policy=policy, cancel=cancel,
                                 tick=emit, abort=(lambda: [a() for a in aborts]) if aborts
                                 else None):
            if isinstance(outcome.error, FitError):
                raise outcome.error
            if not outcome.ok:
                raise FitError(f"pair {pairs[outcome.key].key!r}: {outcome.message} (the "
                               "verdicts so far are cached: the same fit again asks only "
                               "the rest)")
            done.append(outcome.value)
            emit()
        if len(done) < len(pairs):              # cancelled: the calls out were cut
            emit(force=True, status="cancelled")
            raise Stop("cancelled", CANCELLED)
        emit(force=True, status="done")
        return done

    def _llm(self, name: str):
        if name not in self._llms:
            spec = name[len("judge:"):]
            try:
                self._llms[name] = open_llm_judge(spec, self.template, self.n_threads)
            except ArenaError as exc:
                raise FitError(f"feature {name!r}: {exc}") from None
        return self._llms[name]

    def _judge_difference(self, name, query, answer_a, answer_b, references) -> float:
        """The LLM's P(B) - P(A) of this pair, averaged over both orders (cached calls)."""
        if self.store is None:
            raise FitError(f"feature {name!r} reads the judgments cache: it needs a workspace")
        judge = self._llm(name)
        sections = {s.field for s in judge.template.sections}
        reference = "\n".join(references) or None if "reference" in sections else None
        documents = [] if "documents" in sections else None
        total = 0.0
        for sign, (x, y) in ((1, (answer_a, answer_b)), (-1, (answer_b, answer_a))):
            fields = judge.fields(query, x, y, documents=documents, reference=reference)
            stored = cached_verdict(self.store, judge, fields)
            with self._counts:
                self.cached += stored.cached
                self.calls += not stored.cached
            total += sign * shown_difference(stored.verdict)
        return total / 2


def shown_difference(verdict: Verdict) -> float:
    """P(B) - P(A) of one verdict in the order shown; the label's side (±1, tie 0) when it gave
    no probabilities."""
    score = shown_score(verdict)
    return score if score is not None else {"A": -1.0, "B": 1.0}.get(verdict.label, 0.0)
