"""How long a model took to load here: the newest ``load`` line of any run's log
(``loaded generator NAME in 3.2s``, written by :mod:`engine.runs.execute`), read for the run
estimates (:mod:`engine.runs.estimates`)."""

from __future__ import annotations

import re

from engine.store.database import Store

_LOADED = re.compile(r" in ([0-9]+(?:\.[0-9]+)?)s$")


def newest_load_seconds(store: Store, what: str, name: str) -> float | None:
    """Seconds the newest logged load of ``what`` (``generator``) ``name`` took, or None."""
    literal = f"loaded {what} {name} in ".replace("\\", "\\\\").replace("%", "\\%") \
        .replace("_", "\\_")
    rows = store.query("SELECT message FROM run_log WHERE kind = 'load' AND message LIKE ? "
                       "ESCAPE '\\' ORDER BY id DESC LIMIT 1", (literal + "%s",))
    found = _LOADED.search(rows[0]["message"]) if rows else None
    return float(found.group(1)) if found else None
