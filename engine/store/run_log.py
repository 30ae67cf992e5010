"""The ``run_log`` table: a run's log lines (what they say is :mod:`engine.runs.log`'s)."""

from __future__ import annotations

import sqlite3

from engine.store.database import Store


def append_log(db, run_id: int, at: str, kind: str, message: str) -> None:
    """One line, inside the caller's write transaction."""
    db.conn.execute("INSERT INTO run_log (run_id, at, kind, message) VALUES (?, ?, ?, ?)",
                    (run_id, at, kind, message))


def log_rows(store: Store, run_id: int) -> list[sqlite3.Row]:
    """``at, kind, message`` of the run's lines, oldest first."""
    return store.query("SELECT at, kind, message FROM run_log WHERE run_id = ? ORDER BY id",
                       (run_id,))
