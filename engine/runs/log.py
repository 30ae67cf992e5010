"""A run's log: the ``run_log`` table, one line per thing worth knowing afterwards.

The run's job (:mod:`engine.runs.execute`) writes a line, with a UTC timestamp, when a session
starts (new or resumed, how many items were stored already), a model loads (and how long it
took), a request needed retries, an item failed, a server's refusal taught the run its
context (``context``), a model host died (each death, from the generator's
``take_host_events``), and when the session ends (done, cancelled or failed, with its
message). Renaming writes one too (:mod:`engine.runs.manage`).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.runs.header import now
from engine.store import Store
from engine.store.run_log import append_log, log_rows

KINDS = ("session", "load", "retry", "error", "context", "end", "rename", "host")


@dataclass(frozen=True)
class LogLine:
    at: str             # "YYYY-MM-DD HH:MM:SS", UTC
    kind: str           # one of KINDS
    message: str


def log_event(store: Store, run_id: int, kind: str, message: str) -> None:
    """Append one line to the run's log (its own small transaction)."""
    with store.write() as db:
        append_log(db, run_id, now(), kind, message)


def read_log(store: Store, run_id: int) -> list[LogLine]:
    """The run's log, oldest first."""
    return [LogLine(r[0], r[1], r[2]) for r in log_rows(store, run_id)]
