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

from engine.datasets.labels import labels_dataset_name
from engine.runs import owner
from engine.store import claims as claim_table
from engine.runs.header import now
from engine.runs.log import LogLine, read_log
from engine.runs.lookup import run_not_found
from engine.store import Store
from engine.store import runs as run_table
from engine.store.run_log import append_log


@dataclass(frozen=True)
class Deleted:
    run: str
    items: int
    generations: int            # cached generations dropped (purge only)


def _run_id(db, store: Store, name: str) -> int:
    run_id = run_table.run_id_named(db, name)
    if run_id is None:
        raise run_not_found(store, name)
    return run_id


def run_log(store: Store, name: str) -> list[LogLine]:
    """The run's log, oldest first."""
    return read_log(store, _run_id(store.db, store, name))


def _refuse_running(db, run_id: int, name: str, doing: str) -> None:
    row = run_table.owner_with_status(db, run_id)
    if row is not None and row["status"] == "running" and owner.is_alive(row[0], row[1], row[2]):
        raise owner.RunBusy(f"run {name} is running (pid {row[0]}); cannot {doing} it until "
                            "it ends (cancel it first)")


def _refuse_judged(db, run_id: int, name: str) -> None:
    """Deleting a run pulls its answers from under a live judging of its arenas."""
    for row in claim_table.arena_claims_of_run(db, run_id):
        if owner.live_holder(tuple(row)[1:]):
            raise owner.RunBusy(f"run {name} is being judged (arena {row[0]}, pid {row[1]}); "
                                "cannot delete it until that ends (cancel it first)")


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
    new = check_new_name(new)
    with store.write() as db:
        run_id = _run_id(db, store, old)
        if new == old:
            return new
        if run_table.name_taken(db, new):
            raise ValueError(f"a run named {new!r} exists already")
        _refuse_running(db, run_id, old, "rename")
        config = json.loads(run_table.run_config_text(db, run_id) or "{}")
        config["name"] = new
        run_table.rename(db, run_id, new, json.dumps(config))
        run_table.rename_dataset_unless_taken(db, labels_dataset_name(old),
                                              labels_dataset_name(new))
        append_log(db, run_id, now(), "rename", f"renamed from {old} to {new}")
    return new


def delete_run(store: Store, name: str, *, purge_generations: bool = False) -> Deleted:
    """Delete run ``name`` in one transaction (module docstring)."""
    with store.write() as db:
        run_id = _run_id(db, store, name)
        _refuse_running(db, run_id, name, "delete")
        _refuse_judged(db, run_id, name)
        items = run_table.item_count(db, run_id)
        purged = run_table.delete_run(db, run_id, purge_generations=purge_generations)
    return Deleted(name, items, purged)
