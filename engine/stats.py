# One idea: confidence intervals (the bootstrap, Wilson, exact, and which one fits a number).
"""Confidence intervals for every rate mirage-tui shows (METRICS.md, "Statistics everywhere").

Every number shown to a user carries its 95% CI and its n. Two tools:

- :func:`bootstrap_ci` and :func:`bootstrap_many`: the percentile bootstrap over items. Items are
  resampled with replacement ``n_boot`` times; the interval is the ``alpha/2`` and
  ``1 - alpha/2`` percentiles of the statistic over the resamples, and the point value is the
  statistic on the data itself. :func:`bootstrap_many` computes several statistics on the *same*
  resamples, so that quantities that add up (NV + CA + CI + CM = 1) add up on every resample too.
- :func:`wilson_interval`: the Wilson score interval for a plain proportion k/n, for when there is
  nothing to resample (or too little: it behaves well for n of a few items and for k = 0 or n).

Which interval a shown number gets is decided in one place, :func:`intervals` (one column:
:func:`interval`), by the number's kind: Clopper–Pearson for rates (k of n), the percentile
bootstrap floored by Clopper–Pearson for bounded means, ``2 CP(CA) - 1`` for the adaptability
overall, the plain bootstrap for unbounded means. No rate or overall interval has zero width.

Everything is deterministic under ``seed``: the same inputs and seed give the same numbers.
:data:`N_BOOT`, :data:`PAIRED_N_BOOT`, :data:`TOURNAMENTS` and :data:`SEED` are the one setting
behind every interval the app and the CLI show (a run report, a paired comparison, arena
ratings), so that a screen and its command show the same figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from engine.counts import check_resample_memory

Statistic = Callable[..., Any]
"""A numpy-style reduction called as ``statistic(array, axis=-1)`` (np.mean, np.median, ...)."""

ColumnStatistic = Callable[[Mapping[Any, np.ndarray]], Any]
"""Gets the columns (each of shape (..., n)) and reduces the last axis."""

N_BOOT = 1000
"""Bootstrap resamples behind a run report's CIs wherever it is shown: ``report`` (text, JSON,
HTML; ``--n-boot`` overrides it), the Runs summary, Live's report, the Compare screen's run
tables. At 1000 the Runs summary is no slower than at 200 (its rates are Clopper–Pearson), and a
full report of a 60k-item run takes ~1.9 s (docs/measured.md), on a worker thread in the app."""

SEED = 0
"""The seed of every resampling the app and the CLI show (each command's ``--seed`` overrides
it)."""

PAIRED_N_BOOT = 10_000
"""Paired-bootstrap resamples behind a comparison's Δ CIs (:mod:`engine.paired_stats`) wherever
it is shown: ``compare`` (``--n-boot`` overrides it) and the Compare screen."""

TOURNAMENTS = 200
"""Bootstrap tournaments behind every arena rating's CI (:mod:`engine.arena.ratings.tournaments`)
wherever it is shown: the Leaderboard and its surrogate line, ``arena ratings``/``surrogate``/
``export`` (``--boot`` overrides it), the leaderboard page."""

# Resampling draws an (n_boot, n) index matrix; above this many cells it is drawn in row chunks
# from the same generator, which yields exactly the same indices as one draw, with less memory.
_MAX_CELLS = 1_000_000


@dataclass(frozen=True)
class Estimate:
    """A point value with its confidence interval and the number of items behind it.

    ``value``, ``lo`` and ``hi`` are None when there were no items (n = 0).
    """

    value: float | None
    lo: float | None
    hi: float | None
    n: int

    def as_json(self) -> dict[str, float | int | None]:
        """``{"value", "lo", "hi", "n"}``, for JSON reports."""
        return {"value": self.value, "lo": self.lo, "hi": self.hi, "n": self.n}

    @classmethod
    def from_json(cls, e: Mapping[str, Any] | None) -> "Estimate":
        """The Estimate :meth:`as_json` wrote (n = 0 and no value for None or {})."""
        e = e or {}
        return cls(e.get("value"), e.get("lo"), e.get("hi"), e.get("n", 0))

    def as_dict(self, prefix: str) -> dict[str, float | None]:
        """``{prefix: value, prefix_lo: lo, prefix_hi: hi}``, for JSON reports."""
        return {prefix: self.value, f"{prefix}_lo": self.lo, f"{prefix}_hi": self.hi}

    def format_pct(self, digits: int = 1) -> str:
        """Like ``41.2% [35.0, 47.1] n=120``; ``– n=0`` when there is no value."""
        text = format_interval(self.value, self.lo, self.hi, digits=digits, scale=100, unit="%")
        return f"{text} n={self.n}"

    def format_num(self, digits: int = 3) -> str:
        """Like ``0.412 [0.350, 0.471] n=120``, for scores that are not rates (NDCG, overall)."""
        return f"{format_interval(self.value, self.lo, self.hi, digits=digits)} n={self.n}"


def estimates_json(estimates: Mapping[str, Estimate]) -> dict[str, dict]:
    """``{key: estimate.as_json()}``: a map of estimates as JSON reports write it."""
    return {key: e.as_json() for key, e in estimates.items()}


def format_interval(value: float | None, lo: float | None = None, hi: float | None = None, *,
                    digits: int = 2, scale: float = 1, unit: str = "") -> str:
    """``value`` times ``scale`` with ``digits`` decimals and ``unit``, then ``[lo, hi]`` when
    both ends are known: ``41.2% [35.0, 47.1]`` (scale 100, unit %); ``–`` without a value."""
    if value is None:
        return "–"
    text = f"{scale * value:.{digits}f}{unit}"
    if lo is not None and hi is not None:
        text += f" [{scale * lo:.{digits}f}, {scale * hi:.{digits}f}]"
    return text


def resample_indices(n: int, n_boot: int = N_BOOT, seed: int = SEED) -> Iterator[np.ndarray]:
    """Yield the bootstrap index matrix (n_boot rows of n item indices) in row chunks.

    The chunks concatenated equal one ``default_rng(seed).integers(0, n, (n_boot, n))`` draw.
    """
    rng = np.random.default_rng(seed)
    rows_per_chunk = max(1, _MAX_CELLS // max(n, 1))
    done = 0
    while done < n_boot:
        rows = min(rows_per_chunk, n_boot - done)
        yield rng.integers(0, n, size=(rows, n))
        done += rows


def _percentiles(boot: np.ndarray, alpha: float) -> tuple[float, float]:
    lo, hi = np.percentile(boot, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def bootstrap_many(data: Mapping[Any, Sequence[float]] | Sequence[Sequence[float]] | np.ndarray,
                   statistics: Mapping[str, ColumnStatistic] | None = None, *,
                   n_boot: int = 1000, seed: int = 0,
                   alpha: float = 0.05) -> dict[str, Estimate]:
    """Several statistics with percentile-bootstrap CIs, all from the same resamples of items.

    ``data`` is either a mapping of column name -> one value per item (all the same length) or a
    2-D array of n items x m columns (columns are then named 0..m-1). Each statistic receives a
    mapping of the columns, each of shape (..., n), and must reduce the last axis: it is called
    once on the plain columns for the point value and on (rows, n) resampled columns for the
    interval. ``statistics=None`` means the mean of each column. Because every statistic sees the
    same resampled items, identities between them (shares that sum to 1) hold on every resample.
    """
    if isinstance(data, Mapping):
        columns = {name: np.asarray(col, dtype=float) for name, col in data.items()}
    else:
        matrix = np.asarray(data, dtype=float)
        if matrix.ndim != 2:
            raise ValueError(f"expected a 2-D items x columns array, got shape {matrix.shape}")
        columns = {j: matrix[:, j] for j in range(matrix.shape[1])}
    lengths = {len(col) for col in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"columns differ in length: {sorted(lengths)}")
    n = lengths.pop() if lengths else 0
    if statistics is None:
        statistics = {str(name): (lambda cols, name=name: cols[name].mean(axis=-1))
                      for name in columns}
    if n == 0:
        return {name: Estimate(None, None, None, 0) for name in statistics}

    values = {name: float(stat(columns)) for name, stat in statistics.items()}
    if n == 1:
        return {name: Estimate(v, v, v, 1) for name, v in values.items()}
    # the draws kept: one number per resample and statistic (the indices go in chunks)
    check_resample_memory(n_boot, len(statistics), "resamples × statistics × 8 bytes")

    boots: dict[str, list[np.ndarray]] = {name: [] for name in statistics}
    for idx in resample_indices(n, n_boot, seed):
        resampled = {name: col[idx] for name, col in columns.items()}
        for name, stat in statistics.items():
            boots[name].append(np.asarray(stat(resampled), dtype=float).reshape(-1))
    out = {}
    for name, value in values.items():
        lo, hi = _percentiles(np.concatenate(boots[name]), alpha)
        out[name] = Estimate(value, lo, hi, n)
    return out


def bootstrap_ci(values: Sequence[float | None], statistic: Statistic = np.mean,
                 n_boot: int = 1000, seed: int = 0, alpha: float = 0.05) -> Estimate:
    """The statistic of ``values`` with a percentile-bootstrap (1 - alpha) CI over items.

    ``statistic`` is a numpy reduction taking ``axis`` (np.mean, np.median). None values are left
    out (they mean "not applicable", e.g. a response too short for language detection), so n
    counts the values actually used. n = 0 gives value None; n = 1 gives lo = hi = value.
    """
    kept = [v for v in values if v is not None]
    result = bootstrap_many({"x": kept}, {"x": lambda cols: statistic(cols["x"], axis=-1)},
                            n_boot=n_boot, seed=seed, alpha=alpha)
    return result["x"]


def wilson_interval(k: int, n: int, alpha: float = 0.05) -> Estimate:
    """k/n with its Wilson score interval (Wilson 1927), clipped to [0, 1].

    Unlike the normal approximation it stays inside [0, 1] and is not degenerate at k = 0 or n.
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Estimate(None, None, None, 0)
    z = NormalDist().inv_cdf(1 - alpha / 2)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, centre - half)  # exact at the edges, not 1e-17 off
    hi = 1.0 if k == n else min(1.0, centre + half)
    return Estimate(p, lo, hi, n)


