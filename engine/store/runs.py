"""The ``runs`` table and its owners (``run_owners``): a run as stored (:class:`StoredRun`, its
header the stored JSON, raw), lookups by name, the run list and its fingerprint, the row a plan
opens or resumes, header and status writes, rename and delete, and the owner claim's rows. The
rules (who may own a run, what a dead owner's run shows, what may be renamed) are
:mod:`engine.runs`'s; here are only the statements. Functions taking ``db`` run inside the
caller's :meth:`Store.write` transaction."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Mapping

from engine.store.database import Store, json_column


@dataclass(frozen=True)
class RunRow:
    """A run as stored, with its dataset, its header apart: what every record of a run holds
    (:class:`StoredRun` here, and :mod:`engine.runs`' run read model, its header typed)."""

    id: int
    name: str
    dataset_id: int
    dataset: str            # name@version
    dataset_hash: str
    dataset_queries: int    # queries in the whole dataset (a sample says "N of M")
    config: dict
    status: str
    created_at: str
    updated_at: str
    stopped_by: str | None = None   # 'quit' | 'user' | None (engine.runs.stops)
    ask_at_launch: bool = True      # False: never offered at launch


@dataclass(frozen=True, kw_only=True)
class StoredRun(RunRow):
    """A run's row as :func:`run_by_name` reads it: its status as stored and its header's
    stored JSON, raw (:mod:`engine.runs.lookup` reads it, once, into the typed header)."""

    header_json: Mapping[str, Any]


# --------------------------------------------------------------------------- reading

def run_by_name(store: Store, name: str) -> StoredRun | None:
    """The run called ``name`` with its dataset, its status as stored; None if there is none."""
    return _run_where(store, "r.name = ?", name)


def run_by_id(store: Store, run_id: int) -> StoredRun | None:
    """:func:`run_by_name` for the run of that id (a run already looked up, read again as it is
    stored now); None once it is deleted."""
    return _run_where(store, "r.id = ?", run_id)


def _run_where(store: Store, where: str, value) -> StoredRun | None:
    rows = store.query(
        "SELECT r.*, d.name AS d_name, d.version AS d_version, d.content_hash AS d_hash, "
        "(SELECT COUNT(*) FROM queries q WHERE q.dataset_id = r.dataset_id) AS d_queries "
        f"FROM runs r JOIN datasets d ON d.id = r.dataset_id WHERE {where}", (value,))
    if not rows:
        return None
    r = rows[0]
    return StoredRun(r["id"], r["name"], r["dataset_id"], f"{r['d_name']}@{r['d_version']}",
                     r["d_hash"], r["d_queries"], json_column(r["config"], {}), r["status"],
                     r["created_at"], r["updated_at"], r["stopped_by"],
                     bool(r["ask_at_launch"]), header_json=json_column(r["header"], {}))


def known_runs(store: Store) -> list[str]:
    """Every run's name, oldest first."""
    return [r[0] for r in store.query("SELECT name FROM runs ORDER BY created_at, name")]


def runs_fingerprint(store: Store) -> tuple:
    """What changes whenever the run list or a run's progress does (a run added, removed or
    renamed, a status or an item stored): one aggregate over the runs and their counters, for
    screens that poll for changes."""
    row = store.query(
        "SELECT COUNT(*), MAX(r.id), MAX(r.updated_at), GROUP_CONCAT(r.status), "
        "TOTAL(c.items), TOTAL(c.errors), GROUP_CONCAT(r.name) "
        "FROM runs r LEFT JOIN run_counts c ON c.run_id = r.id")[0]
    return tuple(row)


def newest_dataset_version(store: Store, name: str) -> int | None:
    """The newest version of dataset ``name`` (how a run names its dataset), or None."""
    rows = store.query("SELECT MAX(version) FROM datasets WHERE name = ?", (name,))
    return rows[0][0] if rows else None


def dataset_facts(store: Store, dataset_id: int) -> sqlite3.Row:
    """``name, version, kind, content_hash`` of the dataset a plan runs on."""
    return store.query("SELECT name, version, kind, content_hash FROM datasets WHERE id = ?",
                       (dataset_id,))[0]


# --------------------------------------------------------------------------- a plan's row

def run_id_named(db, name: str) -> int | None:
    row = db.conn.execute("SELECT id FROM runs WHERE name = ?", (name,)).fetchone()
    return None if row is None else row[0]


def run_exists(db, run_id: int) -> bool:
    """Whether the run ``run_id`` is still stored (inside a write)."""
    return db.conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is not None


def set_config(db, run_id: int, config: str) -> bool:
    """The run's configuration (JSON text); False when no run has that id (deleted)."""
    return db.conn.execute("UPDATE runs SET config = ? WHERE id = ?",
                           (config, run_id)).rowcount > 0


def insert_run(db, name: str, dataset_id: int, config: str, header: str, at: str) -> int:
    """A new run row (status ``planned``); returns its id."""
    return db.conn.execute(
        "INSERT INTO runs (name, dataset_id, config, header, status, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, 'planned', ?, ?)",
        (name, dataset_id, config, header, at, at)).lastrowid


def write_header(store: Store, run_id: int, header: str, status: str | None, at: str) -> None:
    """The run's header (JSON text), its status unless None, its update time."""
    with store.write() as db:
        db.conn.execute(
            "UPDATE runs SET header = ?, status = COALESCE(?, status), updated_at = ? "
            "WHERE id = ?", (header, status, at, run_id))


def set_stopped_by(store: Store, name: str, by: str | None) -> None:
    """Why the run called ``name`` stopped (``'quit'``, ``'user'``; None: neither)."""
    with store.write() as db:
        db.conn.execute("UPDATE runs SET stopped_by = ? WHERE name = ?", (by, name))


def set_ask_at_launch(store: Store, name: str, ask: bool) -> None:
    """Whether a launch may offer the run called ``name`` for resuming."""
    with store.write() as db:
        db.conn.execute("UPDATE runs SET ask_at_launch = ? WHERE name = ?", (int(ask), name))


# --------------------------------------------------------------------------- owners

def owner_with_status(db, run_id: int) -> sqlite3.Row | None:
    """``pid, host, process_start, status`` of the run's recorded owner, or None."""
    return db.conn.execute(
        "SELECT o.pid, o.host, o.process_start, r.status FROM run_owners o "
        "JOIN runs r ON r.id = o.run_id WHERE o.run_id = ?", (run_id,)).fetchone()


def set_owner(db, run_id: int, pid: int, host: str, started: str | None, at: str) -> None:
    """Record the run's owner and mark the run running."""
    db.conn.execute(
        "INSERT OR REPLACE INTO run_owners (run_id, pid, host, process_start, claimed_at) "
        "VALUES (?, ?, ?, ?, ?)", (run_id, pid, host, started, at))
    db.conn.execute("UPDATE runs SET status = 'running', stopped_by = NULL WHERE id = ?",
                    (run_id,))


def owner_of(store: Store, run_id: int) -> sqlite3.Row | None:
    """``pid, host, process_start`` of the run's recorded owner, or None."""
    rows = store.query("SELECT pid, host, process_start FROM run_owners WHERE run_id = ?",
                       (run_id,))
    return rows[0] if rows else None


# --------------------------------------------------------------------------- rename, delete

def name_taken(db, name: str) -> bool:
    return db.conn.execute("SELECT 1 FROM runs WHERE name = ?", (name,)).fetchone() is not None


def run_config_text(db, run_id: int) -> str | None:
    return db.conn.execute("SELECT config FROM runs WHERE id = ?", (run_id,)).fetchone()[0]


def rename(db, run_id: int, name: str, config: str) -> None:
    db.conn.execute("UPDATE runs SET name = ?, config = ? WHERE id = ?", (name, config, run_id))


def rename_dataset_unless_taken(db, old: str, new: str) -> None:
    """Dataset ``old`` becomes ``new``, unless a dataset is called ``new`` already."""
    if not db.conn.execute("SELECT 1 FROM datasets WHERE name = ?", (new,)).fetchone():
        db.conn.execute("UPDATE datasets SET name = ? WHERE name = ?", (new, old))


def item_count(db, run_id: int) -> int:
    return db.conn.execute("SELECT COUNT(*) FROM run_items WHERE run_id = ?",
                           (run_id,)).fetchone()[0]


def delete_run(db, run_id: int, *, purge_generations: bool = False) -> int:
    """Delete the run (its items, arenas, owner, counters and log cascade); with
    ``purge_generations`` the generations no other run's item points at go too. Returns how
    many generations were dropped."""
    conn = db.conn
    if purge_generations:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS _purge (key TEXT PRIMARY KEY)")
        conn.execute("DELETE FROM _purge")
        conn.execute(
            "INSERT OR IGNORE INTO _purge SELECT DISTINCT generation_key FROM run_items ri "
            "WHERE ri.run_id = ? AND ri.generation_key IS NOT NULL AND NOT EXISTS ("
            "SELECT 1 FROM run_items o WHERE o.generation_key = ri.generation_key "
            "AND o.run_id != ri.run_id)", (run_id,))
    conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
    if not purge_generations:
        return 0
    purged = conn.execute("DELETE FROM generations WHERE key IN (SELECT key FROM _purge)").rowcount
    conn.execute("DELETE FROM _purge")
    return purged
