"""A run's life after it ran: its log (what it did), renaming it, deleting it.

The log (:mod:`engine.runs.log`, written by the run's job) is read back by :func:`run_log`.

:func:`rename_run` and :func:`delete_run` each work in one write transaction and refuse a run
whose owner is alive (:mod:`engine.runs.owner`): a running run keeps its name and its rows.
Deleting drops the run's items, arenas, owner row, counters and log (their foreign keys cascade);
the generation cache is shared by every run, so its generations and scores stay unless
``purge_generations`` asks to drop those no other run uses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from engine.results.records import run_not_found
from engine.runs import owner
from engine.runs.header import now
from engine.runs.log import LogLine, read_log
from engine.store import Store


@dataclass(frozen=True)
class Deleted:
    run: str
    items: int
    generations: int            # cached generations dropped (purge only)


def _run_id(conn, store: Store, name: str) -> int:
    row = conn.execute("SELECT id FROM runs WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise run_not_found(store, name)
    return row[0]


def run_log(store: Store, name: str) -> list[LogLine]:
    """The run's log, oldest first."""
    return read_log(store, _run_id(store.conn, store, name))


def _refuse_running(conn, run_id: int, name: str, doing: str) -> None:
    row = conn.execute("SELECT o.pid, o.host, o.process_start FROM run_owners o JOIN runs r "
                       "ON r.id = o.run_id WHERE o.run_id = ? AND r.status = 'running'",
                       (run_id,)).fetchone()
    if row is not None and owner.is_alive(row[0], row[1], row[2]):
        raise owner.RunBusy(f"run {name} is running (pid {row[0]}); cannot {doing} it until "
                            "it ends (cancel it first)")


def check_new_name(new: str) -> str:
    new = (new or "").strip()
    if not new:
        raise ValueError("a run name cannot be empty")
    if any(ch in new for ch in "\n\r\t"):
        raise ValueError(f"run name {new!r}: no tabs or line breaks")
    return new


def rename_run(store: Store, old: str, new: str) -> str:
    """Rename run ``old`` to ``new`` (its stored configuration's name too, and its people's
    verdicts dataset ``verdicts:OLD``); returns the new name."""
    from engine.arena.human_verdicts import labels_dataset_name

    new = check_new_name(new)
    with store.write() as db:
        conn = db.conn
        run_id = _run_id(conn, store, old)
        if new == old:
            return new
        if conn.execute("SELECT 1 FROM runs WHERE name = ?", (new,)).fetchone():
            raise ValueError(f"a run named {new!r} exists already")
        _refuse_running(conn, run_id, old, "rename")
        config = json.loads(conn.execute("SELECT config FROM runs WHERE id = ?",
                                         (run_id,)).fetchone()[0] or "{}")
        config["name"] = new
        conn.execute("UPDATE runs SET name = ?, config = ? WHERE id = ?",
                     (new, json.dumps(config), run_id))
        if not conn.execute("SELECT 1 FROM datasets WHERE name = ?",
                            (labels_dataset_name(new),)).fetchone():
            conn.execute("UPDATE datasets SET name = ? WHERE name = ?",
                         (labels_dataset_name(new), labels_dataset_name(old)))
        conn.execute("INSERT INTO run_log (run_id, at, kind, message) VALUES (?, ?, ?, ?)",
                     (run_id, now(), "rename", f"renamed from {old} to {new}"))
    return new


def delete_run(store: Store, name: str, *, purge_generations: bool = False) -> Deleted:
    """Delete run ``name`` in one transaction (module docstring)."""
    with store.write() as db:
        conn = db.conn
        run_id = _run_id(conn, store, name)
        _refuse_running(conn, run_id, name, "delete")
        items = conn.execute("SELECT COUNT(*) FROM run_items WHERE run_id = ?",
                             (run_id,)).fetchone()[0]
        purged = 0
        if purge_generations:
            # generations only this run uses (no other run's item points at them)
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS _purge (key TEXT PRIMARY KEY)")
            conn.execute("DELETE FROM _purge")
            conn.execute(
                "INSERT OR IGNORE INTO _purge SELECT DISTINCT generation_key FROM run_items ri "
                "WHERE ri.run_id = ? AND ri.generation_key IS NOT NULL AND NOT EXISTS ("
                "SELECT 1 FROM run_items o WHERE o.generation_key = ri.generation_key "
                "AND o.run_id != ri.run_id)", (run_id,))
        conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        if purge_generations:
            purged = conn.execute(
                "DELETE FROM generations WHERE key IN (SELECT key FROM _purge)").rowcount
            conn.execute("DELETE FROM _purge")
    return Deleted(name, items, purged)
