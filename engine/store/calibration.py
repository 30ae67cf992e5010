"""The ``calibrations`` table (migration m007): one row per judge calibration against a labels
dataset, written and read here; :mod:`engine.arena.trust.calibrate` computes them and turns rows into
:class:`~engine.arena.trust.calibrate.StoredCalibration` s. A row's labels are named
``name@version`` (its dataset's)."""

from __future__ import annotations

import json
import sqlite3

from engine.store.database import Store

_LABELS = "d.name || '@' || d.version AS labels"


def save_calibration(store: Store, dataset_id: int, judge_key: str, judge_name: str,
                     template: str, aspect: str, config: dict, figures: dict, verdicts: list,
                     created_at: str) -> int:
    """Store one calibration (one transaction); its id."""
    with store.write() as db:
        return db.conn.execute(
            "INSERT INTO calibrations (dataset_id, judge_key, judge_name, template, aspect, "
            "config, figures, verdicts, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (dataset_id, judge_key, judge_name, template, aspect,
             json.dumps(config, ensure_ascii=False, default=str), json.dumps(figures),
             json.dumps(verdicts), created_at)).lastrowid


def newest_calibration_row(store: Store, judge: str | None = None, template: str | None = None,
                           judge_key: str | None = None,
                           calibration_id: int | None = None) -> sqlite3.Row | None:
    """Every column of the newest calibration matching the filters given (judge name,
    template, judge identity key, id) and its ``labels``; None when there is none."""
    where, params = [], []
    for column, value in (("c.judge_name", judge), ("c.template", template),
                          ("c.judge_key", judge_key), ("c.id", calibration_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    rows = store.query(
        f"SELECT c.*, {_LABELS} FROM calibrations c JOIN datasets d ON d.id = c.dataset_id"
        + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY c.id DESC LIMIT 1",
        tuple(params))
    return rows[0] if rows else None


def calibration_listing_rows(store: Store, judge: str | None = None) -> list[sqlite3.Row]:
    """``id, judge_name, template, aspect, config, created_at, labels`` of every calibration
    (of one judge, by name), oldest first."""
    return store.query(
        "SELECT c.id, c.judge_name, c.template, c.aspect, c.config, c.created_at, "
        f"{_LABELS} FROM calibrations c JOIN datasets d ON d.id = c.dataset_id"
        + (" WHERE c.judge_name = ?" if judge is not None else "") + " ORDER BY c.id",
        (judge,) if judge is not None else ())


def newest_calibration_ids(store: Store, labels: str | None = None) -> list[int]:
    """The id of the newest calibration of each (judge identity, template, aspect, labels
    dataset, order), of one labels dataset (``name@version`` or ``name``) when given."""
    return [r[0] for r in store.query(
        "SELECT MAX(c.id) FROM calibrations c JOIN datasets d ON d.id = c.dataset_id "
        + ("WHERE d.name || '@' || d.version = ? OR d.name = ? " if labels else "")
        + "GROUP BY c.judge_key, c.template, c.aspect, c.dataset_id, "
          "COALESCE(json_extract(c.config, '$.order'), json_extract(c.config, '$.orders'))",
        (labels, labels) if labels else ())]


def calibrated_judge_names(store: Store) -> list[str]:
    """Every judge name a calibration is stored under, by name."""
    return [r[0] for r in store.query(
        "SELECT DISTINCT judge_name FROM calibrations ORDER BY judge_name")]
