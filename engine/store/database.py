"""The workspace store: one SQLite file per workspace.

Threading model (after datasette's): every thread gets its own read connection, created
lazily and never handed to another thread (``check_same_thread`` stays on, so a mistake fails
loudly); writes go through :meth:`Store.write`, which holds one process-wide lock per database
file and runs its block as one ``BEGIN IMMEDIATE`` transaction. WAL mode lets readers go on
while a write is in progress, and SQLite's own locking (with a busy timeout) covers several
processes on the same file.

Opening a store creates or upgrades its schema with :func:`engine.store.migrations.schema.migrate`.

Storage faults. Every SQLite or OS error about the file itself (read-only file or folder, a
missing folder, a full disk or a file-size limit, a lock held past the busy timeout, a file
that is not a database or is corrupt, a schema newer than this code) leaves the store as a
:class:`StorageError` whose message is one line naming the database file and the cause
(:func:`storage_error`, the one place that words them). It subclasses
``sqlite3.OperationalError``, so code that handles database errors (the job policy in
:mod:`engine.jobs`) handles it too; ``sqlite_errorcode``/``sqlite_errorname`` are kept.
Constraint and programming errors are bugs or rejected rows and pass through as they are.

A missing folder is created only when asked (``create_folder=True``, the default for the
engine's own callers and the default workspace); the CLI passes ``False`` for a path the user
typed, so a typo is refused with a message rather than a new workspace somewhere unexpected.
``Store.created`` says whether opening made a new database file.

A path that is no regular file (``MIRAGE_DB=/dev/null``, a FIFO) is refused as not a workspace
file, before SQLite tries it (``/dev/null`` read as "the disk is full"). An empty (0-byte) file
is what SQLite calls a new database; one the user named (``empty_file_ok=False``, the CLI's
choice for a typed path) is refused instead, since a 0-byte file given by name is more likely a
slip (another file, a truncated copy) than a wish for a workspace; unless it is seconds old and
gets its first page while this waits (another command making that workspace right now). A workspace that exists but
cannot be written (a read-only mount, a 0444 file or a read-only folder for a user other than
root) opens for reading only: ``Store.read_only`` is True, nothing is migrated, and every write
is refused with one line (:data:`READ_ONLY_CAUSE`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import sqlite_utils

from engine.store.migrations.schema import SCHEMA_VERSION, migrate

ENV_DB = "MIRAGE_DB"

READ_ONLY_CAUSE = ("the workspace is read-only here (opened for reading only); nothing was "
                   "written")
"""Why a write to a read-only workspace is refused."""
_NOT_FILES = (("is_char_device", "a character device"), ("is_block_device", "a block device"),
              ("is_fifo", "a FIFO (named pipe)"), ("is_socket", "a socket"))

IN_BATCH = 500
"""Values per ``IN (...)`` lookup: SQLite caps the parameters of one statement."""


def default_db_path() -> Path:
    """``$MIRAGE_DB`` if set, else ``workspace.db`` under the user's data directory."""
    from models.host.registry import user_path

    return user_path(ENV_DB, "data", "workspace.db")


def json_column(text: str | None, default: Any) -> Any:
    """The value of a JSON text column; ``default`` when it is NULL, empty or not valid JSON
    (a row is read back as well as it can be rather than failing a whole report)."""
    if not text:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return default


def marks(n: int) -> str:
    """``?,?,...`` for an ``IN (...)`` of ``n`` values."""
    return ",".join("?" * n)


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


class StorageError(sqlite3.OperationalError):
    """The workspace file cannot be read or written: the message is one line naming the file
    and the cause (module docstring). ``path`` is the file; ``resumable`` says that the cause
    may pass (a full disk, a lock) and running the same work again resumes it."""

    def __init__(self, path: str | os.PathLike, cause: str, *, code: int | None = None,
                 name: str | None = None, resumable: bool = False):
        super().__init__(f"{path}: {cause}")
        self.path, self.cause, self.resumable = Path(path), cause, resumable
        self.sqlite_errorcode, self.sqlite_errorname = code, name


StoreError = StorageError
"""The older name, kept for callers that catch it."""

BUSY_TIMEOUT = 30.0
"""Seconds a write waits for another process's lock before it fails as locked."""

# SQLite primary result codes (https://sqlite.org/rescode.html) → the cause in words.
_CAUSES = {
    "SQLITE_READONLY": "the database is read-only (the file or its folder cannot be written)",
    "SQLITE_CANTOPEN": "cannot open the database file (its folder is missing, or the file or "
                       "folder cannot be read or written)",
    "SQLITE_PERM": "permission denied",
    "SQLITE_FULL": "the disk is full (SQLITE_FULL); the unfinished write was rolled back",
    "SQLITE_IOERR": "disk I/O error (the disk is full, the file reached a size limit, or the "
                    "device failed); the unfinished write was rolled back",
    "SQLITE_NOTADB": "not a mirage-tui workspace (file is not a database)",
    "SQLITE_CORRUPT": "the database file is corrupt (database disk image is malformed)",
}
_RESUMABLE = ("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_BUSY", "SQLITE_LOCKED")


