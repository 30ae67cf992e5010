"""The ``claims`` table (migration m015): which process works on a fit, a calibration or an
arena (``kind`` and ``name``); :mod:`engine.runs.owner` decides who may take one and what a
dead owner's thing shows. A run's owner is in ``run_owners`` (:mod:`engine.store.runs`)."""

from __future__ import annotations

import sqlite3

from engine.store.database import Store


def claim_row(db, kind: str, name: str) -> sqlite3.Row | None:
    """``pid, host, process_start`` of the claim on ``kind``/``name`` (inside a write)."""
    return db.conn.execute("SELECT pid, host, process_start FROM claims WHERE kind = ? AND "
                           "name = ?", (kind, name)).fetchone()


def set_claim(db, kind: str, name: str, pid: int, host: str, started: str | None,
              at: str) -> None:
    """Record this owner of ``kind``/``name``, replacing the one before."""
    db.conn.execute("INSERT OR REPLACE INTO claims (kind, name, pid, host, process_start, "
                    "claimed_at) VALUES (?, ?, ?, ?, ?, ?)", (kind, name, pid, host, started, at))


def drop_claim(store: Store, kind: str, name: str, pid: int, host: str) -> None:
    """Delete the claim on ``kind``/``name`` when ``pid`` on ``host`` holds it."""
    with store.write() as db:
        db.conn.execute("DELETE FROM claims WHERE kind = ? AND name = ? AND pid = ? AND "
                        "host = ?", (kind, name, pid, host))


def claim_of(store: Store, kind: str, name: str) -> sqlite3.Row | None:
    """``pid, host, process_start`` of the claim on ``kind``/``name``, or None."""
    rows = store.query("SELECT pid, host, process_start FROM claims WHERE kind = ? AND "
                       "name = ?", (kind, name))
    return rows[0] if rows else None


def arena_claims_of_run(db, run_id: int) -> list[sqlite3.Row]:
    """``name, pid, host, process_start`` of the claims on the run's arenas (inside a
    write)."""
    return db.conn.execute(
        "SELECT a.name, c.pid, c.host, c.process_start FROM claims c JOIN arenas a "
        "ON c.kind = 'arena' AND c.name = CAST(a.id AS TEXT) WHERE a.run_id = ? "
        "ORDER BY a.id", (run_id,)).fetchall()


def claims_of_kind(store: Store, kind: str) -> list[sqlite3.Row]:
    """``name, pid, host, process_start, claimed_at`` of every claim of ``kind``, oldest
    first."""
    return store.query("SELECT name, pid, host, process_start, claimed_at FROM claims "
                       "WHERE kind = ? ORDER BY claimed_at, name", (kind,))
