"""Arena ratings: the win-count-matrix bootstrap against the per-pair-list bootstrap.

The workload: 19 synthetic systems with known BT strengths (evenly spaced, θ from -1.5 to 1.5),
100 queries, every pair of systems on every query (171 battles per query, 17,100 in all), the
A/B order drawn at random; a verdict is a tie with probability 0.15, a parse failure with
probability 0.01, and otherwise drawn from the BT probabilities. Everything is seeded.

Both bootstraps resample queries with replacement (200 tournaments by default), from the same
seeded draws, and refit Bradley–Terry with I-LSR (choix):

- matrix (mirage-tui): one win-count matrix per query, precomputed once; a tournament's matrix
  is a bincount of the drawn queries times those matrices; ``choix.ilsr_pairwise_dense``.
- pairs (the reference code's way): rebuild the tournament's list of (winner, loser) pairs
  from the drawn queries' battles (a decisive battle twice, a tie once each way) and fit it
  with ``choix.ilsr_pairwise``.

Reports seconds (wall and process CPU) for each, the speed ratio pairs / matrix (goal >= 50)
and the largest absolute difference of θ between the two on the same tournaments (goal <=
1e-6). When ``--baseline-tournaments`` is below ``--tournaments``, the pairs bootstrap is timed
on the first that many tournaments only and its time per tournament extrapolated (the JSON says
so). Also: the end-to-end ``compute_ratings`` time, and how well the ratings recover the known
strengths (Kendall τ, CI coverage). ::

    .venv/bin/python benchmarks/bench_arena.py [--tournaments 200] [--baseline-tournaments 200]

Writes benchmarks/results/arena.json.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scipy.stats import kendalltau  # noqa: E402

from engine.arena.ratings.bradley_terry import (DEFAULT_ALPHA, bradley_terry_fit,  # noqa: E402
                                                bradley_terry_fit_pairs, doubled_pairs, elo_scale)
from engine.arena.ratings.leaderboard import compute_ratings, format_leaderboard  # noqa: E402
from engine.arena.ratings.tournaments import (bootstrap_thetas, bootstrap_thetas_pairs,  # noqa: E402
                                              encode_battles, total_wins)
from engine.arena.types import Battle  # noqa: E402
from timing import Clock  # noqa: E402


def synthetic_battles(n_systems: int, n_queries: int, seed: int, tie_rate: float = 0.15,
                      failure_rate: float = 0.01) -> tuple[list[Battle], dict[str, float]]:
    """Every pair of systems on every query, verdicts drawn from known BT strengths."""
    rng = np.random.default_rng(seed)
    names = [f"system-{k:02d}" for k in range(n_systems)]
    theta = np.linspace(-1.5, 1.5, n_systems)
    battles = []
    for q in range(n_queries):
        for i in range(n_systems):
            for j in range(i + 1, n_systems):
                a, b = (i, j) if rng.random() < 0.5 else (j, i)
                u = rng.random()
                if u < failure_rate:
                    winner = None
                elif u < failure_rate + tie_rate:
                    winner = "tie"
                else:
                    p_a = 1.0 / (1.0 + np.exp(theta[b] - theta[a]))
                    winner = "a" if rng.random() < p_a else "b"
                battles.append(Battle(q, names[a], names[b], winner))
    return battles, dict(zip(names, theta.tolist()))


def population_elo(order: list[str], true_theta: dict[str, float], alpha: float,
                   tie_rate: float = 0.15) -> dict[str, float]:
    """What the ratings estimate: the fit on the expected win shares (a tie, drawn regardless
    of strength, gives each side half a win, which shrinks the fitted θ below the generating
    one)."""
    theta = np.array([true_theta[name] for name in order])
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))       # [i, j]: P(i beats j)
    expected = 1000.0 * ((1 - tie_rate) * p + tie_rate / 2)
    np.fill_diagonal(expected, 0.0)
    return dict(zip(order, elo_scale(bradley_terry_fit(expected, alpha)).tolist()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", type=int, default=19)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--tournaments", type=int, default=200)
    parser.add_argument("--baseline-tournaments", type=int, default=200,
                        help="time the pairs bootstrap on this many of the tournaments and "
                             "extrapolate per tournament when fewer than --tournaments")
    parser.add_argument("--repeat", type=int, default=3,
                        help="times the matrix bootstrap runs (the median is reported)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA)
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "arena.json")
    args = parser.parse_args()
    started = time.perf_counter()
    n_boot, n_base = args.tournaments, min(args.baseline_tournaments, args.tournaments)

    battles, true_theta = synthetic_battles(args.systems, args.queries, args.seed)
    with Clock() as encode_clock:
        enc = encode_battles(battles)
    bradley_terry_fit(total_wins(enc), args.alpha)                  # warm-up (imports, BLAS)

    # the matrix bootstrap (from the encoded battles: per-query matrices, counts, fits)
    matrix_runs = []
    for _ in range(args.repeat):
        with Clock() as clock:
            fast = bootstrap_thetas(enc, n_boot, args.seed, args.alpha)
        matrix_runs.append((clock.wall, clock.cpu))
    matrix_wall = statistics.median(w for w, _ in matrix_runs)
    matrix_cpu = statistics.median(c for _, c in matrix_runs)

    # the pair-list bootstrap, on the same resamples (the first n_base tournaments)
    with Clock() as clock:
        slow = bootstrap_thetas_pairs(enc, n_boot, args.seed, args.alpha,
                                      tournaments=range(n_base))
    pairs_per_t_wall, pairs_per_t_cpu = clock.wall / n_base, clock.cpu / n_base
    boot_diff = float(np.max(np.abs(fast[:n_base] - slow)))

    # the point fit, both ways
    point = bradley_terry_fit(total_wins(enc), args.alpha)
    point_pairs = bradley_terry_fit_pairs(enc.n_systems, doubled_pairs(enc.outcomes()),
                                          args.alpha)
    point_diff = float(np.max(np.abs(point - point_pairs)))

    # end to end, and how well the known strengths come back
    with Clock() as ratings_clock:
        ratings = compute_ratings(battles, n_boot=n_boot, seed=args.seed, alpha=args.alpha)
    truth = np.array([true_theta[s.system] for s in ratings.systems])
    target = population_elo(ratings.order, true_theta, args.alpha)
    covered = sum(s.elo_lo <= target[s.system] <= s.elo_hi for s in ratings.systems)
    tau = kendalltau([s.elo for s in ratings.systems], truth).statistic

    pairs_wall_total = pairs_per_t_wall * n_boot
    pairs_cpu_total = pairs_per_t_cpu * n_boot
    result = {
        "benchmark": "bench_arena",
        "workload": {"systems": args.systems, "queries": args.queries,
                     "battles": len(battles), "parsed_battles": int(len(enc.q)),
                     "parse_failures": enc.parse_failures,
                     "battles_per_query": args.systems * (args.systems - 1) // 2,
                     "tie_rate": 0.15, "failure_rate": 0.01,
                     "true_theta": "evenly spaced from -1.5 to 1.5", "seed": args.seed,
                     "alpha": args.alpha},
        "tournaments": n_boot,
        "encode_battles_seconds": encode_clock.wall,
        "matrix_bootstrap": {
            "seconds": matrix_wall, "cpu_seconds": matrix_cpu,
            "seconds_per_tournament": matrix_wall / n_boot,
            "runs": [{"seconds": w, "cpu_seconds": c} for w, c in matrix_runs],
            "method": "per-query win matrices (sparse Q x S^2), bincount of resampled "
                      "queries times them, choix.ilsr_pairwise_dense"},
        "pairs_bootstrap": {
            "tournaments_timed": n_base,
            "extrapolated": n_base < n_boot,
            "seconds_timed": clock.wall, "cpu_seconds_timed": clock.cpu,
            "seconds_per_tournament": pairs_per_t_wall,
            "seconds_for_all_tournaments": pairs_wall_total,
            "cpu_seconds_for_all_tournaments": pairs_cpu_total,
            "method": "rebuild the doubled (winner, loser) pair list of the drawn queries per "
                      "tournament, choix.ilsr_pairwise"},
        "speed_ratio_wall": pairs_wall_total / matrix_wall,
        "speed_ratio_cpu": pairs_cpu_total / matrix_cpu,
        "speed_ratio_goal": 50,
        "max_abs_theta_diff_bootstrap": boot_diff,
        "max_abs_theta_diff_point_fit": point_diff,
        "max_abs_diff_goal": 1e-6,
        "compute_ratings_seconds": ratings_clock.wall,
        "recovery": {"kendall_tau_elo_vs_true": float(tau),
                     "population_elo_inside_95ci": f"{covered}/{len(ratings.systems)}",
                     "population_elo": "the fit on the expected win matrix (infinite "
                                       "queries): random ties pull every rating towards "
                                       "the mean, so this, not the generating θ, is what "
                                       "the CIs should cover",
                     "distinct_ranks": len({s.rank for s in ratings.systems})},
        "leaderboard": format_leaderboard(ratings).splitlines(),
        "machine": {"platform": platform.platform(), "cpu_count": os.cpu_count(),
                    "load_average": list(os.getloadavg())},
        "numpy": np.__version__, "choix": importlib.metadata.version("choix"),
        "seconds": time.perf_counter() - started,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    print(json.dumps(result, indent=2, ensure_ascii=False))
    print(f"\nspeed ratio pairs/matrix: {result['speed_ratio_wall']:.0f}x wall, "
          f"{result['speed_ratio_cpu']:.0f}x CPU (goal >= 50); max |Δθ| bootstrap "
          f"{boot_diff:.2e}, point fit {point_diff:.2e} (goal <= 1e-6)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
