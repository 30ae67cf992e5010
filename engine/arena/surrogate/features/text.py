"""The features that need no model, computed from a response's text (MIRAGE-Bench, Thakur et
al.; docs/METRICS.md §2): the answer's language (langid), citation quality (the cited passages as
a ranked run), and ROUGE-L and BLEU against the reference answer."""

from __future__ import annotations

import json
import re
import unicodedata
import warnings
from typing import Iterable, Sequence

from engine.arena.surrogate.features.responses import Response
from engine.arena.surrogate.features.specs import CITATION_DEPTH, FEATURE_BY_KEY, FeatureValue
from engine.metrics.language import language_probability, primary_language
from engine.metrics.response_format import parse_citations, strip_citations

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
