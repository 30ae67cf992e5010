"""Every storage fault is one line naming the database and the cause, and loses nothing:
a missing or odd folder, a file that is not a database, a newer schema, a read-only file, a
lock held past the busy timeout, a full disk (SQLITE_FULL) and a file-size limit
(SQLITE_IOERR, in a subprocess under RLIMIT_FSIZE)."""

import sqlite3
import subprocess
import sys
import textwrap

import pytest

from engine.jobs import is_disk_full
from engine.store import SCHEMA_VERSION, StorageError, Store
from engine.store.database import storage_error
from testkit.paths import ROOT


def one_line(exc, path):
    text = str(exc)
    assert "\n" not in text and text.startswith(f"{path}: "), text
    return text


def test_a_missing_folder_is_refused_unless_asked(tmp_path):
    path = tmp_path / "typo" / "w.db"
    with pytest.raises(StorageError) as caught:
        Store(path, create_folder=False)
    assert "does not exist" in one_line(caught.value, path) and "mkdir -p" in str(caught.value)
    assert not path.parent.exists()
    assert Store(path).created and path.exists()          # asked: created


def test_a_file_as_folder_and_a_folder_as_file(tmp_path):
    with pytest.raises(StorageError, match="/dev/full is not a folder"):
        Store("/dev/full/x.db")
    with pytest.raises(StorageError, match="is a folder, not a database file"):
        Store(tmp_path)


def test_not_a_database_and_a_newer_schema(tmp_path):
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"my notes " * 500)
    with pytest.raises(StorageError) as caught:
        Store(notes)
    assert "file is not a database" in one_line(caught.value, notes)
    assert notes.read_bytes() == b"my notes " * 500

    newer = tmp_path / "newer.db"
    Store(newer).close()
    conn = sqlite3.connect(newer)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    with pytest.raises(StorageError, match=rf"schema version {SCHEMA_VERSION + 5}; this one "
                                           rf"knows up to {SCHEMA_VERSION}"):
        Store(newer)


def test_a_read_only_database_is_named(tmp_path):
    path = tmp_path / "w.db"
    Store(path).close()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as raw:
        conn.execute("CREATE TABLE t (x)")
    error = storage_error(path, raw.value)
    assert "read-only" in one_line(error, path) and error.sqlite_errorname == "SQLITE_READONLY"


def test_a_lock_past_the_busy_timeout_is_one_line_and_loses_nothing(tmp_path):
    path = tmp_path / "w.db"
    store = Store(path, timeout=0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StorageError) as caught:
            with store.write() as db:
                db.conn.execute("INSERT INTO _migrations VALUES ('x', 'now')")
        assert "locked by another process (waited 0.2 s)" in one_line(caught.value, path)
        assert caught.value.resumable
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not store.query("SELECT 1 FROM _migrations WHERE name = 'x'")


def test_a_full_disk_by_page_limit_is_storage_error_and_disk_full(tmp_path):
    path = tmp_path / "w.db"
    store = Store(path)
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(StorageError) as caught:
        with store.write() as db:
            db.conn.execute("CREATE TABLE big (x)")
            db.conn.executemany("INSERT INTO big VALUES (?)", [("x" * 4000,)] * 50)
    assert "the disk is full" in one_line(caught.value, path)
    assert is_disk_full(caught.value)
    assert not store.query("SELECT 1 FROM sqlite_master WHERE name = 'big'")


FSIZE_SCRIPT = textwrap.dedent("""
    import resource, sys
    from engine.jobs import is_disk_full
    from engine.store import StorageError, Store
    store = Store(sys.argv[1])
    store.query("SELECT 1")
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
    try:
        with store.write() as db:
            db.conn.execute("CREATE TABLE big (x)")
            db.conn.executemany("INSERT INTO big VALUES (?)", [("y" * 4000,)] * 200)
    except StorageError as exc:
        print(exc.sqlite_errorname, is_disk_full(exc), exc, sep="|")
""")


def test_a_file_size_limit_is_disk_full_however_sqlite_words_it(tmp_path):
    path = tmp_path / "w.db"
    out = subprocess.run([sys.executable, "-c", FSIZE_SCRIPT, str(path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    name, full, message = out.stdout.strip().split("|")
    assert name.startswith(("SQLITE_IOERR", "SQLITE_FULL")), out
    assert full == "True"
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert not Store(path).query("SELECT 1 FROM sqlite_master WHERE name = 'big'")


@pytest.mark.parametrize("limit", [16_384, 65_536])
def test_a_fresh_database_at_a_file_size_limit_names_the_cause(tmp_path, limit):
    """The schema's first migration runs out of room: SQLite has rolled the transaction back
    itself, so the migration's own ROLLBACK must not replace the cause with "cannot rollback -
    no transaction is active"."""
    path = tmp_path / "fresh.db"
    script = textwrap.dedent("""
        import resource, sys
        from engine.store import StorageError, Store
        limit = int(sys.argv[2])
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        try:
            Store(sys.argv[1])
        except StorageError as exc:
            print(exc)
    """)
    out = subprocess.run([sys.executable, "-c", script, str(path), str(limit)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                              "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.stdout.count("\n") == 1, out
    assert out.stdout.startswith((f"{path}: disk I/O error (the disk is full, the file "
                                  "reached a size limit", f"{path}: the disk is full")), out
    assert "cannot rollback" not in out.stdout + out.stderr
