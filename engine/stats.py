"""Confidence intervals for every rate mirage-tui shows (METRICS.md, "Statistics everywhere").

Every number shown to a user carries its 95% CI and its n. Two tools:

- :func:`bootstrap_ci` and :func:`bootstrap_many`: the percentile bootstrap over items. Items are
  resampled with replacement ``n_boot`` times; the interval is the ``alpha/2`` and
  ``1 - alpha/2`` percentiles of the statistic over the resamples, and the point value is the
  statistic on the data itself. :func:`bootstrap_many` computes several statistics on the *same*
  resamples, so that quantities that add up (NV + CA + CI + CM = 1) add up on every resample too.
- :func:`wilson_interval`: the Wilson score interval for a plain proportion k/n, for when there is
  nothing to resample (or too little: it behaves well for n of a few items and for k = 0 or n).

Everything is deterministic under ``seed``: the same inputs and seed give the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

Statistic = Callable[..., Any]
"""A numpy-style reduction called as ``statistic(array, axis=-1)`` (np.mean, np.median, ...)."""

ColumnStatistic = Callable[[Mapping[Any, np.ndarray]], Any]
"""Gets the columns (each of shape (..., n)) and reduces the last axis."""

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


def resample_indices(n: int, n_boot: int = 1000, seed: int = 0) -> Iterator[np.ndarray]:
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
