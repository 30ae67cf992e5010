"""Per-generation answer metrics: MIRAGE, BERGEN mRAG and MIRAGE-Bench heuristics.

Each metric is a small pure function; :func:`score_generation` runs them all on one generation
and returns :class:`Score` rows (metric, value, detail) whose detail says *why* (the gold that
matched, the 3-gram counts, the detected language). Definitions: ``METRICS.md``; every
deliberate difference from a reference implementation is stated in the metric's docstring.

Golds that are empty (MIRAGE) or empty after normalisation (BERGEN, e.g. the gold "The") are
ignored everywhere: both reference codes would count the empty string as contained in every
prediction, which makes any answer right.
"""

from __future__ import annotations

import json
import re
import string
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, NamedTuple

SCORER_VERSION = "answer-1"
"""Changes whenever a metric below changes its values: stored scores carry it in their key."""


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
    """
    return 1.0 if _em_loose_gold(prediction, answers) is not None else 0.0


def em_strict(prediction: str | None, answers: Iterable[str] | str) -> float:
    """EM_strict (MIRAGE §1): 1.0 when any lowercased gold equals the lowercased, stripped
    prediction, else 0.0; no other normalisation, as in the reference code."""
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
    substring of the normalised prediction (:func:`bergen_normalize`), else 0.0."""
    return 1.0 if _bergen_match_gold(prediction, answers) is not None else 0.0


