"""The heuristic features MIRAGE-Bench's surrogate judge learns from (Thakur et al.;
docs/METRICS.md §2): each one's stored name and what it measures, and one computed value."""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "feat:"
CITATION_DEPTH = 10


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


@dataclass
class FeatureValue:
    """One feature of one response, as stored in ``scores``: the value (None when it does not
    apply or the judge's reply could not be parsed) and why."""

    metric: str
    value: float | None
    detail: str