def sqlite_primary_name(exc: BaseException) -> str | None:
    """``SQLITE_IOERR`` for ``SQLITE_IOERR_WRITE`` and the like (None: not from SQLite)."""
    name = getattr(exc, "sqlite_errorname", None)
    if not name:
        return None
    for primary in (*_CAUSES, "SQLITE_BUSY", "SQLITE_LOCKED"):
        if name == primary or name.startswith(primary + "_"):
            return primary
    return name


def storage_error(path: str | os.PathLike, exc: BaseException,
                  timeout: float = BUSY_TIMEOUT) -> StorageError | None:
    """The :class:`StorageError` for ``exc`` raised on the database ``path``, or None when
    ``exc`` is not about storage (a constraint, a bug). The one place the causes are worded."""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, OSError):
        cause = exc.strerror or str(exc)
        if exc.filename and str(exc.filename) != str(path):
            cause += f" ({exc.filename})"
        return StorageError(path, cause)
    if not isinstance(exc, sqlite3.OperationalError | sqlite3.DatabaseError) or isinstance(
            exc, sqlite3.IntegrityError | sqlite3.ProgrammingError | sqlite3.InterfaceError):
        return None
    primary = sqlite_primary_name(exc)
    if primary in ("SQLITE_BUSY", "SQLITE_LOCKED"):
        cause = (f"the database is locked by another process (waited {timeout:g} s); try "
                 "again when it is done")
    elif primary in _CAUSES:
        cause = _CAUSES[primary]
    elif primary is None and "full" in str(exc).lower():   # an older sqlite3 without codes
        primary, cause = "SQLITE_FULL", _CAUSES["SQLITE_FULL"]
    else:
        return None
    return StorageError(path, cause, code=getattr(exc, "sqlite_errorcode", None),
                        name=getattr(exc, "sqlite_errorname", None) or primary,
                        resumable=primary in _RESUMABLE)


def _check_file(path: Path, empty_file_ok: bool) -> None:
    """Refuse what is no workspace file: a device, a FIFO or a socket, and (unless
    ``empty_file_ok``) an empty file (module docstring)."""
    if not path.exists():
        return
    for test, kind in _NOT_FILES:
        if getattr(path, test)():
            raise StorageError(path, f"is {kind}, not a workspace file; give the path of a "
                               "workspace file (a new name makes one)")
    if not empty_file_ok and path.is_file() and path.stat().st_size == 0 \
            and not _being_made(path):
        raise StorageError(path, "is an empty file (0 bytes), not a mirage-tui workspace; "
                           "give another name for a new workspace, or delete the file to "
                           "make one there")


NEW_FILE_GRACE = 3.0
"""Seconds an empty workspace file may be young and still be one another process is making
(SQLite creates the file empty and writes its first page a moment later)."""


def _being_made(path: Path) -> bool:
    """Whether the empty file ``path`` is a workspace another process is making right now: it
    is younger than :data:`NEW_FILE_GRACE` and gets its first page (or is gone) within that
    time. Two commands started together on a new workspace both open it; without this, the
    second saw the first's file still empty and refused it as a stray 0-byte file."""
    try:
        deadline = path.stat().st_mtime + NEW_FILE_GRACE
        while time.time() < deadline:
            time.sleep(0.05)
            if path.stat().st_size > 0:
                return True
    except FileNotFoundError:           # the other process gave up: a new name again
        return True
    return False


def _read_only(path: Path) -> bool:
    """Whether the workspace ``path`` exists but this process cannot write it or its folder
    (a read-only mount says so to root too)."""
    try:
        return path.is_file() and not (os.access(path, os.W_OK) and
                                       os.access(path.parent, os.W_OK))
    except OSError:                     # refused as a name by check_place already
        return False


def _read_only_uri(path: Path) -> str:
    """The URI that opens ``path`` for reading only; ``immutable`` where its folder cannot be
    written (no ``-shm`` file can be made there, so SQLite must not look for one)."""
    from urllib.parse import quote

    extra = "" if os.access(path.parent, os.W_OK) else "&immutable=1"
    return f"file:{quote(str(path))}?mode=ro{extra}"


