"""How good the time estimates are (issue 27): a small real run of the packaged models, its
estimate before the first item and the Live ETA after 5% of its items, against the time the
run really took, on the machine as it is and with a synthetic load.

1. A model check of each generator (``models.check.check_model``, the ``c`` on Models) on the
   machine as it is, kept in every workspace: the speeds the estimate starts from.
2. For each condition (``as is``; ``loaded``: one busy-loop process per core, started by this
   benchmark and stopped after), a fresh workspace (nothing cached, the demo pool), a run of
   the packaged generators over N seeded queries (base, oracle, mixed; greedy, ``--max-tokens``
   new tokens), each model in its own host as the app runs it (the hosts the checks started,
   shared by the conditions as the app's runs share them). Recorded: the estimate before
   the run (:func:`engine.runs.estimates.estimate_remaining`, what New run and ``--dry-run``
   show, load included) and the ETA of the run's events: its first one (before the first item
   ends) and the first after 5% of the items (at least one) ended, each against the time that
   was really left; and whether Live's busy-machine note came up.

Ratios are estimate / actual (1.0: exact); the goal is within 2× before the first item and
within 25% after 5% of the items. ::

    nice .venv/bin/python benchmarks/bench_estimates.py [--queries 2] [--max-tokens 32]

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
GENERATORS = ("smollm2-135m-instruct", "gemma3-270m")


def _busy_loop() -> None:
    while True:
        pass


def one_run(folder: Path, tag: str, checks: dict, queries: int, max_tokens: int) -> dict:
    from engine.datasets.demo_pool import ensure_demo
    from engine.runs import RunConfig, execute, plan_run
    from engine.runs.estimates import estimate_remaining, record_model_check
    from engine.store import Store

    store = Store(folder / f"{tag}.db")
    ensure_demo(store)
    for name, result in checks.items():
        record_model_check(store, result, name)
    config = RunConfig(dataset="demo", generators=list(GENERATORS),
                       settings=["base", "oracle", "mixed"], sample=queries, seed=7,
                       max_tokens=max_tokens, name=f"estimates-{tag}")
    started = time.perf_counter()
    plan = plan_run(store, config, check_models=False)
    before = estimate_remaining(store, plan)
    items = plan.count
    at_five = max(1, math.ceil(0.05 * items))
    seen: dict = {}

    def progress(event) -> None:
        moment = time.perf_counter() - started
        if event.status != "running" or event.eta_seconds is None:
            return
        seen.setdefault("first", (moment, event.eta_seconds, event.done))
        if event.done >= at_five:
            seen.setdefault("five", (moment, event.eta_seconds, event.done))
        note = getattr(event.detail, "pace_note", None)
        if note:
            seen.setdefault("note", (moment, note))

    summary = execute(store, plan, progress=progress)
    took = time.perf_counter() - started
    store.close()

    def versus(point):
        if point is None:
            return None
        moment, eta, done = point
        left = took - moment
        return {"at_s": round(moment, 1), "items_done": done, "eta_s": round(eta, 1),
                "actual_left_s": round(left, 1), "ratio": round(eta / left, 2) if left else None}

    return {"condition": tag, "status": summary.status, "items": items,
            "generated": summary.generated, "seconds": round(took, 1),
            "estimate_before_s": round(before["seconds"], 1),
            "ratio_before": round(before["seconds"] / took, 2),
            "estimate_generators": {name: {k: g[k] for k in ("items", "seconds", "speed",
                                                             "load_seconds", "in_flight",
                                                             "parallel")}
                                    for name, g in before["generators"].items()},
            "first_event": versus(seen.get("first")),
            "after_5_percent": versus(seen.get("five")),
            "busy_note": seen.get("note", (None, None))[1]}


def table(results: dict) -> str:
    lines = ["| condition | items | took | before the run: estimate (ratio) | "
             "after 5% of items: ETA vs left (ratio) | busy note |",
             "|---|---|---|---|---|---|"]
    for row in results["runs"]:
        five = row["after_5_percent"] or {}
        lines.append(
            f"| {row['condition']} | {row['items']} | {row['seconds']:.0f}s | "
            f"{row['estimate_before_s']:.0f}s ({row['ratio_before']:.2f}×) | "
            f"{five.get('eta_s', 0):.0f}s vs {five.get('actual_left_s', 0):.0f}s "
            f"({five.get('ratio') or 0:.2f}×) | {'yes' if row['busy_note'] else 'no'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--conditions", default="as is,loaded")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-estimates-"))
    os.environ.setdefault("MIRAGE_DATA_DIR", str(folder / "data"))   # hosts of our own

    from models.check import check_model
    from models.host import stop_hosts

    checks = {name: check_model(name) for name in GENERATORS}
    runs = []
    for tag in [c.strip() for c in args.conditions.split(",") if c.strip()]:
        hogs = []
        if tag == "loaded":
            hogs = [multiprocessing.Process(target=_busy_loop, daemon=True)
                    for _ in range(os.cpu_count() or 1)]
            for hog in hogs:
                hog.start()
        try:
            runs.append(one_run(folder, tag.replace(" ", "-"), checks, args.queries,
                                args.max_tokens))
        finally:
            for hog in hogs:
                hog.terminate()
                hog.join()
        print(json.dumps(runs[-1], ensure_ascii=False), flush=True)
    stop_hosts()
    results = {"benchmark": "bench_estimates", "machine": platform.platform(),
               "cpus": os.cpu_count(), "python": platform.python_version(),
               "queries": args.queries, "max_tokens": args.max_tokens,
               "generators": list(GENERATORS),
               "checks": {n: {k: c.get(k) for k in ("ok", "device", "load_seconds",
                                                     "tokens_per_s", "prompt_tokens_per_s")}
                          for n, c in checks.items()},
               "runs": runs,
               "goal": "estimate within 2x before the first item, within 25% after 5% of "
                       "items"}
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