# ------------------------------------------------------------------ interval method per kind
#
# Which interval a number gets depends on what kind of number it is; :func:`interval` and
# :func:`intervals` are the one place that decides. Point values are always the plain statistic
# on the data (the mean over items), exactly as :func:`bootstrap_many` computes them; only the
# interval ends depend on the kind.

RATE = "rate"
"""k of n items: every value is 0 or 1 (EM, BERGEN match, correct language, no-answer, the
adaptability shares NV/CA/CI/CM, P@1 ...). Interval: Clopper–Pearson."""

BOUNDED_MEAN = "bounded_mean"
"""A mean of per-item scores in [0, 1] that are not all 0/1 (F1, char-3gram recall, NDCG,
P@k / R@k for k > 1). Interval: percentile bootstrap, floored by Clopper–Pearson."""

MEAN = "mean"
"""A mean of per-item scores with no known bounds (a reranker logit, a count of citations).
Interval: percentile bootstrap; for counts (non-negative integers) floored by the exact Poisson
interval of the total (:func:`poisson_mean_interval`), so every item citing exactly two passages
does not read ``2 [2, 2]``."""

SIGNED_SHARE = "signed_share"
"""The adaptability overall score -NV + CA - CI - CM, a composite of the category shares of one
multinomial. Interval: see :func:`composite_interval`."""

