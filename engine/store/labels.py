"""Human pairwise labels (migration m001's ``label_pairs`` and ``human_labels``): a labels
dataset's answer pairs and each person's labels, written by the importer inside its
transaction and read back by :mod:`engine.datasets.labels`."""

from __future__ import annotations

import sqlite3
from typing import Iterable

import sqlite_utils

from engine.store.database import Store


def insert_label_pairs(db: sqlite_utils.Database, pairs: Iterable[tuple[tuple, Iterable[tuple]]]
                       ) -> None:
    """Each pair as ((dataset_id, pair_id, query, reference, answer_a, answer_b, domain,
    metadata), its labels as rows of (annotator, aspect, label, note)), inside the ``db``
    transaction of an import."""
    for values, labels in pairs:
        rowid = db.conn.execute(
            "INSERT INTO label_pairs (dataset_id, pair_id, query, reference, answer_a, "
            "answer_b, domain, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", values).lastrowid
        db.conn.executemany(
            "INSERT INTO human_labels (pair_rowid, annotator, aspect, label, note) "
            "VALUES (?, ?, ?, ?, ?)", ((rowid, *label) for label in labels))


def label_pair_rows(store: Store, dataset_id: int) -> list[sqlite3.Row]:
    """The dataset's answer pairs, in file order."""
    return store.query("SELECT * FROM label_pairs WHERE dataset_id = ? ORDER BY id",
                       (dataset_id,))


def human_label_rows(store: Store, dataset_id: int) -> list[sqlite3.Row]:
    """(``pair_rowid``, ``annotator``, ``aspect``, ``label``) of every label on the dataset's
    pairs, in the order they were stored."""
    return store.query("SELECT l.pair_rowid, l.annotator, l.aspect, l.label FROM human_labels "
                       "l JOIN label_pairs p ON p.id = l.pair_rowid WHERE p.dataset_id = ? "
                       "ORDER BY l.rowid", (dataset_id,))


def labels_dataset_rows(store: Store) -> list[sqlite3.Row]:
    """(``id``, ``name``, ``version``, ``n`` pairs) of every labels dataset, by name and
    version."""
    return store.query(
        "SELECT d.id, d.name, d.version, (SELECT COUNT(*) FROM label_pairs p WHERE "
        "p.dataset_id = d.id) AS n FROM datasets d WHERE d.kind = 'labels' "
        "ORDER BY d.name, d.version")


def label_aspects(store: Store, dataset_id: int) -> tuple[str, ...]:
    """The aspects the dataset's labels are on, in order."""
    return tuple(a[0] for a in store.query(
        "SELECT DISTINCT l.aspect FROM human_labels l JOIN label_pairs p ON "
        "p.id = l.pair_rowid WHERE p.dataset_id = ? ORDER BY l.aspect", (dataset_id,)))
