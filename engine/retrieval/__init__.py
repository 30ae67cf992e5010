"""Dense retrieval over a dataset's pool, and its scores (MIRAGE, Park et al., §1 "Retrieval").

MIRAGE's RAG mode replaces a query's own five-chunk pool by a retriever's top k over the whole
pool (every query's chunks together), k in {1, 3, 5}; mirage-tui also searches the distractor
collections attached to the dataset (``engine.datasets.catalog.attach_collection``).

- :mod:`.index`: embedding each chunk text once per embedder into ``embeddings``, resumably;
  retriever labels;
- :mod:`.retriever`: :class:`Retriever` (exact faiss inner-product search over the stored
  vectors, optional rerank), rankings stored in ``retrievals``;
- :mod:`.scores`: P/R/F1/NDCG of stored rankings with bootstrap CIs.

Their rows are read and written by :mod:`engine.store.indexes`. The names below are the ones
other packages import through this one.
"""

from engine.retrieval.index import index_dataset, label_name, pending_texts, retriever_label
from engine.retrieval.retriever import Retriever, index_cache_info
from engine.retrieval.scores import (answer_match_rows, gold_chunks, report_json,
                                     retrieval_report_for, stored_retrievers)

__all__ = ["Retriever", "answer_match_rows", "gold_chunks", "index_cache_info", "index_dataset",
           "label_name", "pending_texts", "report_json", "retrieval_report_for",
           "retriever_label", "stored_retrievers"]
