"""Which queries a run uses: all of them, a seeded stratified sample, or adaptive batches.

One seeded order serves all three. :func:`stratified_order` shuffles each stratum (a query's
(source, language)) with the seed, then interleaves the strata by the sequential
Sainte-Laguë (Webster) rule: the j-th query (0-based) of a stratum of size N_h is due at
(j + 0.5) / N_h, and queries are taken in order of due time. Every prefix of length n is then
Webster's proportional allocation of n among the strata (each stratum within about one query
of n·N_h/N), and a longer prefix extends a shorter one. So:

- a sample of n is the first n queries of the order (deterministic under the seed);
- adaptive sampling takes the order in batches (default max(20, 10% of the budget)), so each
  batch extends the previous ones and a resumed or re-run adaptive run reuses every item.

The adaptive stopping rule (:func:`ci_half_widths`) reads EM_loose labels from stored rows:
for each system and each mixed-like setting, the 95% CI of NV, CA, CI and CM
(MIRAGE §1, :func:`engine.metrics.adaptability.adaptability`); when the run lacks base or
oracle (no adaptability to compute), the CI of EM_loose accuracy per setting. These are the
intervals the report shows: Clopper–Pearson for these k-of-n rates
(:func:`engine.stats.intervals`), which never collapses to a point when all items agree
(20 of 20 context insensitive gives [0.83, 1], not [1, 1]). Sampling stops when every
half-width is below the target, or the budget is spent.

With ``adaptive_until = "difference"`` the rule is :func:`difference_interval` instead:
sample until the paired 95% CI of the second system's EM_loose minus the first's excludes
0 (the difference is decided, either way), or the budget is spent.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from typing import Hashable, Mapping, Sequence

ADAPTIVE_MIN_BATCH = 20
ADAPTIVE_SHARES = ("nv", "ca", "ci", "cm")


def stratified_order(strata: Sequence[Hashable], seed: int = 0) -> list[int]:
    """Indices ``0..len(strata)-1`` in a seeded order whose every prefix is a proportional
    (Webster) stratified sample; ``strata[i]`` is item i's stratum key."""
    groups: dict[str, list[int]] = defaultdict(list)
    for index, key in enumerate(strata):
        groups[repr(key)].append(index)
    rng = random.Random(seed)
    keys = sorted(groups)
    for key in keys:
        rng.shuffle(groups[key])
    tie_rank = {key: rank for rank, key in enumerate(rng.sample(keys, len(keys)))}
    due = []
    for key in keys:
        size = len(groups[key])
        for j, index in enumerate(groups[key]):
            due.append(((j + 0.5) / size, tie_rank[key], index))
    due.sort()
    return [index for _, _, index in due]


def allocation(strata: Sequence[Hashable], order: Sequence[int], n: int) -> dict:
    """How many of the first ``n`` of ``order`` fall in each stratum (for reports/tests)."""
    counts: dict = defaultdict(int)
    for index in order[:n]:
        counts[strata[index]] += 1
    return dict(counts)


def adaptive_batch_size(budget: int, batch: int | None = None) -> int:
    """Queries per adaptive batch: ``batch`` if given, else max(20, 10% of the budget)."""
    if batch:
        return batch
    return max(ADAPTIVE_MIN_BATCH, math.ceil(0.1 * budget))


def _rate_half_width(labels: Sequence[int]) -> float:
    from engine.stats import RATE, interval

    est = interval(RATE, list(labels))
    return (est.hi - est.lo) / 2


def ci_half_widths(labels: Mapping[str, Mapping[str, Mapping[int, int]]],
                   seed: int = 0, n_boot: int = 1000) -> dict[str, float]:
    """Every CI half-width that adaptive sampling watches, keyed ``system | setting | metric``.

    ``labels[system][setting][query_rowid]`` is the item's EM_loose label (0/1). With base,
    oracle and a mixed-like setting: NV, CA, CI, CM of each (system, mixed-like setting) over
    the queries that have all three labels; otherwise EM_loose accuracy per setting.
    """
    from engine.metrics.adaptability import adaptability

    out: dict[str, float] = {}
    for system, by_setting in labels.items():
        base, oracle = by_setting.get("base"), by_setting.get("oracle")
        mixed_like = [s for s in by_setting if s == "mixed" or s.startswith("retrieved@")]
        if base is not None and oracle is not None and mixed_like:
            for setting in mixed_like:
                mixed = by_setting[setting]
                queries = sorted(set(base) & set(oracle) & set(mixed))
                if not queries:
                    for metric in ADAPTIVE_SHARES:
                        out[f"{system} | {setting} | {metric}"] = math.inf
                    continue
                report = adaptability([(base[q], oracle[q], mixed[q]) for q in queries],
                                      n_boot=n_boot, seed=seed, mixed_setting=setting)
                for metric in ADAPTIVE_SHARES:
                    est = getattr(report, metric)
                    out[f"{system} | {setting} | {metric}"] = (est.hi - est.lo) / 2
        else:
            for setting, by_query in by_setting.items():
                n = len(by_query)
                out[f"{system} | {setting} | em_loose"] = (
                    _rate_half_width(list(by_query.values())) if n else math.inf)
    return out


def difference_interval(labels: Mapping[str, Mapping[str, Mapping[int, int]]], a: str, b: str,
                        seed: int = 0, n_boot: int = 2000) -> dict:
    """System ``b``'s EM_loose minus system ``a``'s, paired by query: each query's difference
    is the mean over the settings both systems answered (so a query's settings, which are not
    independent, stay together), and the 95% CI is the paired percentile bootstrap over
    queries (:func:`engine.paired_stats.paired_bootstrap`, the Compare screen's).
    Returns ``{"difference", "lo", "hi", "n", "decided"}``; ``decided`` when the CI excludes
    0. No shared query: difference None, not decided."""
    import numpy as np

    from engine.paired_stats import paired_bootstrap

    left, right = labels.get(a, {}), labels.get(b, {})
    diffs = []
    queries = sorted({q for by in left.values() for q in by}
                     & {q for by in right.values() for q in by})
    for q in queries:
        pairs = [(left[s][q], right[s][q]) for s in left
                 if s in right and q in left[s] and q in right[s]]
        if pairs:
            diffs.append(sum(y - x for x, y in pairs) / len(pairs))
    if not diffs:
        return {"difference": None, "lo": None, "hi": None, "n": 0, "decided": False}
    column = np.asarray(diffs, dtype=float)[:, None]
    lo, hi = paired_bootstrap(column, n_boot=n_boot, seed=seed)
    lo, hi = float(lo[0]), float(hi[0])
    return {"difference": float(column.mean()), "lo": lo, "hi": hi, "n": len(diffs),
            "decided": lo > 0 or hi < 0}
