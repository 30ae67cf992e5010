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

The parts:

- :mod:`.specs`: each feature's stored name and description (:data:`FEATURES`);
- :mod:`.responses`: a response (reason, answer, citations, reference answer) read from the
  store;
- :mod:`.text`: the model-free features;
- :mod:`.judged`: the judged features, every judge call cached;
- :mod:`.stored`: :func:`compute_features` over a run (resumable), and the stored values per
  contestant (:func:`feature_values`, :func:`system_features`).
"""

from engine.arena.features.judged import JudgedScorer, grade_value, yes_probability
from engine.arena.features.responses import Response, ResponseParts, response_parts
from engine.arena.features.specs import (CITATION_DEPTH, FEATURE_BY_KEY, FEATURES, JUDGED,
                                         MODEL_FREE, PREFIX, FeatureSpec, FeatureValue)
from engine.arena.features.stored import (FeatureSummary, compute_features, feature_values,
                                          system_features)
from engine.arena.features.text import (bleu, citation_map, citation_recall, cited_contexts,
                                        model_free_features, overlap_tokens, rouge_l,
                                        split_sentences)

__all__ = ["CITATION_DEPTH", "FEATURES", "FEATURE_BY_KEY", "FeatureSpec", "FeatureSummary",
           "FeatureValue", "JUDGED", "JudgedScorer", "MODEL_FREE", "PREFIX", "Response",
           "ResponseParts", "bleu", "citation_map", "citation_recall", "cited_contexts",
           "compute_features", "feature_values", "grade_value", "model_free_features",
           "overlap_tokens", "response_parts", "rouge_l", "split_sentences", "system_features",
           "yes_probability"]
