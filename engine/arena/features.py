"""MIRAGE-Bench's heuristic features, per response (Thakur et al.; docs/METRICS.md §2).

Every run item with a generation is a *response*; its features are stored in ``scores`` (keyed
by the generation and the query, like every answer metric) under names that say what produced
them, all prefixed ``feat:`` (see :data:`FEATURES`):

- ``feat:lang_target@langid``, ``feat:lang_en@langid``: langid's probability that the answer
  (citations removed) is in the query's language, and in English.
- ``feat:citation_recall@10``, ``feat:citation_map@10``: the passages a response cites, in
  order of first appearance, form a ranked run scored against the relevant passages shown.
- ``feat:support@judge:<name>``: a local judge's P("yes") that a cited passage supports a
  reasoning sentence (stands in for the paper's mDeBERTa NLI entailment probability).
- ``feat:reranker@<scorer>``: mean query–cited-passage relevance (``judge:<name>`` when a judge
  model stands in for a cross-encoder, ``cross-encoder:<folder>`` when one is given).
- ``feat:rouge_l``, ``feat:bleu``: ROUGE-L F and smoothed sentence BLEU against the reference.
- ``feat:overlap@judge:<name>``, ``feat:fluency@judge:<name>``: judged 1–5 grades.

Reading a response. A MIRAGE-Bench response is ``##Reason: … ##Answer: …``
(:func:`engine.metrics.response_format.split_reason_answer`): reasoning sentences come from the Reason
part and the answer from the Answer part. A response without an Answer heading is all answer
(its Reason part, or the whole text); one without a Reason part gives its reasoning sentences
from the whole text. Citations ``[n]`` are read from the whole response and name the n-th
context of the item's prompt (``run_items.context``: chunk rowids in prompt order); numbers
that name no context are dropped (the detail counts them).

Reference answer (ROUGE-L, BLEU, judged overlap): the query's ``reference_answer`` when it has
one, else its first gold short answer; with neither those features are NULL.

Judge calls go through :func:`engine.arena.judgments.cached_verdict`, so they are cached and an
interrupted computation resumes; features already stored for a response are not recomputed,
and each response's features are written in one transaction. A grade the judge's reply does
not give (a failed parse) is stored as NULL with the reply in the detail, never as 0.
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
import warnings
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from engine.arena.judgments import cached_verdict
from engine.arena.types import arena_system
from engine.metrics.language import language_probability, primary_language
from engine.metrics.response_format import parse_citations, split_reason_answer, strip_citations
from engine.results.records import load_items, load_run
from engine.stats import Estimate, bootstrap_ci
from engine.store import Store
from models.base import ContextOverflow, Generator, ModelError
from models.judges import PointwiseJudge, Verdict
from models.rerankers import RELEVANCE_YES_NO, JudgeReranker

PREFIX = "feat:"
CITATION_DEPTH = 10

Progress = Callable[[int, "int | None", str], None]


@dataclass(frozen=True)
class FeatureSpec:
    """One heuristic feature: ``metric`` is its stored name, ``{scorer}`` filled in for judged
    features (``judge:<name>``, or the reranker's name)."""

    key: str
    metric: str
    description: str
    judged: bool = False

    def name(self, scorer: str | None = None) -> str:
        if self.judged and scorer is None:
            raise ValueError(f"feature {self.key} needs the name of its judge or scorer")
        return self.metric.format(scorer=scorer) if self.judged else self.metric


FEATURES: list[FeatureSpec] = [
    FeatureSpec("lang_target", "feat:lang_target@langid",
                "langid probability that the answer (citations removed) is in the query's "
                "language"),
    FeatureSpec("lang_en", "feat:lang_en@langid",
                "langid probability that the answer (citations removed) is in English"),
    FeatureSpec("citation_recall", f"feat:citation_recall@{CITATION_DEPTH}",
                "cited passages (order of first citation) as a ranked run: Recall@10 against "
                "the relevant passages shown in the prompt"),
    FeatureSpec("citation_map", f"feat:citation_map@{CITATION_DEPTH}",
                "the same run's MAP@10 (average precision, divided by the relevant passages "
                "shown)"),
    FeatureSpec("rouge_l", "feat:rouge_l",
                "ROUGE-L F (rouge-score) of the answer against the reference answer"),
    FeatureSpec("bleu", "feat:bleu",
                "sentence BLEU-4 (nltk, smoothing method 1) of the answer against the "
                "reference answer"),
    FeatureSpec("support", "feat:support@{scorer}",
                "judge's P(yes) that a cited passage supports a reasoning sentence, averaged "
                "over a sentence's cited passages, then over sentences", judged=True),
    FeatureSpec("reranker", "feat:reranker@{scorer}",
                "mean query–cited-passage relevance from a reranker (a judge model's P(yes) "
                "when no cross-encoder is installed)", judged=True),
    FeatureSpec("overlap", "feat:overlap@{scorer}",
                "judged 1–5 agreement of the answer with the reference answer (expected grade "
                "from label probabilities when read from logits)", judged=True),
    FeatureSpec("fluency", "feat:fluency@{scorer}",
                "judged 1–5 fluency of the answer", judged=True),
]
FEATURE_BY_KEY = {f.key: f for f in FEATURES}
MODEL_FREE = [f for f in FEATURES if not f.judged]
JUDGED = [f for f in FEATURES if f.judged]


# ------------------------------------------------------------------------------ pure parts

@dataclass(frozen=True)
class ResponseParts:
    reason: str        # where the reasoning sentences come from
    answer: str        # what is judged as the answer (citations still in)


def response_parts(text: str | None) -> ResponseParts:
    """Reason and answer of a response (module docstring: "Reading a response")."""
    text = (text or "").strip()
    reason, answer = split_reason_answer(text)
    if not answer.strip():
        answer = reason or text
    return ResponseParts(reason or text, answer)


_CITATION_RUN = re.compile(r"^(?:\s*\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\])+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?।؟])\s+|(?<=[。！？])|\s*\n+\s*")


def split_sentences(text: str | None) -> list[str]:
    """Sentences of ``text``: split after ``. ! ? । ؟`` followed by whitespace, after ``。！？``
    and at line breaks. Citations written after the full stop (``… Paris. [1] Next``) stay with
    the sentence they follow."""
    out: list[str] = []
    for part in _SENTENCE_BREAK.split(text or ""):
        part = part.strip()
        if not part:
            continue
        lead = _CITATION_RUN.match(part)
        if lead and out:
            out[-1] = f"{out[-1]} {lead.group(0).strip()}"
            part = part[lead.end():].strip()
            if not part:
                continue
        out.append(part)
    return out


def cited_contexts(text: str | None, n_contexts: int) -> tuple[list[int], int]:
    """The 0-based context indices ``text`` cites, in order of first citation, and how many
    cited numbers name no context (``[0]``, ``[7]`` with five contexts)."""
    numbers = parse_citations(text)
    valid = [n - 1 for n in numbers if 1 <= n <= n_contexts]
    return valid, len(numbers) - len(valid)


def citation_recall(run: Sequence, relevant: Iterable, k: int = CITATION_DEPTH) -> float | None:
    """Recall@k of a ranked run (MIRAGE-Bench citation quality): relevant items in the top k /
    all relevant items; None when there is no relevant item."""
    relevant = set(relevant)
    if not relevant:
        return None
    return len(relevant & set(list(run)[:k])) / len(relevant)


def citation_map(run: Sequence, relevant: Iterable, k: int = CITATION_DEPTH) -> float | None:
    """Average precision at k of a ranked run (MAP@k for one query, as trec_eval's
    ``map_cut_k``): the sum of precision@i at each relevant rank i <= k, divided by the number
    of relevant items (not by the relevant items retrieved). None when there is none."""
    relevant = set(relevant)
    if not relevant:
        return None
    hits, total, seen = 0, 0.0, set()
    for i, item in enumerate(list(run)[:k], start=1):
        if item in relevant and item not in seen:
            hits += 1
            total += hits / i
        seen.add(item)
    return total / len(relevant)


_NO_SPACE_SCRIPT = ("\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff"
                    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af")
_OVERLAP_TOKEN = re.compile(rf"[{_NO_SPACE_SCRIPT}]|[^\W{_NO_SPACE_SCRIPT}]+")


def overlap_tokens(text: str | None) -> list[str]:
    """Tokens for ROUGE-L and BLEU: NFKC, case-folded runs of word characters, and each
    character of scripts written without spaces (Chinese, Japanese, Korean, Thai, ...).

    A deliberate difference from rouge-score's default tokenizer, which keeps only ``[a-z0-9]``
    and so scores every answer in a non-Latin script 0; no stemming.
    """
    return _OVERLAP_TOKEN.findall(unicodedata.normalize("NFKC", text or "").casefold())


class _Tokenizer:
    def tokenize(self, text: str) -> list[str]:
        return overlap_tokens(text)


_ROUGE = None


def rouge_l(prediction: str | None, reference: str | None) -> float:
    """ROUGE-L F-measure (rouge-score's longest-common-subsequence F) on :func:`overlap_tokens`;
    0.0 when either side has no tokens."""
    global _ROUGE
    if _ROUGE is None:
        from rouge_score import rouge_scorer
        _ROUGE = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Tokenizer())
    return float(_ROUGE.score(reference or "", prediction or "")["rougeL"].fmeasure)


def bleu(prediction: str | None, reference: str | None) -> float:
    """Sentence BLEU-4 (uniform weights, brevity penalty) with Chen & Cherry's smoothing
    method 1 (nltk ``SmoothingFunction().method1``: epsilon 0.1 for zero n-gram counts), on
    :func:`overlap_tokens`. 0.0 when either side has no tokens. A short answer that matches a
    short reference exactly still scores well below 1 (no 2- to 4-grams to match)."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    hyp, ref = overlap_tokens(prediction), overlap_tokens(reference)
    if not hyp or not ref:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(sentence_bleu([ref], hyp, smoothing_function=SmoothingFunction().method1))


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


# ------------------------------------------------------------------------------ responses

@dataclass
class Response:
    """One (generation, query) with everything its features need."""

    generation_key: str
    query_rowid: int
    text: str
    query: str
    language: str | None
    reference: str | None
    reference_kind: str | None          # 'reference_answer' | 'gold_answer'
    context: list[int]                  # chunk rowids in prompt order
    passages: dict[int, str]            # chunk rowid -> text
    relevant: set[int]                  # supporting chunk rowids among the context

    @property
    def parts(self) -> ResponseParts:
        return response_parts(self.text)


def _reference(reference_answer: str | None, answers: str | None) -> tuple[str | None, str | None]:
    if reference_answer and reference_answer.strip():
        return reference_answer, "reference_answer"
    try:
        golds = json.loads(answers or "[]")
    except json.JSONDecodeError:
        golds = []
    if isinstance(golds, str):
        golds = [golds]
    first = next((str(g) for g in golds if g is not None and str(g).strip()), None)
    return (first, "gold_answer") if first is not None else (None, None)


def _parts_of(values: Sequence, size: int = 500):
    values = list(values)
    for start in range(0, len(values), size):
        yield values[start:start + size]


def _load_responses(store: Store, keys: list[tuple[str, int, list[int]]]) -> list[Response]:
    gen_keys = sorted({k for k, _, _ in keys})
    queries = sorted({q for _, q, _ in keys})
    chunks = sorted({c for _, _, ctx in keys for c in ctx})
    texts, facts, passages, relevant = {}, {}, {}, {}
    for part in _parts_of(gen_keys):
        for r in store.query(f"SELECT key, text FROM generations WHERE key IN "
                             f"({','.join('?' * len(part))})", tuple(part)):
            texts[r[0]] = r[1]
    for part in _parts_of(queries):
        marks = ",".join("?" * len(part))
        for r in store.query(f"SELECT id, text, language, answers, reference_answer FROM queries "
                             f"WHERE id IN ({marks})", tuple(part)):
            facts[r["id"]] = r
        for r in store.query(f"SELECT query_rowid, chunk_rowid FROM pool WHERE support = 1 AND "
                             f"query_rowid IN ({marks})", tuple(part)):
            relevant.setdefault(r[0], set()).add(r[1])
    for part in _parts_of(chunks):
        for r in store.query(f"SELECT id, text FROM chunks WHERE id IN "
                             f"({','.join('?' * len(part))})", tuple(part)):
            passages[r[0]] = r[1]
    out = []
    for key, q, ctx in keys:
        f = facts[q]
        reference, kind = _reference(f["reference_answer"], f["answers"])
        out.append(Response(key, q, texts.get(key, ""), f["text"], f["language"], reference,
                            kind, list(ctx), {c: passages.get(c, "") for c in ctx},
                            relevant.get(q, set()) & set(ctx)))
    return out


# ------------------------------------------------------------------------------ scorers

@dataclass
class FeatureValue:
    metric: str
    value: float | None
    detail: str


def model_free_features(r: Response) -> list[FeatureValue]:
    """The features that need no model: language, citations, ROUGE-L, BLEU."""
    parts = r.parts
    answer = strip_citations(parts.answer).strip()
    out = []
    target = primary_language(r.language)
    if target is None:
        out.append(FeatureValue(FEATURE_BY_KEY["lang_target"].name(), None,
                                "no target language: the query has none"))
    else:
        out.append(FeatureValue(FEATURE_BY_KEY["lang_target"].name(),
                                language_probability(answer, target), f"target {target}"))
    out.append(FeatureValue(FEATURE_BY_KEY["lang_en"].name(),
                            language_probability(answer, "en"), "target en"))

    recall_name = FEATURE_BY_KEY["citation_recall"].name()
    map_name = FEATURE_BY_KEY["citation_map"].name()
    if not r.context:
        why = "no contexts in the prompt"
        out += [FeatureValue(recall_name, None, why), FeatureValue(map_name, None, why)]
    else:
        cited, invalid = cited_contexts(r.text, len(r.context))
        run = list(dict.fromkeys(r.context[i] for i in cited))
        detail = json.dumps({"cited": [i + 1 for i in cited], "invalid": invalid,
                             "relevant": sorted(r.context.index(c) + 1 for c in r.relevant)})
        if not r.relevant:
            detail = "no relevant passage among the contexts shown: " + detail
        out += [FeatureValue(recall_name, citation_recall(run, r.relevant), detail),
                FeatureValue(map_name, citation_map(run, r.relevant), detail)]

    for key, fn in (("rouge_l", rouge_l), ("bleu", bleu)):
        name = FEATURE_BY_KEY[key].name()
        if r.reference is None:
            out.append(FeatureValue(name, None, "no reference answer"))
        else:
            out.append(FeatureValue(name, fn(answer, r.reference), f"against {r.reference_kind}"))
    return out


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

    def names(self) -> dict[str, str]:
        return {"support": FEATURE_BY_KEY["support"].name(self.judge_scorer),
                "reranker": FEATURE_BY_KEY["reranker"].name(self.reranker_name),
                "overlap": FEATURE_BY_KEY["overlap"].name(self.judge_scorer),
                "fluency": FEATURE_BY_KEY["fluency"].name(self.judge_scorer)}

    def _verdict(self, judge: PointwiseJudge, fields: Mapping[str, str]) -> Verdict:
        stored = cached_verdict(self.store, judge, fields)
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

    def compute(self, r: Response, wanted: set[str]) -> tuple[list[FeatureValue], list[str]]:
        """The judged features named in ``wanted``; a prompt too long for the judge stores
        NULL (it would overflow again), any other model error stores nothing (retried later)."""
        out, errors = [], []
        for key, fn in (("support", self.support), ("reranker", self.relevance),
                        ("overlap", self.overlap), ("fluency", self.fluency)):
            name = self.names()[key]
            if name not in wanted:
                continue
            try:
                out.append(fn(r))
            except ContextOverflow as exc:
                out.append(FeatureValue(name, None, f"judge context overflow: {exc}"))
            except ModelError as exc:
                errors.append(f"{name} q{r.query_rowid}: {exc}")
        return out, errors


# ------------------------------------------------------------------------------ the pass

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


def _cancelled(cancel) -> bool:
    if cancel is None:
        return False
    is_set = getattr(cancel, "is_set", None)
    return bool(is_set() if is_set is not None else cancel())


def _in_scope(system: str, setting: str, systems) -> bool:
    return systems is None or system in systems or arena_system(system, setting) in systems


def _load_judge(judge, n_threads: int | None) -> Generator:
    if isinstance(judge, str):
        from models.catalog import load_generator
        return load_generator(judge, **({"n_threads": n_threads} if n_threads else {}))
    return judge


def compute_features(store: Store, run_name: str, *, judge: str | Generator | None = None,
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
    checked between responses; ``progress(done, total, what)`` is called after each.
    """
    started = time.perf_counter()
    run = load_run(store, run_name)
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
    summary = FeatureSummary(run_name, len(seen), features=wanted,
                             judge=scorer.judge_scorer if scorer else None,
                             reranker=scorer.reranker_name if scorer else None)

    stored: dict[tuple[str, int], set[str]] = {}
    for r in store.query(
            "SELECT DISTINCT s.generation_key, s.query_rowid, s.metric FROM run_items ri "
            "JOIN scores s ON s.generation_key = ri.generation_key AND "
            "s.query_rowid = ri.query_rowid WHERE ri.run_id = ? AND s.metric LIKE 'feat:%'",
            (run.id,)):
        stored.setdefault((r[0], r[1]), set()).add(r[2])
    todo = [(k, q, ctx) for (k, q), ctx in seen.items()
            if not set(wanted) <= stored.get((k, q), set())]
    summary.skipped = len(seen) - len(todo)
    done = summary.skipped
    if progress:
        progress(done, len(seen), f"features: {summary.skipped} responses already scored")

    for batch in _parts_of(todo, 50):
        for response in _load_responses(store, batch):
            if _cancelled(cancel):
                summary.cancelled = True
                break
            missing = set(wanted) - stored.get((response.generation_key,
                                                 response.query_rowid), set())
            values = [v for v in model_free_features(response) if v.metric in missing]
            if scorer is not None:
                judged, errors = scorer.compute(response, missing)
                values += judged
                summary.errors += errors
            if values:
                with store.write() as db:
                    db.conn.executemany(
                        "INSERT OR REPLACE INTO scores (generation_key, query_rowid, metric, "
                        "value, detail) VALUES (?, ?, ?, ?, ?)",
                        [(response.generation_key, response.query_rowid, v.metric, v.value,
                          v.detail) for v in values])
                summary.computed += 1
                summary.features_written += len(values)
            done += 1
            if progress:
                progress(done, len(seen), "features")
        if summary.cancelled:
            break
    if scorer is not None:
        summary.judge_calls = scorer.counters.calls
        summary.judge_cached = scorer.counters.cached
        summary.parse_failures = scorer.counters.parse_failures
    summary.seconds = time.perf_counter() - started
    return summary


# ------------------------------------------------------------------------------ per system

def feature_values(store: Store, run_name: str, features: Iterable[str] | None = None, *,
                   queries: Iterable[int] | None = None
                   ) -> dict[str, dict[str, list[float | None]]]:
    """Each contestant's (``system | setting``) stored values of each feature, one per response
    (NULLs kept as None); only ``queries`` when given."""
    run = load_run(store, run_name)
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


def system_features(store: Store, run_name: str, features: Iterable[str] | None = None, *,
                    queries: Iterable[int] | None = None, n_boot: int = 1000,
                    seed: int = 0) -> dict[str, dict[str, Estimate]]:
    """Mean of each feature per contestant (``system | setting``, as the arena names them),
    with its 95% percentile-bootstrap CI over responses and n (NULL values left out of n).
    ``features``: stored metric names (default every ``feat:`` metric)."""
    values = feature_values(store, run_name, features, queries=queries)
    return {system: {metric: bootstrap_ci(vals, n_boot=n_boot, seed=seed)
                     for metric, vals in sorted(per.items())}
            for system, per in sorted(values.items())}
