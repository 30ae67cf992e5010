"""The evaluation engine's metric functions: small, pure, each named after what it measures.

- :mod:`engine.metrics.answer`: per-generation answer metrics (MIRAGE EM/F1, BERGEN
  match/EM/F1/char3 recall) and :func:`score_generation`, which also scores
  :mod:`engine.metrics.language` (BERGEN correct language), :mod:`engine.metrics.no_answer`
  (RAG-QA Arena no-answer) and the citations :mod:`engine.metrics.response_format` reads.
- :mod:`engine.metrics.adaptability`: MIRAGE's NV / CA / CI / CM and overall, with CIs.
- :mod:`engine.metrics.retrieval`: P/R/F1/NDCG@k per query and averaged with CIs.
- :mod:`engine.metrics.definitions`: the recorded choices behind a report (retrieval gold
  definition, correct-language detector and rule, parity mode) and the header lines naming them.
- :mod:`engine.metrics.parity`: the parity table of docs/parity.md, read from each metric function's
  ``Reference:`` / ``Deviation:`` docstring paragraphs.

Definitions live in METRICS.md; confidence intervals come from :mod:`engine.stats`.

Import the modules themselves; the package exports nothing.
"""