KINDS = (RATE, BOUNDED_MEAN, MEAN, SIGNED_SHARE)


@lru_cache(maxsize=65536)
def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The Clopper–Pearson ("exact") (1 - alpha) interval for k successes in n trials.

    It inverts two one-sided binomial tests, so its coverage is at least 1 - alpha for every
    true p and every n: it is the method for rates. Wilson is shorter but under-covers at small
    n near the boundary: at n = 8 and p = 0.02, k = 1 gives a Wilson lower bound of about 0.022
    > 0.02, so the truth is missed whenever k >= 1 (about 15% of samples) and coverage is ~85%.
    Clopper–Pearson gives [0, 1 - (alpha/2)^(1/n)] at k = 0 (0 of 8: [0, 0.369]) and the mirror
    image at k = n, so it never has zero width. Computed by :func:`clopper_pearson_many`.
    """
    if n <= 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    lo, hi = clopper_pearson_many([k], [n], alpha)
    return float(lo[0]), float(hi[0])


def clopper_pearson_many(k: Sequence[int] | np.ndarray, n: Sequence[int] | np.ndarray,
                         alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """:func:`clopper_pearson` for arrays of (k, n) at once: ``(lo, hi)`` arrays.

    The interval's ends are beta quantiles (Clopper & Pearson 1934; Brown, Cai & DasGupta 2001,
    §2.1): ``lo = Beta(alpha/2; k, n - k + 1)``, ``hi = Beta(1 - alpha/2; k + 1, n - k)``, 0 at
    k = 0 and 1 at k = n. :func:`scipy.stats.binomtest`'s ``proportion_ci(method="exact")``
    finds the same ends with a root finder, one (k, n) at a time (~2 ms each; a report by
    language and source needs thousands), so this uses ``scipy.stats.beta.ppf`` vectorised
    instead; the two agree to 1e-9 (tested).
    """
    from scipy.stats import beta

    k_arr = np.asarray(k, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    if k_arr.shape != n_arr.shape:
        raise ValueError("k and n need the same shape")
    if np.any(n_arr <= 0) or np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise ValueError("need 0 <= k <= n and n > 0 for every pair")
    lo = np.where(k_arr == 0, 0.0,
                  beta.ppf(alpha / 2, np.maximum(k_arr, 1), n_arr - k_arr + 1))
    hi = np.where(k_arr == n_arr, 1.0,
                  beta.ppf(1 - alpha / 2, k_arr + 1, np.maximum(n_arr - k_arr, 1)))
    return lo, hi


@lru_cache(maxsize=65536)
def poisson_mean_interval(total: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The exact (Garwood) (1 - alpha) interval of a Poisson rate, per item: ``total`` events
    over ``n`` items. ``[chi2(alpha/2; 2 total) / 2n, chi2(1 - alpha/2; 2 total + 2) / 2n]``,
    0 below when the total is 0 (0 of 8 items: [0, 0.46]); never zero width."""
    if n <= 0 or total < 0:
        raise ValueError(f"need total >= 0 and n > 0, got total={total}, n={n}")
    from scipy.stats import chi2

    lo = 0.0 if total == 0 else float(chi2.ppf(alpha / 2, 2 * total)) / (2 * n)
    hi = float(chi2.ppf(1 - alpha / 2, 2 * total + 2)) / (2 * n)
    return lo, hi


