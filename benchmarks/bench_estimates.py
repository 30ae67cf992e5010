"""How good the time estimates are on a machine with one core kept busy (issues 27 and 36): a
small real run and real judging with the packaged SmolLM2, the estimate before the first item
and the live ETA after 5% of the items, against the time really taken.

1. **Measured** (the machine as it is): in a fresh workspace (the demo pool), a run of SmolLM2
   over ``--measure-queries`` seeded queries (base, oracle, mixed; greedy, ``--max-tokens``
   new tokens), in its own model host as the app runs it. Its generations are the speed the
   estimates start from; its session keeps the machine's load (a 1-second probe just before).
2. **Busy**: a busy-loop process started by this benchmark keeps one core busy (stopped at the
   end). Then, each timed from its estimate to its end:

   - ``run``: another run of SmolLM2 over ``--queries`` other queries. The estimate before it
     (:func:`engine.runs.estimates.estimate_remaining`: what New run and ``run --dry-run``
     show, the load now probed and corrected for) and the ETA of the run's events after 5% of
     its items (at least one) ended, each against the time really left.
   - ``judging (from the run)``: judging that run's answers with SmolLM2 (``arena judge …
     --judge smollm2``, pairwise, ``--judge-queries`` queries): the estimate before
     (:func:`engine.arena.judging.estimate.judging_estimate`, what ``--dry-run`` and the judge
     dialog show: the judge's speed from its generations) and the judging's ETA after 5% of
     its battles.
   - ``judging (from judging)``: judging the measured run's answers the same way: now the
     judge's own judge calls are the newest measurement.

Ratios are estimate / actual (1.0: exact); the goal is within 2× (0.5–2.0) before the first
item and within 25% (0.75–1.25) after 5% of the items. ::

    nice .venv/bin/python benchmarks/bench_estimates.py [--queries 4] [--doc]

Writes benchmarks/results/estimates.json; ``--doc`` also writes its table into
docs/estimates.md between :data:`BEGIN` and :data:`END`.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "benchmarks" / "results" / "estimates.json"
PAGE = ROOT / "docs" / "estimates.md"
BEGIN = "<!-- estimates-table:begin (benchmarks/bench_estimates.py) -->"
END = "<!-- estimates-table:end -->"
MODEL = "smollm2"                 # as a user types it; the catalog's smollm2-135m-instruct
SETTINGS = ["base", "oracle", "mixed"]
BEFORE_GOAL, AFTER_GOAL = 2.0, 0.25


def _busy_loop() -> None:
    while True:
        pass


class Watch:
    """The ETA of a job's events: the first one after ``at`` steps ended, with the moment."""

    def __init__(self, at: int):
        self.at, self.started, self.seen = at, time.perf_counter(), None
        self.first_step_s: float | None = None

    def __call__(self, event) -> None:
        if event.status != "running":
            return
        moment = time.perf_counter() - self.started
        if event.done >= 1 and self.first_step_s is None:
            self.first_step_s = moment
        if self.seen is None and event.done >= self.at and event.eta_seconds is not None:
            self.seen = (moment, event.eta_seconds, event.done)


def _versus(before_s: float, took: float, watch: Watch, steps: int, load_note: str,
            speed: str) -> dict:
    out = {"steps": steps, "seconds": round(took, 1), "estimate_before_s": round(before_s, 1),
           "ratio_before": round(before_s / took, 2), "speed": speed, "load_note": load_note,
           "first_step_s": None if watch.first_step_s is None else round(watch.first_step_s, 1),
           "after_5_percent": None}
    if watch.seen is not None:
        moment, eta, done = watch.seen
        left = took - moment
        out["after_5_percent"] = {"at_s": round(moment, 1), "steps_done": done,
                                  "eta_s": round(eta, 1), "actual_left_s": round(left, 1),
                                  "ratio": round(eta / left, 2) if left > 0 else None}
    return out


def run_once(store, name: str, queries: int, seed: int, max_tokens: int) -> tuple[dict, object]:
    from engine.runs import RunConfig, execute, plan_named
    from engine.runs.estimates import estimate_remaining

    config = RunConfig(dataset="demo", generators=[MODEL], settings=SETTINGS, sample=queries,
                       seed=seed, max_tokens=max_tokens, name=name)
    plan = plan_named(store, config, check_models=False)
    watch = Watch(max(1, math.ceil(0.05 * plan.count)))
    before = estimate_remaining(store, plan)          # probes the load now (1 s)
    watch.started = time.perf_counter()
    summary = execute(store, plan, progress=watch)
    took = time.perf_counter() - watch.started
    assert summary.status == "done", summary
    g = before["generators"][MODEL]
    return _versus(before["seconds"], took, watch, plan.count, g["load_note"], g["speed"]), plan