class Store:
    """A workspace database. Cheap to create; connections are opened per thread on demand."""

    def __init__(self, path: str | os.PathLike | None = None, *, create_folder: bool = True,
                 timeout: float = BUSY_TIMEOUT, empty_file_ok: bool = True):
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        self.timeout = timeout
        self.check_place(self.path, create_folder, empty_file_ok)
        self.read_only = _read_only(self.path)
        try:                            # a name too long, a folder not searchable: one line
            self.created = not self.path.exists()
            self._key = str(self.path.resolve())
        except OSError as exc:
            raise storage_error(self.path, exc) from None
        self._local = threading.local()
        self._lock = _write_lock(self._key)
        with self._lock, self._storage_errors(os_errors=True):
            conn = self._connect()
            try:
                self._check_version(conn)
                if not self.read_only:
                    migrate(conn)
                elif conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                    raise StorageError(self.path, "is read-only here and written by an older "
                                       "mirage-tui: open it once where it can be written, to "
                                       "upgrade it")
            finally:
                conn.close()

    @staticmethod
    def check_place(path: Path, create_folder: bool, empty_file_ok: bool = True) -> None:
        """Refuse a path whose folder is missing (unless asked to create it) or that is not
        a file, before SQLite makes something of it; a name the system refuses (too long, a
        folder not searchable) is one line too."""
        try:
            Store._check_place(path, create_folder)
            _check_file(path, empty_file_ok)
        except OSError as exc:
            raise storage_error(path, exc) from None

    @staticmethod
    def _check_place(path: Path, create_folder: bool) -> None:
        folder = path.parent
        if folder.exists() and not folder.is_dir():
            raise StorageError(path, f"{folder} is not a folder")
        if not folder.exists():
            if not create_folder:
                raise StorageError(path, f"the folder {folder} does not exist (a typo?); "
                                   f"create it first: mkdir -p {folder}")
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise storage_error(path, exc) from None
        if path.is_dir():
            raise StorageError(path, "is a folder, not a database file")

    def _check_version(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StorageError(self.path, f"written by a newer mirage-tui (schema version "
                               f"{version}; this one knows up to {SCHEMA_VERSION}); upgrade "
                               "mirage-tui to open it")

    @contextmanager
    def _storage_errors(self, os_errors: bool = False) -> Iterator[None]:
        """SQLite errors about the file (and OS errors while opening it, ``os_errors``)
        become :class:`StorageError` (one line)."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            if isinstance(exc, OSError) and not os_errors:
                raise
            error = storage_error(self.path, exc, self.timeout)
            if error is None or error is exc:
                raise
            raise error from exc

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, so a transaction is exactly
        # what the code says it is.
        with self._storage_errors(os_errors=True):
            if self.read_only:          # no write at all: not even the journal mode
                conn = sqlite3.connect(_read_only_uri(Path(self._key)), timeout=self.timeout,
                                       isolation_level=None, uri=True)
            else:
                conn = sqlite3.connect(self._key, timeout=self.timeout, isolation_level=None)
            try:
                if not self.read_only:
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA foreign_keys = ON")
                conn.execute("PRAGMA synchronous = NORMAL")
                # an INSERT OR REPLACE fires the delete triggers of the row it replaces (the
                # run counters of ``run_counts`` count on it; sqlite-utils turns it on too)
                conn.execute("PRAGMA recursive_triggers = ON")
            except BaseException:
                conn.close()
                raise
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
        if self.read_only:
            raise StorageError(self.path, READ_ONLY_CAUSE)
        with self._lock:
            conn = self.conn
            if conn.in_transaction:  # nested use joins the outer transaction
                yield self.db
                return
            with self._storage_errors():
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self.db
                except BaseException:
                    # SQLite may already have rolled back itself (a full disk does): keep the
                    # original error rather than hiding it behind "no transaction is active"
                    if conn.in_transaction:
                        try:
                            conn.execute("ROLLBACK")
                        except sqlite3.Error:
                            pass
                    raise
                try:
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise

    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        with self._storage_errors():
            return self.conn.execute(sql, params).fetchall()

    def query_tuples(self, sql: str, params: tuple | dict = ()) -> list[tuple]:
        """:meth:`query` with plain tuples for rows: for reads of many rows (a report reads
        ~700k score rows of a big run), where a ``sqlite3.Row`` per row costs about as much
        as reading it."""
        with self._storage_errors():
            cursor = self.conn.cursor()
            cursor.row_factory = None
            try:
                return cursor.execute(sql, params).fetchall()
            finally:
                cursor.close()

    def iterate(self, sql: str, params: tuple | dict = (), *,
                chunk: int = 1000) -> Iterator[sqlite3.Row]:
        """The rows of ``sql`` as they come, ``chunk`` at a time (a cursor of its own: memory
        stays bounded however many rows there are; another query may run meanwhile)."""
        with self._storage_errors():
            cursor = self.conn.execute(sql, params)
            try:
                while rows := cursor.fetchmany(chunk):
                    yield from rows
            finally:
                cursor.close()

    def query_in(self, sql: str, values: Iterable, params: Sequence = ()) -> Iterator[sqlite3.Row]:
        """The rows of ``sql`` for any number of ``values``, looked up :data:`IN_BATCH` at a
        time: ``{marks}`` in ``sql`` stands for a batch's placeholders, bound after ``params``.
        Rows come batch by batch, in the order of ``values``."""
        for part in batched(values, IN_BATCH):
            yield from self.query(sql.replace("{marks}", marks(len(part))),
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
