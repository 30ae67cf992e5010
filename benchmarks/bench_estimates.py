"""How good the time estimates are on a machine with one core kept busy: a
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
   - ``mixed run``: the quick comparison's two models (:data:`MODELS`, the second measured
     before on the measured run's queries) over those queries and ``--mixed-queries`` more,
     oracle and mixed (:data:`MIXED_SETTINGS`, the long prompts): the measured queries' items
     are in the generation cache, which the estimate counts free.
   - ``every item cached``: those cached items again under another name (~0 s to estimate).

   Each row also says how steady the ETA was after 5%: the lowest and highest ratio of an ETA
   to one at most 5 s before it, counted down (:meth:`Watch.steadiness`).

Ratios are estimate / actual (1.0: exact); the goal is within 2× (0.5–2.0) before the first
item and within 25% (0.75–1.25) after 5% of the items. ::

    nice .venv/bin/python benchmarks/bench_estimates.py [--queries 4] [--mixed-queries 3] [--doc]

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
MODELS = [MODEL, "gemma3-270m"]    # the quick comparison's two packaged models
SETTINGS = ["base", "oracle", "mixed"]
MIXED_SETTINGS = ["oracle", "mixed"]   # the long prompts
BEFORE_GOAL, AFTER_GOAL = 2.0, 0.25


def _busy_loop() -> None:
    while True:
        pass


class Watch:
    """The ETA of a job's events: the first one after ``at`` steps ended, with the moment."""

    def __init__(self, at: int):
        self.at, self.started, self.seen = at, time.perf_counter(), None
        self.first_step_s: float | None = None
        self.etas: list[tuple[float, float]] = []      # (moment, ETA) after ``at`` steps

    def __call__(self, event) -> None:
        if event.status != "running":
            return
        moment = time.perf_counter() - self.started
        if event.done >= 1 and self.first_step_s is None:
            self.first_step_s = moment
        if self.seen is None and event.done >= self.at and event.eta_seconds is not None:
            self.seen = (moment, event.eta_seconds, event.done)
        if self.seen is not None and event.eta_seconds is not None:
            self.etas.append((moment, event.eta_seconds))

    def steadiness(self, window: float = 5.0) -> dict | None:
        """The ETA after ``at`` steps against itself counted down: over every stretch of up to
        ``window`` seconds, the largest fall and rise (ratio of the later ETA to the earlier
        one less the time between; a halving within seconds is 0.5)."""
        pairs = [(later[1] + 1.0) / (max(0.0, earlier[1] - (later[0] - earlier[0])) + 1.0)
                 for i, earlier in enumerate(self.etas) for later in self.etas[i + 1:]
                 if later[0] - earlier[0] <= window]
        if not pairs:
            return None
        return {"window_s": window, "lowest": round(min(pairs), 2),
                "highest": round(max(pairs), 2), "etas": len(self.etas)}


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
        out["steadiness"] = watch.steadiness()
    return out


def run_once(store, name: str, queries: int, seed: int, max_tokens: int,
             models: list[str] | None = None, settings: list[str] | None = None
             ) -> tuple[dict, object]:
    from engine.runs import RunConfig, execute, plan_named
    from engine.runs.estimates import estimate_remaining

    models = models or [MODEL]
    config = RunConfig(dataset="demo", generators=models, settings=settings or SETTINGS,
                       sample=queries, seed=seed, max_tokens=max_tokens, name=name)
    plan = plan_named(store, config, check_models=False)
    before = estimate_remaining(store, plan)          # probes the load now (1 s)
    timed = plan.count - before["cached"]             # the cache's items are free
    watch = Watch(max(1, math.ceil(0.05 * plan.count)))
    watch.started = time.perf_counter()
    summary = execute(store, plan, progress=watch)
    took = time.perf_counter() - watch.started
    assert summary.status == "done", summary
    gens = [before["generators"][m] for m in models]
    out = _versus(before["seconds"], took, watch, plan.count,
                  " | ".join(g["load_note"] for g in gens[:1]),
                  " | ".join(f"{m}: {g['speed']}" if len(models) > 1 else g["speed"]
                             for m, g in zip(models, gens)))
    out.update(cached=before["cached"], timed_items=timed, cached_in_run=summary.cached)
    return out, plan


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
    if row.get("cached") == row["steps"]:          # nothing to time: ~0 s, as it took
        return {"before": row["estimate_before_s"] <= max(1.0, row["seconds"])}
    five = (row["after_5_percent"] or {}).get("ratio")
    return {"before": bool(1 / BEFORE_GOAL <= row["ratio_before"] <= BEFORE_GOAL),
            "after_5_percent": bool(five is not None and abs(five - 1) <= AFTER_GOAL)}


def _steadiness(row: dict) -> str:
    steady = row.get("steadiness")
    if not steady:
        return "-"
    return f"{steady['lowest']:.2f}–{steady['highest']:.2f}×"


def table(results: dict) -> str:
    lines = ["| what (one core busy) | steps (cached) | took | before: estimate (ratio) | "
             "after 5%: ETA vs left (ratio) | ETA within 5 s | goals |",
             "|---|---|---|---|---|---|---|"]
    for row in results["busy"]:
        five = row["after_5_percent"] or {}
        goals = met(row)
        missed = ", ".join(k for k, v in goals.items() if not v)
        after = (f"{five.get('eta_s', 0):.0f}s vs {five.get('actual_left_s', 0):.0f}s "
                 f"({five.get('ratio') or 0:.2f}×)" if five else "-")
        lines.append(
            f"| {row['what']} | {row['steps']} ({row.get('cached', 0)}) | "
            f"{row['seconds']:.0f}s | "
            f"{row['estimate_before_s']:.0f}s ({row['ratio_before']:.2f}×) | {after} | "
            f"{_steadiness(row)} | {'no: ' + missed if missed else 'yes'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--measure-queries", type=int, default=2)
    parser.add_argument("--queries", type=int, default=4)
    parser.add_argument("--judge-queries", type=int, default=2)
    parser.add_argument("--mixed-queries", type=int, default=3,
                        help="queries of the mixed run beyond the measured run's (cached)")
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
    # the second model measured on the same queries: the mixed run finds them in the cache
    other, _ = run_once(store, "measured-2", args.measure_queries, 1, args.max_tokens,
                        MODELS[1:])
    other["what"] = f"measured run of {MODELS[1]} (the machine as it is)"
    print(json.dumps(other, ensure_ascii=False), flush=True)
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
        busy.append({"what": "mixed run, 2 models (cached items)",
                     **run_once(store, "mixed", args.measure_queries + args.mixed_queries, 1,
                                args.max_tokens, MODELS, MIXED_SETTINGS)[0]})
        print(json.dumps(busy[-1], ensure_ascii=False), flush=True)
        busy.append({"what": "every item cached",
                     **run_once(store, "again", args.measure_queries, 1, args.max_tokens,
                                MODELS, MIXED_SETTINGS)[0]})
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
               "model": MODEL, "models": MODELS, "settings": SETTINGS,
               "mixed_settings": MIXED_SETTINGS, "max_tokens": args.max_tokens,
               "busy_loops": args.busy,
               "load_before": quiet.as_json() if quiet else None,
               "load_busy_end": during.as_json() if during else None,
               "seconds": round(time.perf_counter() - started, 1),
               "measured": measured, "measured_second_model": other, "busy": busy,
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