def infer_kind(values: Sequence[float]) -> str:
    """:data:`RATE` when every value is 0 or 1, :data:`BOUNDED_MEAN` when every value lies in
    [0, 1], else :data:`MEAN`. (No values: :data:`RATE`; there is no interval either way.)"""
    arr = np.asarray(values, dtype=float)
    if np.all((arr == 0) | (arr == 1)):
        return RATE
    if np.all((arr >= 0) & (arr <= 1)):
        return BOUNDED_MEAN
    return MEAN


def rate_interval(values: Sequence[float], value: float | None = None,
                  alpha: float = 0.05) -> Estimate:
    """The share of 1s among 0/1 ``values`` with its Clopper–Pearson interval (see
    :func:`clopper_pearson` for why not Wilson, and why not the percentile bootstrap: that one
    has zero width at 0 of n and n of n, e.g. ``0.0 [0.0, 0.0] n=8``)."""
    arr = np.asarray(values, dtype=float)
    n = len(arr)
    if n == 0:
        return Estimate(None, None, None, 0)
    if not np.all((arr == 0) | (arr == 1)):
        raise ValueError("a rate needs 0/1 values")
    lo, hi = clopper_pearson(int(arr.sum()), n, alpha)
    return Estimate(float(arr.mean()) if value is None else value, lo, hi, n)


