"""Runs for the HTML-page tests, made by the real run engine on the demo pool with instant
scripted generators at the edge:

- :func:`hostile_run`: run ``hostile`` of two generators whose replies are markup meant to run
  (a ``<script>``, an ``<img onerror=…>``, a ``</script>`` breaking out of a data element), over
  a question and a passage rewritten to carry the same;
- :func:`sized_run`: run ``sized`` of about ``items`` items (six generators × base, oracle,
  mixed × as many demo queries as it takes);
- :func:`calibrated`: a stored calibration of a scripted judge (it prefers the longer answer,
  as the labels' people do) against a small labels dataset.
"""

from __future__ import annotations

import hashlib
import json

from engine.datasets.demo_pool import ensure_demo
from engine.runs import RunConfig, execute, plan_named
from engine.store import Store
from testkit.scripted import ScriptedGenerator
from testkit.scripted_runs import prompt_question

PAYLOADS = (
    '<script>window.__pwned = "script";</script>',
    '<img src=x onerror="window.__pwned = \'onerror\'">',
    '</script><script>window.__pwned = "breakout"</script><!--',
)
"""What a hostile reply or dataset text holds; none of it may act on the page."""


class InstantGenerator(ScriptedGenerator):
    """Right (the gold answer) or wrong by a hash of the prompt and the generator's name, at
    once; ``reply`` replaces every wrong answer when given."""

    def __init__(self, name: str, golds: dict[str, str], reply: str | None = None):
        def answer(text: str) -> str:
            question, _ = prompt_question(text)
            right = hashlib.sha256(f"{name}|{text}".encode()).digest()[0] < 110
            return (f"The answer is {golds.get(question.strip(), '?')}." if right
                    else reply or "I am not sure.")

        super().__init__(name, answer,
                         sha=hashlib.sha256(f"instant|{name}|{reply}".encode()).hexdigest(),
                         usage=lambda text: (len(text) // 4 + 1, 6, len(text) // 4 + 1, 0.0))


def _golds(store: Store) -> dict[str, str]:
    return {r[0].strip(): json.loads(r[1])[0]
            for r in store.query("SELECT text, answers FROM queries")}


def _run(store: Store, name: str, generators: dict, sample: int) -> None:
    cfg = RunConfig(dataset="demo", generators=list(generators),
                    settings=["base", "oracle", "mixed"], sample=sample, seed=0, name=name)
    summary = execute(store, plan_named(store, cfg, check_models=False), generators=generators)
    assert summary.status == "done", summary


def hostile_run(store: Store) -> None:
    """Run ``hostile`` (see the module docstring): 6 queries × 2 generators × 3 settings."""
    ensure_demo(store)
    with store.write() as db:   # untrusted dataset text too: a question and a passage
        db.conn.execute("UPDATE queries SET text = text || ? WHERE id = (SELECT MIN(id) FROM "
                        "queries)", (" " + PAYLOADS[0],))
        db.conn.execute("UPDATE chunks SET text = text || ? WHERE id IN (SELECT chunk_rowid "
                        "FROM pool)", (" " + PAYLOADS[1],))
    golds = _golds(store)
    generators = {"evil-a": InstantGenerator("evil-a", golds, " ".join(PAYLOADS)),
                  "evil-b": InstantGenerator("evil-b", golds, PAYLOADS[2] + PAYLOADS[1])}
    _run(store, "hostile", generators, sample=6)


def sized_run(store: Store, items: int = 1000) -> int:
    """Run ``sized`` of at least ``items`` items; returns how many it has."""
    ensure_demo(store)
    golds = _golds(store)
    generators = {f"gen-{k}": InstantGenerator(f"gen-{k}", golds) for k in range(6)}
    queries = -(-items // (3 * len(generators)))
    _run(store, "sized", generators, sample=queries)
    return store.query("SELECT COUNT(*) FROM run_items WHERE run_id = (SELECT id FROM runs "
                       "WHERE name = 'sized')")[0][0]


def _longer_wins(shown: dict) -> str:
    one, two = shown["Answer 1"], shown["Answer 2"].split("\n\n")[0]   # the reply cue follows
    return "1" if len(one) > len(two) else "2"


def calibrated(store: Store, folder, judge: str = "fake-judge") -> None:
    """Labels ``people`` (6 pairs, two annotators, domains x and y) and the scripted ``judge``'s
    calibration against them, both orders."""
    from pathlib import Path

    from engine.arena.trust.calibrate import calibrate_judge
    from engine.datasets.importing import import_path
    from testkit.scripted import ScriptedJudge

    rows = [{"query": f"q{i}", "answer_a": "short" if i % 2 else "a much longer answer",
             "answer_b": "a much longer answer" if i % 2 else "short",
             "label": 2 if i % 2 else -1, "annotator": who, "domain": "x" if i < 3 else "y"}
            for i in range(6) for who in ("ann", "bob")]
    path = Path(folder) / "people.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    import_path(store, path)
    calibrate_judge(store, "people", ScriptedJudge(_longer_wins, name=judge),
                    both_orders=True, n_boot=100)
