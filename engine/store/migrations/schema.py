"""The workspace schema: an ordered list of migrations (after sqlite-utils' and llm's).

Each migration runs in its own transaction and records itself in ``_migrations``; the
schema version is also kept in ``PRAGMA user_version``. The migrations themselves are in
:mod:`engine.store.migrations.first` (m001–m007) and :mod:`engine.store.migrations.later`
(m008 onwards: add a new one there); never edit one that has shipped.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

import sqlite_utils

from engine.store.migrations import first as migrations_first, later as migrations_later

Migration = Callable[[sqlite_utils.Database], None]
MIGRATIONS: list[tuple[str, Migration]] = [
    (fn.__name__, fn) for fn in (*migrations_first.STEPS, *migrations_later.STEPS)]
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations this database has not seen, each in its own transaction."""
    db = sqlite_utils.Database(conn)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied = []
    for index, (name, fn) in enumerate(MIGRATIONS, start=1):
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            # another process may have applied it between our read and our lock
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                conn.execute("COMMIT")
                continue
            fn(db)
            conn.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, datetime('now'))", (name,)
            )
            conn.execute(f"PRAGMA user_version = {index}")
            conn.execute("COMMIT")
        except BaseException:
            # SQLite has already rolled back after a full disk or an I/O error; a ROLLBACK
            # then fails ("no transaction is active") and would hide the real cause
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied

