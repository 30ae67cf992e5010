"""Store checks shared by the import tests, and template workspaces: an idle machine while
one is built, its copy per test."""

from __future__ import annotations

import sqlite3
from pathlib import Path

TABLES = ("datasets", "label_pairs", "human_labels", "queries", "chunks", "pool", "imports")


def row_counts(store) -> dict[str, int]:
    """Rows in each dataset table: what a failed import must leave unchanged."""
    return {t: store.query(f"SELECT COUNT(*) FROM {t}")[0][0] for t in TABLES}


def idle_machine_load(monkeypatch):
    """The machine's load as the time estimates and run headers see it
    (``engine.machine_load.load_now``): idle, under ``monkeypatch``; the idle load. The
    ``idle_machine`` fixture of every test, and a template workspace built outside a test."""
    from engine import machine_load

    idle = machine_load.MachineLoad(0.0, 2, "idle in tests")
    monkeypatch.setattr(machine_load, "load_now", lambda wait=True: idle)
    return idle


def copy_workspace(source: Path, target: Path) -> Path:
    """A consistent copy of the workspace file ``source`` at ``target`` (SQLite's online
    backup: a template's WAL is folded in); ``target``."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target
