"""Paired bootstrap: engine.paired_stats.bootstrap_means against a per-resample loop.

The workload: 5,000 items × 10 paired-difference columns (B − A), 10,000 resamples, seeded:

- 7 binary scores (EM loose/strict, match, correct language, hit@1, hit@5, judge win): the
  per-item difference is −1, 0 or +1; 2% of items lack the score (NaN);
- 3 continuous scores shaped like the real ones (F1, char 3-gram recall, NDCG@5): most items
  score 0 or 1, the others a ratio of small integers (k/l, l ≤ 12), so the differences are
  heavily tied (a few hundred distinct values), as they are on real runs.

Timed: ``bootstrap_means`` (vectorised; tied columns drawn as multinomials over their distinct
values, the rest from one shared index draw), and the obvious loop: per resample, draw n item
indices and take the nan-mean of each column (a Python loop over resamples, numpy inside).
Also timed: the same with all 10 columns binary (vectorised and loop), and the vectorised path
on 3 columns with no ties at all (the worst case: uniform
random differences). Reports seconds, the speed ratio loop / vectorised (goal ≥ 50) and how
far the two bootstrap distributions' 2.5/97.5 percentiles lie apart (same law, other draws). ::

    .venv/bin/python benchmarks/bench_paired.py [--n 5000] [--metrics 10] [--boot 10000]

Writes benchmarks/results/paired.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.paired_stats import bootstrap_means  # noqa: E402


def workload(n: int, metrics: int, seed: int = 0, binary_share: float = 0.7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n_bin = max(1, round(binary_share * metrics))
    cols = []
    for j in range(metrics):
        if j < n_bin:
            a = rng.random(n) < 0.5
            b = np.where(rng.random(n) < 0.8, a, rng.random(n) < 0.6)
            d = b.astype(float) - a
        else:
            def score():
                kind = rng.random(n)
                ratio = rng.integers(0, 13, n) / rng.integers(1, 13, n)
                return np.where(kind < 0.4, 0.0, np.where(kind < 0.7, 1.0, np.minimum(ratio, 1)))
            d = score() - score()
        d[rng.random(n) < 0.02] = np.nan
        cols.append(d)
    return np.column_stack(cols)


def loop(d: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = len(d)
    out = np.empty((n_boot, d.shape[1]))
    for r in range(n_boot):
        idx = rng.integers(0, n, n)
        out[r] = np.nanmean(d[idx], axis=0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--metrics", type=int, default=10)
    ap.add_argument("--boot", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    d = workload(args.n, args.metrics)
    fast = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        boot = bootstrap_means(d, args.boot, seed=1)
        fast.append(time.perf_counter() - t)
    binary = workload(args.n, args.metrics, binary_share=1.0)
    t = time.perf_counter()
    bootstrap_means(binary, args.boot, seed=1)
    binary_s = time.perf_counter() - t
    t = time.perf_counter()
    loop(binary, args.boot, seed=1)
    binary_loop_s = time.perf_counter() - t
    rng = np.random.default_rng(5)
    untied = rng.standard_normal((args.n, 3))
    t = time.perf_counter()
    bootstrap_means(untied, args.boot, seed=1)
    untied_s = time.perf_counter() - t
    t = time.perf_counter()
    slow = loop(d, args.boot, seed=1)
    loop_s = time.perf_counter() - t
    q = [2.5, 97.5]
    gap = float(np.max(np.abs(np.percentile(boot, q, axis=0) - np.percentile(slow, q, axis=0))))
    result = {
        "workload": {"items": args.n, "columns": args.metrics, "resamples": args.boot,
                     "binary_columns": max(1, round(0.7 * args.metrics))},
        "vectorised_s": min(fast), "vectorised_runs_s": fast,
        "loop_s": loop_s, "speedup": loop_s / min(fast),
        "untied_3_columns_s": untied_s,
        "all_binary": {"vectorised_s": binary_s, "loop_s": binary_loop_s,
                       "speedup": binary_loop_s / binary_s},
        "max_percentile_gap": gap,
        "machine": {"python": platform.python_version(), "numpy": np.__version__,
                    "cpus": os.cpu_count(), "load1": os.getloadavg()[0]},
    }
    print(json.dumps(result, indent=2))
    out = ROOT / "benchmarks" / "results" / "paired.json"
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
