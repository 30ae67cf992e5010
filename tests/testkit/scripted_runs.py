"""The inspection workspace of the TUI tests: the demo pool and two runs made by the real run
engine (plan, execute, scoring) with scripted generators at the edge, and an arena.

A scripted generator knows, per query, whether to answer right (with the gold answer) or wrong
in each of base, oracle and mixed, so every item's (b, o, m) pattern is known in advance:

- run ``alpha``: ``fake-a`` and ``fake-b`` on 6 sampled queries × base/oracle/mixed;
- run ``beta``: ``fake-a`` only, with other labels (for comparing runs);
- arena ``duel`` on ``alpha``: pairwise battles between the two systems' mixed answers.

:func:`build_workspace` makes it (``tests/tui/conftest.py`` once per session, copied for each
test: building runs the engine).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from engine.datasets.demo_pool import ensure_demo
from engine.runs import RunConfig, execute, plan_named
from engine.store import Store
from testkit.scripted import ScriptedGenerator, ScriptedModel, Usage

A, B = "fake-a/mirage@1", "fake-b/mirage@1"
# (base, oracle, mixed) EM_loose labels per sampled query, in plan order
LABELS = {
    "alpha": {"fake-a": [(0, 1, 0), (0, 1, 1), (0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 1)],
              "fake-b": [(0, 1, 1), (0, 1, 1), (0, 1, 0), (0, 0, 0), (1, 1, 1), (0, 1, 1)]},
    "beta": {"fake-a": [(1, 1, 1), (0, 1, 1), (0, 1, 1), (1, 0, 0), (0, 1, 1), (1, 1, 0)]},
}
FIXED_TIME = {"alpha": "2025-01-02 10:00:00", "beta": "2025-01-03 11:30:00"}
WRONG = "I am not sure."


def prompt_question(text: str) -> tuple[str, str]:
    """``(question, context)`` of a rendered MIRAGE prompt (the context empty for base)."""
    if "Context : " not in text:
        return text.split("Question: ", 1)[1].split("\n\nAnswer", 1)[0], ""
    question, _, context = text.split("Question : ", 1)[1].partition("\n\nContext : ")
    return question, context


def by_question(script: dict[str, tuple[str, tuple[int, int, int]]]):
    """Answers right ("The answer is <gold>.") or wrong ("I am not sure.") per query and
    setting, as ``script`` (question -> (gold, (base, oracle, mixed))) says."""

    def answer(text: str) -> str:
        question, context = prompt_question(text)
        slot = 0 if "Context : " not in text else 2 if context.startswith("1. ") else 1
        gold, labels = script[question]
        return f"The answer is {gold}." if labels[slot] else WRONG
    return answer


def _six_tokens(text: str) -> Usage:
    n = len(text) // 4 + 1
    return n, 6, n, 0.001


def make_run(store: Store, name: str, labels: dict | None = None,
             at: str | None = None, backend: str = ScriptedModel.backend,
             **config) -> list[int]:
    """Plan and execute run ``name`` with its scripted generators (``labels``, default
    ``LABELS[name]``; created and updated ``at``, default ``FIXED_TIME[name]``; their identity
    naming ``backend``; ``config``: other RunConfig fields, e.g. max_tokens); returns its
    query rowids in plan order."""
    labels = labels or LABELS[name]
    cfg = RunConfig(dataset="demo", generators=list(labels), settings=["base", "oracle", "mixed"],
                    sample=6, name=name, **config)
    plan = plan_named(store, cfg, check_models=False)
    queries = list(dict.fromkeys(plan.queries))
    texts = {r["id"]: (r["text"], json.loads(r["answers"])[0]) for r in store.query(
        f"SELECT id, text, answers FROM queries WHERE id IN ({','.join('?' * len(queries))})",
        tuple(queries))}
    # another script is another model (sha): the generation cache must not mix them up
    generators = {gen: ScriptedGenerator(
        gen, by_question({texts[q][0]: (texts[q][1], labels[gen][i])
                          for i, q in enumerate(queries)}),
        sha=hashlib.sha256(f"{gen}|{name}".encode()).hexdigest(), backend=backend,
        usage=_six_tokens) for gen in labels}
    summary = execute(store, plan, generators=generators)
    assert summary.status == "done", summary
    with store.write() as db:  # no clocks in snapshots
        db.conn.execute("UPDATE runs SET created_at = ?, updated_at = ? WHERE name = ?",
                        (at or FIXED_TIME[name], at or FIXED_TIME[name], name))
    return queries


def add_arena(store: Store, run: str, name: str, battles: list[tuple[int, str, str, str]],
              judge: str = "smollm2-135m-instruct", at: str | None = None) -> None:
    """An arena with battles (query rowid, system_a, system_b, winner), each shown 'ab' with
    label probabilities, as the judging engine stores them; made ``at`` (default
    ``FIXED_TIME[run]``)."""
    at = at or FIXED_TIME[run]
    run_id = store.query("SELECT id FROM runs WHERE name = ?", (run,))[0][0]
    with store.write() as db:
        cur = db.conn.execute(
            "INSERT INTO arenas (run_id, name, mode, config, header, status, created_at, "
            "updated_at) VALUES (?, ?, 'pairwise', ?, '{}', 'done', ?, ?)",
            (run_id, name, json.dumps({"judge": judge, "seed": 0}), at, at))
        for query, a, b, winner in battles:
            label = {"a": "A", "b": "B", "tie": "tie", None: None}[winner]
            probs = {"A": 0.8, "B": 0.15, "tie": 0.05} if label == "A" else \
                {"A": 0.1, "B": 0.85, "tie": 0.05} if label == "B" else \
                {"A": 0.3, "B": 0.3, "tie": 0.4}
            detail = {"orders": [{"shown": "ab", "label": label, "probs": probs,
                                  "method": "logits", "key": f"k-{query}-{a}-{b}"}],
                      "documents": 5, "disagreement": False}
            db.conn.execute(
                "INSERT INTO battles (arena_id, query_rowid, system_a, system_b, winner, shown, "
                "judgment_keys, parse_failures, refusal, detail, created_at) "
                "VALUES (?, ?, ?, ?, ?, 'ab', ?, ?, 0, ?, ?)",
                (cur.lastrowid, query, a, b, winner, json.dumps([f"k-{query}-{a}-{b}"]),
                 int(winner is None), json.dumps(detail), at))


def duel_battles(queries: list[int]) -> list[tuple[int, str, str, str]]:
    """fake-b's mixed answers beat fake-a's on 4 queries, lose on 1, tie on 1; oracle vs mixed
    of fake-a on every query (oracle wins 5, loses 1); fake-a's oracle against fake-b's (one
    verdict unparsed)."""
    am, bm, ao, bo = f"{A} | mixed", f"{B} | mixed", f"{A} | oracle", f"{B} | oracle"
    winners = ["b", "b", "a", "tie", "b", "b"]
    out = [(q, am, bm, w) for q, w in zip(queries, winners)]
    out += [(q, ao, am, "a" if i else "b") for i, q in enumerate(queries)]
    # a fourth contestant, so that the surrogate (which needs 4) can be fitted
    out += [(q, ao, bo, w) for q, w in zip(queries, ["a", "b", "a", "a", None, "tie"])]
    return out


def build_workspace(path: Path) -> dict:
    """The workspace at ``path``: ``{"path": path, "queries": {run: query rowids}}``."""
    store = Store(path)
    ensure_demo(store)
    queries = {name: make_run(store, name) for name in ("alpha", "beta")}
    add_arena(store, "alpha", "duel", duel_battles(queries["alpha"]))
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return {"path": path, "queries": queries}