def bergen_em(prediction: str | None, answers: Iterable[str] | str) -> float:
    """EM (BERGEN): 1.0 when the normalised prediction equals any normalised gold, else 0.0."""
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
    """Token F1 (BERGEN): SQuAD-style multiset F1 on normalised text, max over golds."""
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
    """
    return _char3_best(prediction, answers)[0]


# ------------------------------------------------------------------------- citations, format

_CITATION = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
_CITATION_WITH_SPACE = re.compile(r"[ \t]*\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]")


def parse_citations(text: str | None) -> list[int]:
    """IEEE-style citations (MIRAGE-Bench, Thakur et al., §heuristic features: citation quality):
    ``[1]``, ``[1, 3]``, ``[2][4]``, as passage numbers in order of first appearance, each once.

    Any bracketed integer counts (a bracketed year would too); the caller drops numbers that
    name no passage it showed.
    """
    seen: dict[int, None] = {}
    for match in _CITATION.finditer(text or ""):
        for number in re.split(r"\s*[,;]\s*", match.group(1)):
            seen.setdefault(int(number), None)
    return list(seen)


def strip_citations(text: str | None) -> str:
    """The text with its ``[n]`` / ``[n, m]`` citations (and the spaces before them) removed."""
    return _CITATION_WITH_SPACE.sub("", text or "")


def _heading(word: str) -> str:
    bold = r"(?:\*\*|__)"
    colon = r"[:：]"
    return (rf"(?:#{{1,6}}[ \t]*{bold}?[ \t]*{word}\b[ \t]*{bold}?[ \t]*{colon}?"
            rf"|{bold}[ \t]*{word}\b[ \t]*{bold}?[ \t]*{colon}"
            rf"|^[ \t]*{word}[ \t]*{colon})[ \t]*{bold}?")


_REASON_WORD = r"reason(?:ing)?"
_ANSWER_WORD = r"(?:final[ \t]+)?answer"
_HEADINGS = re.compile(
    f"(?P<reason>{_heading(_REASON_WORD)})|(?P<answer>{_heading(_ANSWER_WORD)})",
    re.IGNORECASE | re.MULTILINE)


def _clean_part(text: str) -> str:
    return text.strip().strip("*").strip()


def split_reason_answer(text: str | None) -> tuple[str, str]:
    """Split MIRAGE-Bench's ``##Reason: … ##Answer: …`` response into (reason, answer).

    Tolerant of case, of markdown bold (``**Answer:**``), of headings without ``#`` at a line
    start (``Answer: …``) and of a missing Reason (the reason is then what precedes the answer).
    With no Answer heading: a response with a Reason heading has answer "" (it was cut short);
    one with neither is all answer.
    """
    text = text or ""
    headings = list(_HEADINGS.finditer(text))
    first = {kind: next((i for i, h in enumerate(headings) if h.group(kind)), None)
             for kind in ("reason", "answer")}

    def segment(i: int) -> str:
        end = headings[i + 1].start() if i + 1 < len(headings) else len(text)
        return _clean_part(text[headings[i].end():end])

    if first["answer"] is None:
        return (segment(first["reason"]), "") if first["reason"] is not None else ("", text.strip())
    answer = segment(first["answer"])
    if first["reason"] is not None:
        return segment(first["reason"]), answer
    return _clean_part(text[:headings[first["answer"]].start()]), answer


# ------------------------------------------------------------------------------- language

_IDENTIFIER = None
_IDENTIFIER_LOCK = threading.Lock()

# Codes that name the same language in a dataset and in langid's output.
_LANGUAGE_ALIASES = {"nb": "no", "nn": "no", "iw": "he", "in": "id", "ji": "yi", "fil": "tl"}

MIN_LANGUAGE_CHARS = 20
"""BERGEN judges the language only of responses longer than this many characters."""


def _identifier():
    """langid's identifier with normalised probabilities, built once (about 2 s) on first use.

    Classifying afterwards only reads the model, so one instance serves every thread.
    """
    global _IDENTIFIER
    if _IDENTIFIER is None:
        with _IDENTIFIER_LOCK:
            if _IDENTIFIER is None:
                from langid.langid import LanguageIdentifier, model
                _IDENTIFIER = LanguageIdentifier.from_modelstring(model, norm_probs=True)
    return _IDENTIFIER


def primary_language(code: str | None) -> str | None:
    """The primary subtag of a language code, lowercased (``zh-CN`` and ``zh_tw`` -> ``zh``)."""
    if not code or not code.strip():
        return None
    primary = re.split(r"[-_]", code.strip().lower(), maxsplit=1)[0]
    return _LANGUAGE_ALIASES.get(primary, primary)


def _has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def detect_language(text: str | None) -> tuple[str | None, float]:
    """The most likely language of ``text`` and its probability (langid, normalised
    probabilities), after removing ``[n]`` citations; ``(None, 0.0)`` for text without letters.

    MIRAGE-Bench's paper names langid; its reference code used langdetect. We use langid.
    """
    cleaned = strip_citations(text).strip()
    if not _has_letters(cleaned):
        return None, 0.0
    lang, prob = _identifier().classify(cleaned)
    return lang, float(prob)


def language_probability(text: str | None, language: str) -> float:
    """The probability langid gives that ``text`` (citations removed) is in ``language``
    (compared on the primary subtag); MIRAGE-Bench's language features use it for the target
    language and for English. 0.0 for text without letters."""
    cleaned = strip_citations(text).strip()
    target = primary_language(language)
    if not _has_letters(cleaned) or target is None:
        return 0.0
    return float(sum(p for lang, p in _identifier().rank(cleaned)
                     if primary_language(lang) == target))


def _language_verdict(prediction: str | None, language: str | None) -> tuple[float | None, str]:
    target = primary_language(language)
    if target is None:
        return None, "not judged: no target language"
    cleaned = strip_citations(prediction).strip()
    if len(cleaned) <= MIN_LANGUAGE_CHARS:
        return None, (f"not judged: {len(cleaned)} characters "
                      f"(only responses over {MIN_LANGUAGE_CHARS} count)")
    lang, prob = detect_language(cleaned)
    ok = lang is not None and primary_language(lang) == target
    return (1.0 if ok else 0.0), f"detected {lang} p={prob:.3f}, target {target}"


def correct_language(prediction: str | None, language: str | None) -> bool | None:
    """Correct language (BERGEN mRAG): whether langid detects the response (citations removed,
    stripped) as the user's language, compared on the primary subtag (zh-cn -> zh).

    None when there is no target language or the response has 20 characters or fewer: such
    responses are left out of the correct-language rate's denominator, as in BERGEN.
    """
    value, _ = _language_verdict(prediction, language)
    return None if value is None else value == 1.0


# ------------------------------------------------------------------------------ no-answer

_CONTEXT_NOUNS = ("context", "provided context", "given context", "passages", "provided passages",
                  "documents", "provided documents", "text", "provided text")

DECLINE_PHRASES: dict[str, tuple[str, ...]] = {
    "en": (
        "couldn't find an answer", "could not find an answer", "couldn't find the answer",
        "could not find the answer", "can't find the answer", "cannot find the answer",
        "unable to find an answer", "unable to find the answer",
        "couldn't find any information", "could not find any information",
        "i don't know", "i do not know",
        "cannot answer", "can't answer", "can not answer", "unable to answer",
        "cannot be answered", "can't be answered", "cannot be determined", "unable to determine",
        "no information", "no relevant information", "not enough information",
        "insufficient information", "does not contain the answer", "doesn't contain the answer",
        "does not provide the answer", "doesn't provide the answer",
        "does not provide enough information", "doesn't provide enough information",
        "unanswerable", "there is no answer",
        *(f"not {verb} in the {noun}" for verb in ("mentioned", "stated", "specified", "provided")
          for noun in _CONTEXT_NOUNS),
    ),
    "es": (
        "no lo sé", "no sé", "no puedo responder", "no puedo contestar", "no se puede responder",
        "no encontré una respuesta", "no encontré la respuesta", "no pude encontrar una respuesta",
        "no pude encontrar la respuesta", "no he encontrado una respuesta", "no hay información",
        "no tengo información", "no se menciona en el contexto", "información insuficiente",
    ),
    "de": (
        "ich weiß nicht", "weiß ich nicht", "keine antwort gefunden", "keine antwort finden",
        "kann die frage nicht beantworten", "kann ich nicht beantworten",
        "kann nicht beantwortet werden", "keine informationen", "keine information",
        "im kontext nicht erwähnt", "nicht im kontext erwähnt",
    ),
    "fr": (
        "je ne sais pas", "je n'ai pas trouvé de réponse", "je n'ai pas pu trouver de réponse",
        "je n'ai pas trouvé la réponse", "je ne peux pas répondre", "impossible de répondre",
        "aucune information", "pas d'information", "pas d'informations",
        "n'est pas mentionné dans le contexte",
    ),
    "ar": (
        "لا أعرف", "لا اعرف", "لا أعلم", "لا اعلم", "لم أجد إجابة",
        "لم أتمكن من العثور على إجابة", "لا يمكنني الإجابة", "لا أستطيع الإجابة",
        "لا توجد معلومات", "لا تتوفر معلومات",
    ),
    "zh": (
        "我不知道", "不知道答案", "无法回答", "無法回答", "找不到答案", "没有找到答案", "沒有找到答案",
        "未找到答案", "没有相关信息", "沒有相關信息", "上下文中没有提到", "上下文没有提到",
    ),
    "hi": (
        "मुझे नहीं पता", "मैं नहीं जानता", "मैं नहीं जानती", "उत्तर नहीं मिला", "जवाब नहीं मिला",
        "उत्तर नहीं दे सकता", "उत्तर नहीं दे सकती", "कोई जानकारी नहीं",
    ),
    "ru": (
        "не знаю", "не могу ответить", "не удалось найти ответ", "не нашёл ответа",
        "не нашел ответа", "не нашла ответа", "нет информации", "не упоминается в контексте",
        "в контексте не упоминается",
    ),
    "th": ("ไม่ทราบ", "ไม่รู้", "ไม่สามารถตอบ", "ไม่พบคำตอบ", "ไม่มีข้อมูล"),
}
"""Declining phrases per language, matched case-insensitively; in languages written with spaces
only as whole words ("i know that …" does not contain "i don't know")."""

_NO_WORD_SPACES = {"zh", "th"}


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.replace("’", "'").replace("‘", "'").replace("ʼ", "'").replace("*", "")
    return " ".join(text.split())


def _decline_pattern() -> re.Pattern[str]:
    alternatives = []
    for lang, phrases in DECLINE_PHRASES.items():
        for phrase in phrases:
            body = re.escape(_fold(phrase))
            alternatives.append(body if lang in _NO_WORD_SPACES else rf"(?<!\w){body}(?!\w)")
    alternatives.sort(key=len, reverse=True)
    return re.compile("|".join(alternatives))


_DECLINE = _decline_pattern()


def decline_reason(prediction: str | None) -> str | None:
    """Why a response counts as declining: ``"empty response"``, the phrase it matched, or None."""
    text = strip_citations(prediction)
    if not any(ch.isalnum() for ch in text):
        return "empty response"
    match = _DECLINE.search(_fold(text))
    return f"declined: {match.group(0)!r}" if match else None


def is_no_answer(prediction: str | None) -> bool:
    """No-answer (RAG-QA Arena, Han et al., no-answer ratio): the response declines ("I couldn't
    find an answer", "I don't know", "not mentioned in the context", and the main equivalents in
    es/de/fr/ar/zh/hi/ru/th, see :data:`DECLINE_PHRASES`) or is empty.

    A phrase list is a heuristic: a response that hedges with "I don't know exactly, but …"
    counts as declining.
    """
    return decline_reason(prediction) is not None


# ---------------------------------------------------------------------------- all at once

ANSWER_MATCH_METRICS = ("em_loose", "em_strict", "f1_mirage", "bergen_match", "bergen_em",
                        "bergen_f1", "char3_recall")
METRICS = (*ANSWER_MATCH_METRICS, "correct_language", "no_answer")
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
    """Every answer metric of one generation, in the order of :data:`METRICS`.

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
    scores.append(Score("correct_language", *_language_verdict(text, language)))
    reason = decline_reason(text)
    scores.append(Score("no_answer", 1.0 if reason else 0.0, reason or "answers"))
    if cited:
        scores.append(Score(CITATION_METRIC, float(len(citations)), json.dumps(citations)))
    return scores
