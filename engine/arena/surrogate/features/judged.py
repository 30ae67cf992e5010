"""The judged features (MIRAGE-Bench, Thakur et al.; docs/METRICS.md §2), each read from a
local judge model's label probabilities when it gives them, else from its parsed reply:
citation support (P("yes") that a cited passage supports a reasoning sentence), query–passage
relevance (or a cross-encoder's score), and 1–5 grades of answer overlap and fluency.

Every judge call goes through :func:`engine.arena.judges.cache.cached_verdict`, so it is made once
and an interrupted computation resumes from the cache. A grade the judge's reply does not give
(a failed parse) is NULL with the reply in the detail, never 0. The responses are judged
through :mod:`engine.inflight` (:meth:`JudgedScorer.each`), as arena judging is: up to the
judge's concurrency at once, transient failures retried with backoff, a stalled call cut by the
watchdog, the results back in the responses' order.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterable, Iterator, Mapping

from engine.arena.surrogate.features.responses import Response
from engine.arena.surrogate.features.specs import FEATURE_BY_KEY, FeatureValue
from engine.arena.surrogate.features.text import cited_contexts, split_sentences
from engine.arena.judges.cache import cached_verdict
from engine.inflight import Policy, Request, default_concurrency, in_flight, watchdog_for
from engine.jobs import Stop
from engine.metrics.response_format import strip_citations
from engine.store import Store
from models.base import ContextOverflow, Generator
from models.judges import PointwiseJudge, Verdict
from models.rerankers import RELEVANCE_YES_NO, JudgeReranker


def yes_probability(verdict: Verdict) -> float | None:
    """P("yes") of a yes/no verdict: from the label probabilities when read from logits, else
    1.0 / 0.0 for a parsed yes / no; None when the reply could not be parsed."""
    if verdict.parse_failed or verdict.label is None:
        return None
    if verdict.probs:
        return float(verdict.probs.get("yes", 0.0))
    return 1.0 if verdict.label == "yes" else 0.0


def grade_value(verdict: Verdict) -> float | None:
    """A 1–5 grade: the expected grade when read from logits, else the parsed grade; None for a
    failed parse (missing, never 0)."""
    if verdict.parse_failed or verdict.label is None:
        return None
    expected = verdict.expected
    return float(expected) if expected is not None else float(verdict.label)


@dataclass
class _Counters:
    calls: int = 0
    cached: int = 0
    parse_failures: int = 0


class JudgedScorer:
    """The judged features of one judge model (and a reranker), every call cached."""

    def __init__(self, store: Store, generator: Generator, reranker=None):
        self.store = store
        self.generator = generator
        self.judge_scorer = f"judge:{generator.name}"
        self.support_judge = PointwiseJudge(generator, "support_yes_no")
        self.overlap_judge = PointwiseJudge(generator, "answer_overlap_grade")
        self.fluency_judge = PointwiseJudge(generator, "fluency_grade")
        if reranker is None or isinstance(reranker, JudgeReranker):
            # A judge reranker goes through the judgments cache: the same template and the
            # same yes/(yes+no) reading as JudgeReranker.score_one.
            gen = generator if reranker is None else reranker.generator
            template = RELEVANCE_YES_NO if reranker is None else reranker.template
            self.relevance_judge = PointwiseJudge(gen, template)
            self.reranker = None
            self.reranker_name = f"judge:{gen.name}"
        else:
            self.relevance_judge = None
            self.reranker = reranker
            self.reranker_name = reranker.name
        self.counters = _Counters()
        self.stopped: str | None = None      # why the last :meth:`each` ended early
        self.lock = threading.Lock()         # the counters, from in_flight's worker threads
        self.policy = Policy(concurrency=default_concurrency(generator),
                             watchdog=watchdog_for(generator))

    def names(self) -> dict[str, str]:
        return {"support": FEATURE_BY_KEY["support"].name(self.judge_scorer),
                "reranker": FEATURE_BY_KEY["reranker"].name(self.reranker_name),
                "overlap": FEATURE_BY_KEY["overlap"].name(self.judge_scorer),
                "fluency": FEATURE_BY_KEY["fluency"].name(self.judge_scorer)}

    def _verdict(self, judge: PointwiseJudge, fields: Mapping[str, str]) -> Verdict:
        stored = cached_verdict(self.store, judge, fields)
        with self.lock:
            if stored.cached:
                self.counters.cached += 1
            else:
                self.counters.calls += 1
            if stored.verdict.parse_failed:
                self.counters.parse_failures += 1
        return stored.verdict

    def support(self, r: Response) -> FeatureValue:
        name = self.names()["support"]
        per_sentence, pairs, failed = [], 0, 0
        for sentence in split_sentences(r.parts.reason):
            cited, _ = cited_contexts(sentence, len(r.context))
            claim = strip_citations(sentence).strip()
            if not cited or not claim:
                continue
            probs = []
            for i in dict.fromkeys(cited):
                pairs += 1
                p = yes_probability(self._verdict(
                    self.support_judge, {"passage": r.passages[r.context[i]], "sentence": claim}))
                if p is None:
                    failed += 1
                else:
                    probs.append(p)
            if probs:
                per_sentence.append(sum(probs) / len(probs))
        detail = json.dumps({"sentences": len(per_sentence), "pairs": pairs,
                             "parse_failures": failed})
        if not per_sentence:
            why = "no reasoning sentence cites a context" if not pairs else "every reply unparsed"
            return FeatureValue(name, None, f"{why}: {detail}")
        return FeatureValue(name, sum(per_sentence) / len(per_sentence), detail)

    def relevance(self, r: Response) -> FeatureValue:
        name = self.names()["reranker"]
        cited, _ = cited_contexts(r.text, len(r.context))
        chunks = list(dict.fromkeys(r.context[i] for i in cited))
        if not chunks:
            return FeatureValue(name, None, "cites no context")
        texts = [r.passages[c] for c in chunks]
        if self.reranker is not None:
            scores = [float(s) for s in self.reranker.score(r.query, texts)]
        else:
            scores = [yes_probability(self._verdict(
                self.relevance_judge, {"query": r.query, "passage": t})) for t in texts]
        kept = [s for s in scores if s is not None]
        detail = json.dumps({"passages": len(texts), "parse_failures": len(scores) - len(kept)})
        if not kept:
            return FeatureValue(name, None, f"every reply unparsed: {detail}")
        return FeatureValue(name, sum(kept) / len(kept), detail)

    def _grade(self, name: str, judge: PointwiseJudge, fields: dict) -> FeatureValue:
        verdict = self._verdict(judge, fields)
        value = grade_value(verdict)
        if value is None:
            return FeatureValue(name, None, f"parse failed: {(verdict.raw or '')[:200]!r}")
        return FeatureValue(name, value, f"{verdict.method}: label {verdict.label}")

    def overlap(self, r: Response) -> FeatureValue:
        name = self.names()["overlap"]
        if r.reference is None:
            return FeatureValue(name, None, "no reference answer")
        answer = strip_citations(r.parts.answer).strip()
        return self._grade(name, self.overlap_judge,
                           {"query": r.query, "reference": r.reference, "answer": answer})

    def fluency(self, r: Response) -> FeatureValue:
        answer = strip_citations(r.parts.answer).strip()
        return self._grade(self.names()["fluency"], self.fluency_judge,
                           {"query": r.query, "answer": answer})

    def compute(self, r: Response, wanted: set[str]) -> list[FeatureValue]:
        """The judged features named in ``wanted``; a prompt too long for the judge stores
        NULL (it would overflow again); any other model error is raised (for
        :meth:`each` to retry or count)."""
        out = []
        for key, fn in (("support", self.support), ("reranker", self.relevance),
                        ("overlap", self.overlap), ("fluency", self.fluency)):
            name = self.names()[key]
            if name not in wanted:
                continue
            try:
                out.append(fn(r))
            except ContextOverflow as exc:
                out.append(FeatureValue(name, None, f"judge context overflow: {exc}"))
        return out

    def each(self, responses: Iterable[Response], wanted: Callable[[Response], set[str]],
             cancel=None) -> Iterator[tuple[Response, list[FeatureValue], list[str]]]:
        """``(response, judged features, errors)`` for each response, in order, computed
        through :func:`engine.inflight.in_flight` (module docstring). A response whose judge
        failed (its retries spent, or a model error that is no overflow) gets no judged
        features and its error: the verdicts judged before are cached, so the next pass asks
        only what failed. A cancel sends no new request; a judge that cannot answer at all,
        or failures beyond the error budget, end the responses here (``stopped`` says why)."""
        requests = (Request(r, partial(self.compute, r, wanted(r)), group=r.query_rowid)
                    for r in responses)
        self.stopped = None
        try:
            for outcome in in_flight(requests, name=self.judge_scorer, policy=self.policy,
                                     cancel=cancel,
                                     abort=getattr(self.generator, "abort", None)):
                r = outcome.key
                if outcome.ok:
                    yield r, outcome.value, []
                else:
                    yield r, [], [f"{self.judge_scorer} q{r.query_rowid}: {outcome.message}"]
        except Stop as stop:
            self.stopped = f"{self.judge_scorer}: {stop.message or stop.status}"
