"""Query plans in tests: what ``EXPLAIN QUERY PLAN`` says, and the check that a query looks
its tables up by index instead of scanning them."""

from __future__ import annotations


def plan(store, text: str, params) -> list[str]:
    """The plan's lines (``SEARCH ri USING ...``, ``SCAN ...``) of query ``text``."""
    return [r[3] for r in store.query(f"EXPLAIN QUERY PLAN {text}", tuple(params))]


def assert_no_scans(store, text: str, params, aliases: set[str], driver: str = "ri") -> list[str]:
    """``driver`` is searched by an index and none of ``aliases`` is scanned; the plan."""
    lines = plan(store, text, params)
    assert any(line.startswith(f"SEARCH {driver} USING") for line in lines), lines
    scans = [line for line in lines if line.startswith("SCAN") and line.split()[1] in aliases]
    assert not scans, lines
    return lines
