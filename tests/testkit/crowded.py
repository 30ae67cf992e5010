"""A crowded run beside the inspection workspace's (:mod:`testkit.scripted_runs`), as a quick
comparison leaves it (issue 34): four generators with long real names × base, oracle and mixed
(12 systems) on 6 queries, and an arena in which every pair met on every query in both orders
(792 battles, 132 per system: three-digit counts), its winners drawn from each system's
strength with a fixed seed, so that several systems share rank 1.

:func:`add_crowd` adds it to a copy of the workspace; ``tests/tui`` takes it as the ``crowded``
fixture (tests/conftest.py)."""

from __future__ import annotations

import random

from engine.store import Store
from testkit.scripted_runs import add_arena, make_run

RUN, ARENA = "crowd", "crowd-arena"
GENERATORS = ("smollm2-135m-instruct", "gemma3-270m", "qwen2.5-0.5b-instruct-q4_k_m",
              "llama-3.2-1b-instruct")
SETTINGS = ("base", "oracle", "mixed")
# (base, oracle, mixed) EM_loose per query: each generator right more often with context
LABELS = {
    GENERATORS[0]: [(0, 1, 1), (0, 1, 0), (1, 1, 1), (0, 0, 0), (0, 1, 1), (0, 1, 1)],
    GENERATORS[1]: [(0, 0, 0), (0, 1, 0), (0, 1, 1), (0, 0, 0), (1, 1, 0), (0, 0, 1)],
    GENERATORS[2]: [(1, 1, 1), (0, 1, 1), (0, 1, 0), (1, 1, 1), (0, 1, 1), (0, 0, 0)],
    GENERATORS[3]: [(0, 1, 0), (0, 0, 0), (0, 1, 1), (1, 0, 0), (0, 1, 0), (0, 0, 1)],
}
FIXED_TIME = "2025-01-04 09:15:00"


def systems() -> list[str]:
    """The arena's contestants, ``GENERATOR/mirage@1 | SETTING``."""
    return [f"{g}/mirage@1 | {s}" for g in GENERATORS for s in SETTINGS]


def crowd_battles(queries: list[int], seed: int = 34) -> list[tuple[int, str, str, str]]:
    """Every pair of :func:`systems` on every query, both orders; the stronger side (a
    strength per system) wins more often, a tie now and then."""
    rng = random.Random(seed)
    names = systems()
    strength = {s: 1.0 + 0.15 * ((i * 7) % len(names)) for i, s in enumerate(names)}
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for q in queries:
                for first, second in ((a, b), (b, a)):
                    draw = rng.random() * (strength[first] + strength[second] + 0.4)
                    winner = "a" if draw < strength[first] else \
                        "b" if draw < strength[first] + strength[second] else "tie"
                    out.append((q, first, second, winner))
    return out


def add_crowd(path) -> list[int]:
    """Add the crowded run and its arena to the workspace at ``path``; returns the run's query
    rowids in plan order (:data:`LABELS`' order)."""
    store = Store(path)
    try:
        queries = make_run(store, RUN, labels=LABELS, at=FIXED_TIME)
        add_arena(store, RUN, ARENA, crowd_battles(queries), at=FIXED_TIME)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    return queries
