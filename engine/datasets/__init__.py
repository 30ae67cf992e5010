"""Datasets: importing files into the store, the shipped demo pool, and reading them back.

- :mod:`.formats`: one reader per dataset format (MIRAGE, its parquet form, SQuAD/XQuAD,
  LFRQA, Wikipedia summaries, BEIR/MIRACL), each giving a :class:`ParsedDataset`;
- :mod:`.importing`: :func:`import_path` (atomic, content-hashed, versioned);
- :mod:`.demo_pool`: the demo pool written for mirage-tui (``engine/datasets/demo/``);
- :mod:`.catalog`: datasets, queries and pools as the CLI and the TUI list them.
"""

from engine.datasets.catalog import (
                                     DatasetNotFound,
                                     DatasetSummary,
                                     PoolEntry,
                                     QueryDetail,
                                     attach_collection,
                                     get_dataset,
                                     get_query,
                                     list_datasets,
                                     list_queries,
                                     resolve,
                                     retrieval_chunk_count,
)
from engine.datasets.demo_pool import DEMO_NAME, ensure_demo
from engine.datasets.formats import FORMATS, detect_format, get_importer
from engine.datasets.formats.base import (ChunkRecord, DatasetFormatError, ParsedDataset,
                                          PoolRecord, QueryRecord, text_hash)
from engine.datasets.importing import ImportResult, import_path

__all__ = ["ChunkRecord", "DEMO_NAME", "DatasetFormatError", "DatasetNotFound", "DatasetSummary",
           "FORMATS", "ImportResult", "ParsedDataset", "PoolEntry", "PoolRecord", "QueryDetail",
           "QueryRecord", "attach_collection", "detect_format", "ensure_demo", "get_dataset",
           "get_importer", "get_query", "import_path", "list_datasets", "list_queries",
           "resolve", "retrieval_chunk_count", "text_hash"]