def judge_once(store, run_name: str, queries: int) -> dict:
    from engine.arena.judging.job import judge_arena
    from engine.arena.judging.estimate import judging_estimate
    from engine.runs.lookup import load_run

    run = load_run(store, run_name)
    before = judging_estimate(store, run, MODEL, queries)
    watch = Watch(max(1, math.ceil(0.05 * before["battles"])))
    watch.started = time.perf_counter()
    summary = judge_arena(store, run, MODEL, queries=queries, progress=watch)
    took = time.perf_counter() - watch.started
    assert summary.status == "done", summary
    return _versus(before["seconds"], took, watch, before["battles"], before["load_note"],
                   before["speed"])


def met(row: dict) -> dict:
    five = (row["after_5_percent"] or {}).get("ratio")
    return {"before": bool(1 / BEFORE_GOAL <= row["ratio_before"] <= BEFORE_GOAL),
            "after_5_percent": bool(five is not None and abs(five - 1) <= AFTER_GOAL)}


def table(results: dict) -> str:
    lines = ["| what (one core busy) | steps | took | before: estimate (ratio) | "
             "after 5%: ETA vs left (ratio) | both goals |",
             "|---|---|---|---|---|---|"]
    for row in results["busy"]:
        five = row["after_5_percent"] or {}
        goals = met(row)
        missed = ", ".join(k for k, v in goals.items() if not v)
        lines.append(
            f"| {row['what']} | {row['steps']} | {row['seconds']:.0f}s | "
            f"{row['estimate_before_s']:.0f}s ({row['ratio_before']:.2f}×) | "
            f"{five.get('eta_s', 0):.0f}s vs {five.get('actual_left_s', 0):.0f}s "
            f"({five.get('ratio') or 0:.2f}×) | "
            f"{'no: ' + missed if missed else 'yes'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--measure-queries", type=int, default=2)
    parser.add_argument("--queries", type=int, default=4)
    parser.add_argument("--judge-queries", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--busy", type=int, default=1,
                        help="busy-loop processes (cores kept busy)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-estimates-"))
    os.environ.setdefault("MIRAGE_DATA_DIR", str(folder / "data"))   # hosts of our own

    from engine import machine_load
    from engine.datasets.demo_pool import ensure_demo
    from engine.store import Store
    from models.host import stop_hosts

    store = Store(folder / "w.db")
    ensure_demo(store)
    started = time.perf_counter()
    quiet = machine_load.probe()
    measured, _ = run_once(store, "measured", args.measure_queries, 1, args.max_tokens)
    measured["what"] = "measured run (the machine as it is)"
    print(json.dumps(measured, ensure_ascii=False), flush=True)
    hogs = [multiprocessing.Process(target=_busy_loop, daemon=True) for _ in range(args.busy)]
    for hog in hogs:
        hog.start()
    busy = []
    try:
        time.sleep(1.0)                     # the hogs are running before the probe
        row, _ = run_once(store, "busy", args.queries, 2, args.max_tokens)
        busy.append({"what": "run", **row})
        print(json.dumps(busy[-1], ensure_ascii=False), flush=True)
        busy.append({"what": "judging (speed from the runs)",
                     **judge_once(store, "busy", args.judge_queries)})
        print(json.dumps(busy[-1], ensure_ascii=False), flush=True)
        busy.append({"what": "judging (speed from the judging)",
                     **judge_once(store, "measured", args.judge_queries)})
        print(json.dumps(busy[-1], ensure_ascii=False), flush=True)
        during = machine_load.probe()
    finally:
        for hog in hogs:
            hog.terminate()
            hog.join()
        stop_hosts()
        store.close()
    results = {"benchmark": "bench_estimates", "machine": platform.platform(),
               "cpus": os.cpu_count(), "python": platform.python_version(),
               "model": MODEL, "settings": SETTINGS, "max_tokens": args.max_tokens,
               "busy_loops": args.busy,
               "load_before": quiet.as_json() if quiet else None,
               "load_busy_end": during.as_json() if during else None,
               "seconds": round(time.perf_counter() - started, 1),
               "measured": measured, "busy": busy,
               "goals_met": {row["what"]: met(row) for row in busy},
               "goal": "estimate within 2x of the time taken before the first item, within "
                       "25% after 5% of the items, with one core kept busy"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    print(table(results))
    if args.doc:
        text = PAGE.read_text(encoding="utf-8")
        head, _, rest = text.partition(BEGIN)
        _, _, tail = rest.partition(END)
        if not rest:
            raise SystemExit(f"{PAGE} has no {BEGIN} marker")
        PAGE.write_text(f"{head}{BEGIN}\n{table(results)}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