def _cp_floor(values: np.ndarray, lo: float, hi: float, alpha: float) -> tuple[float, float]:
    k = min(len(values), max(0, int(round(float(values.sum())))))
    cp_lo, cp_hi = clopper_pearson(k, len(values), alpha)
    return min(lo, cp_lo), max(hi, cp_hi)


def composite_interval(counts: Sequence[int], weights: Sequence[float], *, n_boot: int = 1000,
                       seed: int = 0, alpha: float = 0.05) -> tuple[float, float]:
    """The (1 - alpha) interval of ``sum(weights * shares)``, the shares being those of one
    multinomial with category ``counts`` (e.g. NV, CA, CI, CM of n queries).

    - Weights that take at most two distinct values {a, b}: the composite is b + (a - b) times
      the share of the a-categories, a binomial rate; its interval is the matching affine image
      of the Clopper–Pearson interval, so coverage is exact-conservative and the width is never
      zero. The adaptability overall -NV + CA - CI - CM is this case: since the four shares sum
      to 1 it equals 2 CA - 1, so its interval is 2 [CA_lo, CA_hi] - 1 (0 CA of 8 queries:
      [-1, -0.26], not [-1, -1]).
    - Otherwise: a Bayesian bootstrap, ``n_boot`` draws of the shares from Dirichlet(counts +
      1/2) (the Jeffreys prior, so categories with count 0 still vary), seeded and vectorised,
      and the alpha/2, 1 - alpha/2 percentiles of the composite over the draws, widened to the
      weights' extremes where a category count is 0 at the boundary.
    """
    c = np.asarray(counts, dtype=float)
    w = np.asarray(weights, dtype=float)
    n = int(c.sum())
    if n <= 0 or c.shape != w.shape:
        raise ValueError("need positive counts, one weight per category")
    distinct = np.unique(w)
    if len(distinct) == 1:
        return float(distinct[0]), float(distinct[0])
    if len(distinct) == 2:
        low_w, high_w = float(distinct[0]), float(distinct[1])
        k = int(c[w == high_w].sum())
        lo, hi = clopper_pearson(k, n, alpha)
        return low_w + (high_w - low_w) * lo, low_w + (high_w - low_w) * hi
    rng = np.random.default_rng(seed)
    shares = rng.dirichlet(c + 0.5, size=n_boot)
    lo, hi = _percentiles(shares @ w, alpha)
    # all items in the lowest- (highest-) weight categories: keep that extreme inside
    if c[w != distinct[0]].sum() == 0:
        lo = float(distinct[0])
    if c[w != distinct[-1]].sum() == 0:
        hi = float(distinct[-1])
    return float(lo), float(hi)


