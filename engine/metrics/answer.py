"""Per-generation answer metrics: MIRAGE, BERGEN mRAG and MIRAGE-Bench heuristics.

Each metric is a small pure function; :func:`score_generation` runs them all on one generation
and returns :class:`Score` rows (metric, value, detail) whose detail says *why* (the gold that
matched, the 3-gram counts, the detected language). Definitions: ``METRICS.md``; every
deliberate difference from a reference implementation is stated in the metric's docstring.

Here: the answer-match metrics (MIRAGE EM / F1, BERGEN match / EM / F1 / char3 recall) and
:func:`score_generation`. Beside it: :mod:`engine.metrics.language` (correct language),
:mod:`engine.metrics.no_answer` (declining) and :mod:`engine.metrics.response_format`
(citations, the Reason / Answer headings).

Golds that are empty (MIRAGE) or empty after normalisation (BERGEN, e.g. the gold "The") are
ignored everywhere: both reference codes would count the empty string as contained in every
prediction, which makes any answer right.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, NamedTuple

from engine.metrics.language import DEFAULT_LANGUAGE_METRIC, LANGUAGE_METRICS, language_scores
from engine.metrics.no_answer import decline_reason
from engine.metrics.response_format import parse_citations, split_reason_answer, strip_citations

SCORER_VERSION = "answer-2"
"""Changes whenever a metric of :func:`score_generation` changes its values (here or in the
modules it calls): stored scores carry it in their key. ``answer-2`` added the correct-language
variants (:data:`LANGUAGE_VARIANTS`); items scored by ``answer-1`` are rescored (from the stored
generation, nothing regenerated) when their run resumes."""


@dataclass(frozen=True)
class Score:
    """One metric's value for one generation, with the reason: ``value`` is None when the metric
    does not apply (no gold answer, response too short to detect its language)."""

    metric: str
    value: float | None
    detail: str = ""


def _golds(answers: Iterable[str] | str | None) -> list[str]:
    if answers is None:
        return []
    if isinstance(answers, str):
        answers = [answers]
    return [str(a) for a in answers if a is not None and str(a).strip()]


# ------------------------------------------------------------------------------------ MIRAGE

def _em_loose_gold(prediction: str | None, answers: Iterable[str] | str) -> str | None:
    pred = (prediction or "").strip().lower()
    return next((g for g in _golds(answers) if g.lower() in pred), None)


def em_loose(prediction: str | None, answers: Iterable[str] | str) -> float:
    """EM_loose (MIRAGE, Park et al., §1; the label behind NV/CA/CI/CM): 1.0 when any gold
    answer, lowercased, is a substring of the lowercased, stripped prediction, else 0.0.

    Like the reference code there is no other normalisation (no punctuation or article
    stripping), so published numbers can be matched.

    Reference: MIRAGE ``LLM.py`` (``LLM_Evaluator``, the ``EM_label`` of each answer).
    Deviation: a gold that is empty is ignored (the reference counts "" as inside every
    prediction, which makes any answer right).
    """
    return 1.0 if _em_loose_gold(prediction, answers) is not None else 0.0


def em_strict(prediction: str | None, answers: Iterable[str] | str) -> float:
    """EM_strict (MIRAGE §1): 1.0 when any lowercased gold equals the lowercased, stripped
    prediction, else 0.0; no other normalisation, as in the reference code.

    Reference: MIRAGE ``LLM.py`` (``LLM_Evaluator``, strict exact match).
    Deviation: a gold that is empty is ignored.
    """
    pred = (prediction or "").strip().lower()
    return 1.0 if any(g.lower() == pred for g in _golds(answers)) else 0.0


class Overlap(NamedTuple):
    f1: float
    precision: float
    recall: float


def _mirage_overlap(prediction: str | None,
                    answers: Iterable[str] | str) -> tuple[Overlap, int, int, int]:
    predicted = set((prediction or "").lower().split())
    gold = {tok for g in _golds(answers) for tok in g.lower().split()}
    tp = len(predicted & gold)
    p = tp / len(predicted) if predicted else 0.0
    r = tp / len(gold) if gold else 0.0
    f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return Overlap(f1, p, r), tp, len(predicted), len(gold)


def mirage_f1(prediction: str | None, answers: Iterable[str] | str) -> float:
    """F1 as MIRAGE computes it (§1): set-based, not SQuAD's multiset F1. P is the set of
    whitespace tokens of the lowercased prediction, A the union of the tokens of *all* golds;
    TP = |P ∩ A|, precision TP/|P|, recall TP/|A|, F1 = 2PR/(P+R) or 0.

    Pooling the golds' tokens is the reference's choice (a prediction matching one of several
    golds loses recall); it is kept so published numbers can be matched.

    Reference: MIRAGE ``LLM.py`` (``LLM_Evaluator``, F1).
    Deviation: a gold that is empty is ignored.
    """
    return _mirage_overlap(prediction, answers)[0].f1


# ------------------------------------------------------------------------------------ BERGEN

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def bergen_normalize(text: str | None) -> str:
    """BERGEN's (and SQuAD's ``normalize_answer``) normalisation, in its order: lowercase,
    remove ASCII punctuation, remove the English articles a/an/the, collapse whitespace.

    Like the reference only ``string.punctuation`` is removed: "¿", "。" and "«" stay.
    """
    text = (text or "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _normalized_golds(answers: Iterable[str] | str) -> list[tuple[str, str]]:
    pairs = [(g, bergen_normalize(g)) for g in _golds(answers)]
    return [(g, n) for g, n in pairs if n]


def _bergen_match_gold(prediction: str | None, answers: Iterable[str] | str) -> str | None:
    pred = bergen_normalize(prediction)
    return next((g for g, n in _normalized_golds(answers) if n in pred), None)


def bergen_match(prediction: str | None, answers: Iterable[str] | str) -> float:
    """Match (BERGEN, Chirkova et al., mRAG §metrics): 1.0 when any normalised gold is a
    substring of the normalised prediction (:func:`bergen_normalize`), else 0.0.

    Reference: BERGEN ``modules/metrics.py`` (``match_score``, "M").
    Deviation: a gold that is empty after normalisation (e.g. "The") is ignored; the reference
    finds "" inside every prediction.
    """
    return 1.0 if _bergen_match_gold(prediction, answers) is not None else 0.0


def bergen_em(prediction: str | None, answers: Iterable[str] | str) -> float:
    """EM (BERGEN): 1.0 when the normalised prediction equals any normalised gold, else 0.0.

    Reference: BERGEN ``modules/metrics.py`` (``exact_match_score``, "EM").
    Deviation: a gold that is empty after normalisation is ignored.
    """
    pred = bergen_normalize(prediction)
    return 1.0 if any(n == pred for _, n in _normalized_golds(answers)) else 0.0


def _multiset_overlap(pred_tokens: list[str], gold_tokens: list[str]) -> tuple[Overlap, int]:
    same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if same == 0:
        return Overlap(0.0, 0.0, 0.0), 0
    p = same / len(pred_tokens)
    r = same / len(gold_tokens)
    return Overlap(2 * p * r / (p + r), p, r), same


def bergen_token_overlap(prediction: str | None, answers: Iterable[str] | str) -> Overlap:
    """Token F1, precision and recall (BERGEN): multiset overlap of the whitespace tokens of
    the normalised texts, each of the three maximised over golds separately, as the reference
    does (so precision and recall may come from different golds)."""
    pred = bergen_normalize(prediction).split()
    per_gold = [_multiset_overlap(pred, n.split())[0] for _, n in _normalized_golds(answers)]
    if not per_gold:
        return Overlap(0.0, 0.0, 0.0)
    return Overlap(*(max(values) for values in zip(*per_gold)))


def bergen_f1(prediction: str | None, answers: Iterable[str] | str) -> float:
    """Token F1 (BERGEN): SQuAD-style multiset F1 on normalised text, max over golds.

    Reference: BERGEN ``modules/metrics.py`` (``f1_score``, "F1"; precision and recall each
    maximised over golds separately, as there).
    Deviation: a gold that is empty after normalisation is ignored.
    """
    return bergen_token_overlap(prediction, answers).f1


def char3grams(normalized: str) -> list[str]:
    """BERGEN's character 3-grams of already-normalised text: each word of 3 or more
    characters contributes its 3-grams within the word; a shorter word counts whole."""
    grams: list[str] = []
    for word in normalized.split():
        if len(word) < 3:
            grams.append(word)
        else:
            grams.extend(word[i:i + 3] for i in range(len(word) - 2))
    return grams


def _char3_best(prediction: str | None,
                answers: Iterable[str] | str) -> tuple[float, int, int, str | None]:
    pred = char3grams(bergen_normalize(prediction))
    best: tuple[float, int, int, str | None] = (0.0, 0, 0, None)
    for gold, norm in _normalized_golds(answers):
        gold_grams = char3grams(norm)
        overlap, same = _multiset_overlap(pred, gold_grams)
        if best[3] is None or overlap.recall > best[0]:
            best = (overlap.recall, same, len(gold_grams), gold)
    return best


def char3_recall(prediction: str | None, answers: Iterable[str] | str) -> float:
    """Character 3-gram recall (BERGEN mRAG): on normalised text, |multiset overlap of the
    prediction's and the gold's :func:`char3grams`| / |gold 3-grams|, max over golds.

    Forgives transliteration variants: "sofia kovalevskaia" recalls 9 of the 13 3-grams of the
    gold "sofya kovalevskaya".

    Reference: BERGEN ``modules/metrics.py`` (``f1_score(..., ngrams)["recall"]``,
    "Recall_char3gram").
    Deviation: a gold that is empty after normalisation is ignored.
    """
    return _char3_best(prediction, answers)[0]


# ---------------------------------------------------------------------------- all at once

ANSWER_MATCH_METRICS = ("em_loose", "em_strict", "f1_mirage", "bergen_match", "bergen_em",
                        "bergen_f1", "char3_recall")
METRICS = (*ANSWER_MATCH_METRICS, DEFAULT_LANGUAGE_METRIC, "no_answer")
LANGUAGE_VARIANTS = tuple(m for m in LANGUAGE_METRICS if m != DEFAULT_LANGUAGE_METRIC)
"""The correct-language score under the other (detector, rule) pairs
(:data:`engine.metrics.language.LANGUAGE_METRICS`); stored after :data:`METRICS`, and a report
shows the one pair it was asked for as ``correct_language``."""
CITATION_METRIC = "citations"


def _answer_match_scores(text: str, answers: list[str]) -> list[Score]:
    gold = _em_loose_gold(text, answers)
    loose = Score("em_loose", 1.0 if gold is not None else 0.0,
                  f"gold {gold!r} is in the prediction" if gold is not None
                  else f"none of {len(answers)} golds is in the prediction")
    strict_value = em_strict(text, answers)
    strict = Score("em_strict", strict_value,
                   "prediction equals a gold" if strict_value else "prediction equals no gold")
    overlap, tp, n_pred, n_gold = _mirage_overlap(text, answers)
    f1 = Score("f1_mirage", overlap.f1,
               f"TP={tp} |P|={n_pred} |A|={n_gold} P={overlap.precision:.3f} "
               f"R={overlap.recall:.3f}")
    gold = _bergen_match_gold(text, answers)
    match = Score("bergen_match", 1.0 if gold is not None else 0.0,
                  f"normalised gold {bergen_normalize(gold)!r} is in the prediction"
                  if gold is not None else "no normalised gold is in the prediction")
    em_value = bergen_em(text, answers)
    em = Score("bergen_em", em_value,
               f"normalised prediction {bergen_normalize(text)[:60]!r} "
               + ("equals a normalised gold" if em_value else "equals no normalised gold"))
    tokens = bergen_token_overlap(text, answers)
    token_f1 = Score("bergen_f1", tokens.f1,
                     f"P={tokens.precision:.3f} R={tokens.recall:.3f} (each max over golds)")
    recall, same, total, gold = _char3_best(text, answers)
    char3 = Score("char3_recall", recall,
                  f"{same}/{total} 3-grams of gold {gold!r}" if gold is not None
                  else "no gold with 3-grams after normalisation")
    return [loose, strict, f1, match, em, token_f1, char3]


def score_generation(prediction: str | None, answers: Iterable[str] | str | None,
                     language: str | None = None, cited: bool = False) -> list[Score]:
    """Every answer metric of one generation, in the order of :data:`METRICS`, then the
    correct-language variants (:data:`LANGUAGE_VARIANTS`: the mirage-tui rule judges the scored
    text, BERGEN's raw rule the response as generated, ``prediction``).

    ``answers`` are the golds ([] for long-form datasets: the answer-match metrics are then
    None); ``language`` the user's language for ``correct_language``. With ``cited=True`` (a
    MIRAGE-Bench-style ``##Reason: … ##Answer: …`` response) every metric is scored on the
    answer part with its citations removed, and a ``citations`` score is added (value = how many
    distinct passages the answer cites, detail = their numbers as a JSON list).
    """
    text = prediction or ""
    citations: list[int] = []
    if cited:
        _, answer_part = split_reason_answer(text)
        citations = parse_citations(answer_part)
        text = strip_citations(answer_part)
    golds = _golds(answers)
    if golds:
        scores = _answer_match_scores(text, golds)
    else:
        scores = [Score(name, None, "no gold answer") for name in ANSWER_MATCH_METRICS]
    languages = {m: Score(m, value, why)
                 for m, value, why in language_scores(text, prediction, language)}
    scores.append(languages.pop(DEFAULT_LANGUAGE_METRIC))
    reason = decline_reason(text)
    scores.append(Score("no_answer", 1.0 if reason else 0.0, reason or "answers"))
    scores += [languages[m] for m in LANGUAGE_VARIANTS]
    if cited:
        scores.append(Score(CITATION_METRIC, float(len(citations)), json.dumps(citations)))
    return scores
