"""What a fitted judge reads of a pair (:mod:`engine.arena.fitted_judges`): each feature's
difference ``f(B) - f(A)`` between the two answers shown.

- ``cos:EMBEDDER`` (``cos:minilm-l6-v2``, ``cos:e5-small-q4``), ``f1``, ``char3``: each answer's
  similarity to the reference answer, as the reference judges compute it
  (:meth:`engine.arena.reference_judges.ReferenceJudge.similarities`; vectors cached in the
  store);
- ``length``: log(1 + words);
- ``judge:LLM``: that judge's P(B) - P(A) averaged over both orders, both calls through the
  judgments cache; a feature of the pair, not of each answer.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

from engine.arena.judgments import cached_verdict
from engine.arena.llm_judges import open_llm_judge
from engine.arena.orders import shown_score
from engine.arena.planning import ArenaError
from engine.arena.reference_judges import PREFIX as REFERENCE_PREFIX, ReferenceJudge
from engine.store import Store
from engine.suggest import did_you_mean
from models.judges import Verdict

PREFIX = "fitted:"
DEFAULT_FEATURES = ("cos:minilm-l6-v2", "f1", "char3", "length")
BLEND_FEATURES = ("f1", "cos:minilm-l6-v2", "cos:e5-small-q4")     # reference:blend's (issue 34)
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
            if not spec or spec.startswith((REFERENCE_PREFIX, PREFIX)):
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
            total += sign * shown_difference(cached_verdict(self.store, judge, fields).verdict)
        return total / 2


def shown_difference(verdict: Verdict) -> float:
    """P(B) - P(A) of one verdict in the order shown; the label's side (±1, tie 0) when it gave
    no probabilities."""
    score = shown_score(verdict)
    return score if score is not None else {"A": -1.0, "B": 1.0}.get(verdict.label, 0.0)
