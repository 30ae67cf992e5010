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

Other packages compute and read features through the package (:func:`compute_features`,
:func:`feature_values`); everything else is imported from its module.
"""

from engine.arena.surrogate.features.stored import compute_features, feature_values

__all__ = ["compute_features", "feature_values"]
