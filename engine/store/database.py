"""The workspace store: one SQLite file per workspace.

Threading model (after datasette's): every thread gets its own read connection, created
lazily and never handed to another thread (``check_same_thread`` stays on, so a mistake fails
loudly); writes go through :meth:`Store.write`, which holds one process-wide lock per database
file and runs its block as one ``BEGIN IMMEDIATE`` transaction. WAL mode lets readers go on
while a write is in progress, and SQLite's own locking (with a busy timeout) covers several
processes on the same file.

Opening a store creates or upgrades its schema with :func:`engine.store.schema.migrate`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import sqlite_utils

from engine.store.schema import migrate

ENV_DB = "MIRAGE_DB"

IN_BATCH = 500
"""Values per ``IN (...)`` lookup: SQLite caps the parameters of one statement."""


def default_db_path() -> Path:
    """``$MIRAGE_DB`` if set, else ``workspace.db`` under the user's data directory."""
    env = os.environ.get(ENV_DB)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("mirage-tui")) / "workspace.db"


def json_column(text: str | None, default: Any) -> Any:
    """The value of a JSON text column; ``default`` when it is NULL, empty or not valid JSON
    (a row is read back as well as it can be rather than failing a whole report)."""
    if not text:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return default


def batched(values: Iterable, size: int) -> Iterator[list]:
    """``values`` in lists of ``size`` (the last one shorter), in order."""
    values = list(values)
    for start in range(0, len(values), size):
        yield values[start:start + size]


# --------------------------------------------------------------------------- the store

_WRITE_LOCKS: dict[str, threading.RLock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


def _write_lock(path: str) -> threading.RLock:
    with _WRITE_LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(path, threading.RLock())


class StoreError(Exception):
    """The database file cannot be opened or is not a mirage-tui workspace."""


class Store:
    """A workspace database. Cheap to create; connections are opened per thread on demand."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._key = str(self.path.resolve())
        self._local = threading.local()
        self._lock = _write_lock(self._key)
        with self._lock:
            conn = self._connect()
            try:
                migrate(conn)
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"{self.path}: not a usable SQLite database ({exc})") from exc
            finally:
                conn.close()

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, so a transaction is exactly
        # what the code says it is.
        try:
            conn = sqlite3.connect(self._key, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable SQLite database ({exc})") from exc
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.row_factory = sqlite3.Row
        return conn

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (for reads, and used by :meth:`write` under the lock)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    @property
    def db(self) -> sqlite_utils.Database:
        """sqlite-utils view over this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite_utils.Database(self.conn)
            self._local.db = db
        return db

    @contextmanager
    def write(self) -> Iterator[sqlite_utils.Database]:
        """One write transaction: all of the block's writes land, or none do."""
        with self._lock:
            conn = self.conn
            if conn.in_transaction:  # nested use joins the outer transaction
                yield self.db
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                # SQLite may already have rolled back itself (a full disk does): keep the
                # original error rather than hiding it behind "no transaction is active"
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def query_in(self, sql: str, values: Iterable, params: Sequence = ()) -> Iterator[sqlite3.Row]:
        """The rows of ``sql`` for any number of ``values``, looked up :data:`IN_BATCH` at a
        time: ``{marks}`` in ``sql`` stands for a batch's placeholders, bound after ``params``.
        Rows come batch by batch, in the order of ``values``."""
        for part in batched(values, IN_BATCH):
            yield from self.query(sql.replace("{marks}", ",".join("?" * len(part))),
                                  (*params, *part))

    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def close(self) -> None:
        """Close this thread's connection (other threads close their own)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            self._local.db = None