def intervals(columns: Mapping[str, Sequence[float | None]],
              kinds: Mapping[str, str] | None = None, *, n_boot: int = 1000, seed: int = 0,
              alpha: float = 0.05) -> dict[str, Estimate]:
    """The mean of each column with the (1 - alpha) interval its kind calls for; the one
    dispatcher every shown number goes through.

    ``kinds[name]`` is one of :data:`KINDS`; a missing name gets :func:`infer_kind` of its
    values. Columns of the same length share the bootstrap resamples (as in
    :func:`bootstrap_many`); None values are left out of their column. Per kind:

    - :data:`RATE`: Clopper–Pearson of (sum, n) (:func:`rate_interval`).
    - :data:`BOUNDED_MEAN`: the percentile bootstrap over items, widened to at least the
      Clopper–Pearson interval of (round(sum), n). The bootstrap alone is degenerate when every
      item scores the same (all F1 = 0 gives [0, 0]); a [0, 1] score has at most the variance of
      a 0/1 score with the same mean, so the Clopper–Pearson interval of the nearest count is a
      conservative floor that keeps the interval honest at small n and the boundary, while for
      spread-out scores at large n the bootstrap is the wider one and is kept.
    - :data:`MEAN`: the percentile bootstrap over items; for counts (non-negative integers)
      widened to at least the exact Poisson interval of the total over n
      (:func:`poisson_mean_interval`), which is not degenerate when every item is the same.
      A real-valued unbounded mean with no spread at all keeps a zero-width bootstrap
      interval: with no bound and no variance there is nothing honest to widen it by.
    - :data:`SIGNED_SHARE`: the column must be the adaptability overall per item (-1 or +1, as
      -NV + CA - CI - CM is per item); its interval is 2 CP(CA) - 1 (:func:`composite_interval`).

    The point value is always the plain mean of the column, and n the number of values used.
    """
    kinds = dict(kinds or {})
    kept = {name: np.asarray([v for v in col if v is not None], dtype=float)
            for name, col in columns.items()}
    for name, arr in kept.items():
        kinds.setdefault(name, infer_kind(arr))
        if kinds[name] not in KINDS:
            raise ValueError(f"unknown interval kind {kinds[name]!r} for {name!r}")
    # the bootstrap is needed only for (bounded) means; same-length columns share resamples
    by_length: dict[int, list[str]] = {}
    for name, arr in kept.items():
        if kinds[name] in (BOUNDED_MEAN, MEAN):
            by_length.setdefault(len(arr), []).append(name)
    boot: dict[str, Estimate] = {}
    for names in by_length.values():
        boot.update(bootstrap_many({name: kept[name] for name in names},
                                   n_boot=n_boot, seed=seed, alpha=alpha))
    out: dict[str, Estimate] = {}
    for name, arr in kept.items():
        n = len(arr)
        if n == 0:
            out[name] = Estimate(None, None, None, 0)
            continue
        value = float(arr.mean())
        kind = kinds[name]
        if kind == RATE:
            out[name] = rate_interval(arr, value=value, alpha=alpha)
        elif kind == SIGNED_SHARE:
            if not np.all((arr == -1) | (arr == 1)):
                raise ValueError(f"{name!r}: a signed share needs -1/+1 values")
            k = int((arr == 1).sum())
            lo, hi = composite_interval([n - k, k], [-1.0, 1.0], n_boot=n_boot, seed=seed,
                                        alpha=alpha)
            out[name] = Estimate(value, lo, hi, n)
        else:
            est = boot[name]
            lo, hi = est.lo, est.hi
            if kind == BOUNDED_MEAN:
                lo, hi = _cp_floor(arr, lo, hi, alpha)
            elif np.all((arr >= 0) & (arr == np.round(arr))):   # counts
                p_lo, p_hi = poisson_mean_interval(int(arr.sum()), n, alpha)
                lo, hi = min(lo, p_lo), max(hi, p_hi)
            out[name] = Estimate(value, lo, hi, n)
    return out


def interval(kind: str | None, values: Sequence[float | None], *, n_boot: int = 1000,
             seed: int = 0, alpha: float = 0.05) -> Estimate:
    """One column's mean with the interval for ``kind`` (None: inferred); see :func:`intervals`."""
    kinds = {"x": kind} if kind is not None else None
    return intervals({"x": values}, kinds, n_boot=n_boot, seed=seed, alpha=alpha)["x"]
