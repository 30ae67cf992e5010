"""The store: migrations, WAL, transactions, threads."""

import sqlite3
import threading

import pytest

from engine.store import MIGRATIONS, SCHEMA_VERSION, Store, StoreError, migrate


def test_fresh_store_has_schema_wal_and_version(tmp_path):
    store = Store(tmp_path / "w.db")
    assert store.schema_version() == SCHEMA_VERSION == len(MIGRATIONS)
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in store.query("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"datasets", "queries", "chunks", "pool", "imports", "dataset_collections", "embeddings",
            "generations", "runs", "run_items", "scores", "retrievals",
            "_migrations"} <= tables
    applied = [r[0] for r in store.query("SELECT name FROM _migrations ORDER BY rowid")]
    assert applied == [name for name, _ in MIGRATIONS]


def test_migrations_are_applied_once(tmp_path):
    path = tmp_path / "w.db"
    Store(path)
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn) == []  # nothing left to do
    conn.close()
    Store(path)  # reopening does not fail or re-run


def test_migration_scripts_are_cut_into_the_statements_sqlite_utils_cuts(tmp_path, monkeypatch):
    """The migrations' own splitter (linear) cuts every shipped script, and a trigger body, a
    ';' in a string and in a comment, exactly as sqlite-utils' (quadratic) one does."""
    from sqlite_utils.db import _iter_complete_sql_statements

    from engine.store.migrations import schema

    scripts = []
    run_script = schema._MigrationDatabase.executescript
    monkeypatch.setattr(schema._MigrationDatabase, "executescript",
                        lambda db, sql: scripts.append(sql) or run_script(db, sql))
    Store(tmp_path / "w.db")
    tricky = ["CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO b VALUES (1); "
              "UPDATE c SET x = ';'; END; SELECT 1", "-- a; comment\nSELECT ';' ;  ", "", ";"]
    assert len(scripts) >= 17
    for sql in scripts + tricky:
        assert list(schema.sql_statements(sql)) == list(_iter_complete_sql_statements(sql))
    assert list(schema.sql_statements(tricky[0]))[-1] == "SELECT 1"


def test_a_failing_migration_rolls_back_and_keeps_version(tmp_path, monkeypatch):
    path = tmp_path / "w.db"
    Store(path)

    def m999_broken(db):
        db.conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    monkeypatch.setattr("engine.store.migrations.schema.MIGRATIONS", MIGRATIONS + [("m999_broken", m999_broken)])
    with pytest.raises(RuntimeError):
        Store(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name='half_done'").fetchall()


def test_write_block_is_all_or_nothing(tmp_path):
    store = Store(tmp_path / "w.db")
    with pytest.raises(ZeroDivisionError):
        with store.write() as db:
            db.conn.execute("INSERT INTO datasets (name, version, kind, format, content_hash, "
                            "created_at) VALUES ('x', 1, 'qa', 'squad', 'h', 'now')")
            1 / 0
    assert store.query("SELECT COUNT(*) FROM datasets")[0][0] == 0


def test_each_thread_gets_its_own_connection_and_writes_serialise(tmp_path):
    store = Store(tmp_path / "w.db")
    conns, errors = [], []

    def worker(i):
        try:
            conns.append(id(store.conn))
            for j in range(20):
                with store.write() as db:
                    db.conn.execute(
                        "INSERT INTO datasets (name, version, kind, format, content_hash, "
                        "created_at) VALUES (?, ?, 'qa', 'squad', 'h', 'now')", (f"t{i}", j))
                store.query("SELECT COUNT(*) FROM datasets")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(set(conns)) == 6
    assert store.query("SELECT COUNT(*) FROM datasets")[0][0] == 120


def test_a_connection_is_never_shared_across_threads(tmp_path):
    store = Store(tmp_path / "w.db")
    main_conn = store.conn
    failure = []

    def use_main_conn():
        try:
            main_conn.execute("SELECT 1")
        except sqlite3.ProgrammingError as exc:
            failure.append(exc)

    t = threading.Thread(target=use_main_conn)
    t.start()
    t.join()
    assert failure, "sqlite must refuse a connection used from another thread"


def test_a_file_that_is_not_a_database_is_refused_clearly(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(StoreError, match="notes.db"):
        Store(path)
    assert path.read_text().startswith("these are my notes")
