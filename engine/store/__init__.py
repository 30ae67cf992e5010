"""The workspace store, and the only place that talks SQL: one SQLite file per workspace
(:mod:`.database`: :class:`Store`, a connection per thread, one writer at a time), its schema
(:mod:`.migrations`: the schema over the ordered migrations), and one module per thing held:
:mod:`.datasets`, :mod:`.labels`, :mod:`.indexes`, :mod:`.runs`
(:class:`~engine.store.runs.StoredRun`), :mod:`.run_items` (a run's write side), :mod:`.run_log`,
:mod:`.speeds`, :mod:`.load_times`, :mod:`.generations`, :mod:`.items` (a run's read side), :mod:`.item_queries` (the Inspector's),
:mod:`.exports`, :mod:`.arenas`, :mod:`.calibration`, :mod:`.features`, :mod:`.fitted_judges`.
Their functions take the :class:`Store` (or the ``db`` of an open :meth:`Store.write`
transaction) and return rows, values or small dataclasses; the engine's packages above call
them and never write SQL themselves (``tests/unit/test_import_hygiene.py``)."""

from engine.store.database import (ENV_DB, StorageError, Store, StoreError, batched,
                                   default_db_path, json_column)
from engine.store.migrations.schema import MIGRATIONS, SCHEMA_VERSION, migrate

__all__ = ["ENV_DB", "MIGRATIONS", "SCHEMA_VERSION", "StorageError", "Store",
           "StoreError", "batched", "default_db_path", "json_column", "migrate"]
