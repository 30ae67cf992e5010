"""Datasets: importing files into the store, the shipped demo pool, and reading them back.

- :mod:`.formats`: one reader per dataset format (MIRAGE, its parquet form, SQuAD/XQuAD,
  LFRQA, Wikipedia summaries, BEIR/MIRACL), each giving a :class:`ParsedDataset`;
- :mod:`.importing`: :func:`import_path` (atomic, content-hashed, versioned);
- :mod:`.demo_pool`: the demo pool written for mirage-tui (``engine/datasets/demo/``);
- :mod:`.catalog`: datasets, queries and pools as the CLI and the TUI list them;
- :mod:`.labels`: human pairwise labels read back.

Their rows are read and written by :mod:`engine.store.datasets` and
:mod:`engine.store.labels`. Import from the modules: this package exports nothing.
"""
