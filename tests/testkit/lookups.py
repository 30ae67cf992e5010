"""Counting the look-ups of a run by its name that came from one folder of the app (a screen's
package): every statement reading the ``runs`` table by a name, on every connection, and every
call of the store's look-ups by name. What the screens that look their run up once are held to
(``tests/tui/test_inspector_run_looked_up_once.py``, ``test_live_run_looked_up_once.py``)."""

from __future__ import annotations

import re
import traceback

import engine.store.runs as run_table
from engine.runs import lookup
from engine.store import Store

BY_NAME = re.compile(r"\bFROM runs\b.*\bname = ", re.IGNORECASE | re.DOTALL)


def trace_lookups(monkeypatch, folder: str) -> dict[str, int]:
    """``statements`` (SQL reading ``runs`` by name) and ``calls`` (the store's look-ups by
    name) whose stack passes through ``folder`` (``mirage_tui/screens/inspector/``), from here
    on; the counts grow as they come."""
    seen = {"statements": 0, "calls": 0}
    connect = Store._connect

    def from_folder() -> bool:
        return any(folder in frame.filename.replace("\\", "/")
                   for frame in traceback.extract_stack())

    def tracing(self):
        conn = connect(self)

        def trace(sql: str) -> None:
            if BY_NAME.search(sql) and from_folder():
                seen["statements"] += 1
        conn.set_trace_callback(trace)
        return conn

    def counted(module, name):
        real = getattr(module, name)

        def call(*args, **kwargs):
            seen["calls"] += from_folder()
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, call)

    monkeypatch.setattr(Store, "_connect", tracing)
    counted(lookup, "run_by_name")
    counted(run_table, "run_by_name")
    counted(run_table, "run_id_named")
    return seen
