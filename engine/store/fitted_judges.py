"""The ``fitted_judges`` table (migration m014): one row per fitted judge of the workspace,
written and read here, and the names of the labels datasets a fit reads;
:mod:`engine.arena.judges.fitted` turns rows into fits."""

from __future__ import annotations

import json
import sqlite3

from engine.store.database import Store

COLUMNS = ("name", "sha256", "features", "coefficients", "scale", "labels", "labels_datasets",
           "aspect", "labels_fingerprint", "config", "cv", "created_at")
JSON_COLUMNS = frozenset({"features", "coefficients", "scale", "labels_datasets", "config",
                          "cv"})


def save_fitted(store: Store, row: dict, replace: bool = True) -> bool:
    """Store one fit (``COLUMNS``; the JSON ones as Python values), replacing its name, or
    with ``replace`` False, only when the name is free (checked in the same transaction);
    whether it was stored."""
    values = [json.dumps(row[c]) if c in JSON_COLUMNS else row[c] for c in COLUMNS]
    with store.write() as db:
        if not replace and db.conn.execute("SELECT 1 FROM fitted_judges WHERE name = ?",
                                           (row["name"],)).fetchone():
            return False
        db.conn.execute("DELETE FROM fitted_judges WHERE name = ?", (row["name"],))
        db.conn.execute(f"INSERT INTO fitted_judges ({', '.join(COLUMNS)}) "
                        f"VALUES ({', '.join('?' * len(COLUMNS))})", values)
    return True


def fitted_row(store: Store, name: str) -> sqlite3.Row | None:
    rows = store.query("SELECT * FROM fitted_judges WHERE name = ?", (name,))
    return rows[0] if rows else None


def fitted_rows(store: Store) -> list[sqlite3.Row]:
    """Every fit's row, by name."""
    return store.query("SELECT * FROM fitted_judges ORDER BY name")


def labels_dataset_ref(store: Store, dataset_id: int) -> str:
    """``name@version`` of the dataset ``dataset_id`` (the labels a fit reads)."""
    row = store.query("SELECT name, version FROM datasets WHERE id = ?", (dataset_id,))[0]
    return f"{row[0]}@{row[1]}"


def verdict_labels_refs(store: Store) -> list[str]:
    """``name@version`` of every labels dataset of people's own verdicts (``verdicts:RUN``),
    by name and version."""
    return [f"{r[0]}@{r[1]}" for r in store.query(
        "SELECT name, version FROM datasets WHERE kind = 'labels' AND name LIKE 'verdicts:%' "
        "ORDER BY name, version")]
