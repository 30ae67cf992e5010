"""The model checks made in this workspace (``models.check.check_model``'s results), so that
the Models screen shows each model's latest check after a relaunch, not "—".

Every check is kept (one row each, its result as JSON); :func:`latest_model_checks` reads the
newest per model name.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from engine.store import Store, json_column


def record_model_check(store: Store, name: str, result: dict, at: str | None = None) -> None:
    """Store the check of ``name`` (the name it was asked for) made ``at`` (UTC ISO, default
    now)."""
    at = at or datetime.now(timezone.utc).isoformat(timespec="seconds")
    with store.write() as db:
        db.conn.execute(
            "INSERT INTO model_checks (name, ok, result, checked_at) VALUES (?, ?, ?, ?)",
            (name, int(bool(result.get("ok"))), json.dumps(result, default=str), at))


def latest_model_checks(store: Store) -> dict[str, dict]:
    """Each checked model's newest result, by name, with ``checked_at`` added."""
    rows = store.query(
        "SELECT name, result, checked_at FROM model_checks WHERE id IN "
        "(SELECT MAX(id) FROM model_checks GROUP BY name)")
    return {r["name"]: {**json_column(r["result"], {}), "checked_at": r["checked_at"]}
            for r in rows}
