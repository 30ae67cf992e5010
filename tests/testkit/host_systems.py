"""A workspace whose systems tell apart only by a part in their middle (issue 36, item 6):
four endpoint models on one host (``http://127.0.0.1:8082/v1#MODEL/mirage@1``), each run in
base, oracle, mixed and retrieved@3 by three retrievers that share a name and differ only by
their index hash (``minilm-l6-v2#…82239``), all by the real run engine with scripted
generators; an arena of their contestants, twelve of them; and a second run of two of them.

:func:`build_host_workspace` makes it; ``MODELS``, ``SYSTEMS``, ``RETRIEVERS`` name what it
holds.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from engine.arena.types import arena_system
from engine.datasets.demo_pool import ensure_demo
from engine.runs import RunConfig, execute, plan_named
from engine.store import Store
from testkit.runs import BackwardsRetriever
from testkit.scripted import ScriptedGenerator, context_start
from testkit.scripted_runs import add_arena

HOST = "http://127.0.0.1:8082/v1"
MODELS = ["gemma3-270m", "gemma3-1b", "qwen2.5-0.5b-instruct", "smollm2-135m-instruct"]
SYSTEMS = [f"{HOST}#{m}/mirage@1" for m in MODELS]
RETRIEVERS = {"r1": "minilm-l6-v2#0a182239", "r2": "minilm-l6-v2#1b282239",
              "r3": "minilm-l6-v2#2c382239"}
SETTINGS = [f"retrieved@3:{label}" for label in RETRIEVERS.values()]
RUN, SECOND = "hosts", "hosts-again"
AT = "2025-02-03 09:00:00"


def _generator(model: str) -> ScriptedGenerator:
    """Answers with the start of its first context chunk: long enough to hold the gold
    answer for two of the models, so that comparing them finds flipped items."""
    cut = (20, 400, 60, 400)[MODELS.index(model)]
    return ScriptedGenerator(f"{HOST}#{model}", lambda text: context_start(text, cut),
                             sha=hashlib.sha256(model.encode()).hexdigest(),
                             usage=lambda text: (len(text) // 4, 6, len(text) // 4, 0.001))


def _run(store: Store, name: str, models: list[str], sample: int) -> list[int]:
    config = RunConfig(dataset="demo", generators=[f"{HOST}#{m}" for m in models],
                       settings=["base", "oracle", "mixed", "retrieved@3"],
                       retrievers=list(RETRIEVERS), sample=sample, seed=0, name=name)
    plan = plan_named(store, config, check_models=False)
    summary = execute(store, plan, generators={f"{HOST}#{m}": _generator(m) for m in models},
                      retrievers={key: BackwardsRetriever(store, label, stores=True)
                                  for key, label in RETRIEVERS.items()})
    assert summary.status == "done", summary.message
    with store.write() as db:   # no clocks in what a test compares
        db.conn.execute("UPDATE runs SET created_at = ?, updated_at = ? WHERE name = ?",
                        (AT, AT, name))
    return list(dict.fromkeys(plan.queries))


def contestants() -> list[str]:
    """The arena's twelve contestants: each system with each retriever's setting."""
    return [arena_system(s, setting) for s in SYSTEMS for setting in SETTINGS]


def build_host_workspace(path: Path) -> dict:
    """The workspace at ``path``: ``{"path", "queries"}`` (run ``hosts``' query rowids)."""
    store = Store(path)
    ensure_demo(store)
    queries = _run(store, RUN, MODELS, 4)
    _run(store, SECOND, MODELS[:2], 2)
    names = contestants()
    battles = []
    for q_index, q in enumerate(queries):      # a round robin on every query
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                winner = "a" if (i + q_index) % 3 else "b"
                battles.append((q, a, b, winner))
    add_arena(store, RUN, "hosts-duel", battles, at=AT)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return {"path": path, "queries": queries}
