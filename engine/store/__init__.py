"""The workspace store: one SQLite file per workspace (:mod:`.database`) and its schema, an
ordered list of migrations (:mod:`.schema`). Engine modules write through :meth:`Store.write`
(one transaction, one writer at a time) and read with :meth:`Store.query` (:meth:`Store.query_in`
for a long ``IN (...)`` list)."""

from engine.store.database import (ENV_DB, StorageError, Store, StoreError, batched,
                                   default_db_path, json_column)
from engine.store.schema import MIGRATIONS, SCHEMA_VERSION, migrate

__all__ = ["ENV_DB", "MIGRATIONS", "SCHEMA_VERSION", "StorageError", "Store",
           "StoreError", "batched", "default_db_path", "json_column", "migrate"]
