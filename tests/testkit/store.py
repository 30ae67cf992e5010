"""Store checks shared by the import tests, and the copy of a template workspace."""

from __future__ import annotations

import sqlite3
from pathlib import Path

TABLES = ("datasets", "label_pairs", "human_labels", "queries", "chunks", "pool", "imports")


def row_counts(store) -> dict[str, int]:
    """Rows in each dataset table: what a failed import must leave unchanged."""
    return {t: store.query(f"SELECT COUNT(*) FROM {t}")[0][0] for t in TABLES}


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
