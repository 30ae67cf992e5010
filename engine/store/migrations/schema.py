"""The workspace schema: an ordered list of migrations (after sqlite-utils' and llm's).

Each migration runs in its own transaction and records itself in ``_migrations``; the
schema version is also kept in ``PRAGMA user_version``. The migrations themselves are in
:mod:`engine.store.migrations.first` (m001–m007) and :mod:`engine.store.migrations.later`
(m008 onwards: add a new one there); never edit one that has shipped.
"""

from __future__ import annotations

import sqlite3
from typing import Callable, Iterator

import sqlite_utils

from engine.store.migrations import first as migrations_first, later as migrations_later

Migration = Callable[[sqlite_utils.Database], None]
MIGRATIONS: list[tuple[str, Migration]] = [
    (fn.__name__, fn) for fn in (*migrations_first.STEPS, *migrations_later.STEPS)]
SCHEMA_VERSION = len(MIGRATIONS)


def sql_statements(sql: str) -> Iterator[str]:
    """The statements of the script ``sql`` in order, each stripped: a statement ends at the
    first ``;`` where :func:`sqlite3.complete_statement` says it is complete (a ``;`` in a
    string, a comment or a trigger body ends none). The same cut as sqlite-utils' splitter,
    which joins and tests the text after every character (quadratic: most of the 0.1-0.2 s
    a new workspace took); here only at each ``;``."""
    start, end = 0, sql.find(";")
    while end != -1:
        if sqlite3.complete_statement(sql[start:end + 1]):
            statement = sql[start:end + 1].strip()
            if statement:
                yield statement
            start = end + 1
        end = sql.find(";", end + 1)
    rest = sql[start:].strip()
    if rest:
        yield rest


class _MigrationDatabase(sqlite_utils.Database):
    """sqlite-utils' Database whose ``executescript`` runs inside the migration's own
    transaction (never sqlite3's implicit COMMIT), cutting the script with
    :func:`sql_statements`."""

    def executescript(self, sql: str) -> sqlite3.Cursor:
        cursor = self.conn.cursor()
        for statement in sql_statements(sql):
            cursor.execute(statement)
        return cursor


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations this database has not seen, each in its own transaction."""
    db = _MigrationDatabase(conn)
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

