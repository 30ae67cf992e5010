"""The response's language (BERGEN mRAG's correct language; MIRAGE-Bench's language features),
with langid (Lui & Baldwin): normalised probabilities, citations removed before detecting.
"""

from __future__ import annotations

import re
import threading

from engine.metrics.response_format import strip_citations

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


def language_verdict(prediction: str | None, language: str | None) -> tuple[float | None, str]:
    """:func:`correct_language` as a score: ``(1.0 | 0.0 | None, why)``."""
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
    value, _ = language_verdict(prediction, language)
    return None if value is None else value == 1.0
