"""The statistics of a paired comparison: two systems scored on the *same* items.

Pure numpy/scipy on arrays; :mod:`engine.results.paired` pairs stored runs and calls these.

- :func:`mcnemar_exact`: the 2×2 table of a binary score and McNemar's exact test, the
  two-sided binomial test of the discordant pairs against 1/2 (McNemar 1947; Agresti,
  *Categorical Data Analysis*, 3rd ed., §11.1.1), via :func:`scipy.stats.binomtest`.
- :func:`paired_bootstrap`: percentile-bootstrap 95% CIs of the mean paired difference of many
  columns at once, resampling items (Efron & Tibshirani 1993, *An Introduction to the
  Bootstrap*, §13.3; paired data: ch. 14). Hand-written because scipy.stats.bootstrap resamples
  one statistic at a time and has no shortcut for tied values: a column whose differences take
  k distinct values (a binary score: at most 3) is resampled *exactly* as a multinomial draw
  of n items over those k values (the bootstrap mean only depends on how many times each value
  is drawn), B×k draws instead of B×n. Columns with many distinct values share one B×n index
  draw, turned into per-item counts and one matrix product. NaN marks an item a column lacks;
  its mean is over the items it has (the ratio estimator on each resample).
- :func:`sign_flip_p`: the paired permutation test of a zero mean difference
  (Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed., §3.6.2), via
  :func:`scipy.stats.permutation_test` with ``permutation_type='samples'`` (swapping A and B
  within a pair flips the difference's sign); exact when 2^n is at most the resamples.
- :func:`holm`: Holm–Bonferroni adjusted p-values (Holm 1979, Scand. J. Statist. 6:65–70),
  vectorised; hand-written because statsmodels is not a dependency.
- :func:`mcnemar_sample_size`: items for a given power of McNemar's test from the discordant
  rate (Connor 1987, "Sample size for testing differences in proportions for the paired-sample
  design", Biometrics 43:207–211, eq. 3); :func:`paired_mean_sample_size` the normal
  approximation for a mean difference (n = ((z_{1-α/2} + z_{power}) σ_d / δ)²).

Same inputs and seed, same numbers.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from scipy import stats

from engine.counts import check_resample_memory
from engine.stats import PAIRED_N_BOOT

_MAX_CELLS = 2_000_000
"""Index draws above this many cells are made in row chunks (same generator, less memory)."""

_TIED = 0.1
"""A column with at most this share of distinct values (of n) is drawn as a multinomial
(a multinomial over k values costs about as much as k/10 of an n-index draw, measured)."""


def mcnemar_exact(a, b) -> dict:
    """The 2×2 table of two binary scores on the same items and McNemar's exact p-value.

    ``a`` and ``b`` are 0/1 per item (NaN items are left out). The table is
    ``{"both": n11, "a_only": n10, "b_only": n01, "neither": n00}``; the p-value is the
    two-sided exact binomial test of ``b_only`` among the ``a_only + b_only`` discordant pairs
    against 1/2 (1.0 with no discordant pair).
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep] > 0.5, b[keep] > 0.5
    n10, n01 = int(np.sum(a & ~b)), int(np.sum(~a & b))
    table = {"both": int(np.sum(a & b)), "a_only": n10, "b_only": n01,
             "neither": int(np.sum(~a & ~b))}
    p = 1.0 if n10 + n01 == 0 else float(stats.binomtest(n01, n10 + n01, 0.5).pvalue)
    return {"table": table, "p": min(1.0, p)}


def _counts(n: int, rows: int, rng: np.random.Generator) -> np.ndarray:
    """A (rows, n) matrix: how often each item is drawn in each of ``rows`` resamples."""
    idx = rng.integers(0, n, size=(rows, n))
    idx += (np.arange(rows) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n).astype(float)


def bootstrap_means(diffs, n_boot: int = PAIRED_N_BOOT, seed: int = 0) -> np.ndarray:
    """The (n_boot, m) bootstrap distribution of the mean of each column of ``diffs`` (n items
    × m columns, NaN = missing); see the module docstring for the two exact shortcuts."""
    d = np.asarray(diffs, dtype=float)
    if d.ndim == 1:
        d = d[:, None]
    n, m = d.shape
    check_resample_memory(n_boot, m, "resamples × columns × 8 bytes")
    out = np.full((n_boot, m), np.nan)
    if n == 0:
        return out
    rng = np.random.default_rng(seed)
    dense = []
    for j in range(m):
        col = d[:, j]
        missing = np.isnan(col)
        values, freq = np.unique(col[~missing], return_counts=True)
        if len(values) + 1 > max(3, _TIED * n):
            dense.append(j)
            continue
        # the categories: each distinct value, then "missing" (weight 0, not in the denominator)
        check_resample_memory(n_boot, m + 2 * (len(values) + 1),
                              "resamples × (columns + 2 × distinct values) × 8 bytes")
        probs = np.append(freq, missing.sum()) / n
        draws = rng.multinomial(n, probs, size=n_boot).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, j] = draws[:, :-1] @ values / (n - draws[:, -1])
    if dense:
        x = d[:, dense]
        have = ~np.isnan(x)
        x = np.where(have, x, 0.0)
        w = have.astype(float)
        step = max(1, _MAX_CELLS // n)
        for start in range(0, n_boot, step):
            rows = min(step, n_boot - start)
            c = _counts(n, rows, rng)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[start:start + rows, dense] = (c @ x) / (c @ w)
    return out


def paired_bootstrap(diffs, n_boot: int = PAIRED_N_BOOT, seed: int = 0,
                     alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-bootstrap ``(lo, hi)`` of the mean of each column of ``diffs`` (items ×
    columns of paired differences B − A, NaN = missing), all columns from one seed."""
    boot = bootstrap_means(diffs, n_boot, seed)
    with np.errstate(invalid="ignore"):
        if np.all(np.isnan(boot)):
            nan = np.full(boot.shape[1], np.nan)
            return nan, nan.copy()
        lo, hi = np.nanpercentile(boot, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
    return lo, hi


def _mean_difference(x, y, axis=-1):
    return np.mean(x - y, axis=axis)


def sign_flip_p(a, b, n_resamples: int = 9_999, seed: int = 0) -> float:
    """Two-sided p-value of the paired permutation (sign-flip) test that the mean of B − A is
    0; NaN pairs are left out, 1.0 when nothing differs."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if len(a) == 0 or np.all(a == b):
        return 1.0
    res = stats.permutation_test((b, a), _mean_difference, permutation_type="samples",
                                 vectorized=True, n_resamples=n_resamples,
                                 alternative="two-sided", random_state=seed)
    return float(min(1.0, res.pvalue))


def holm(pvalues) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values, in the input order (NaN stays NaN, and is not
    counted among the tests)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(1.0, adjusted)
    return out


def mcnemar_sample_size(p10: float, p01: float, delta: float | None = None,
                        alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Items (pairs) for McNemar's test to detect a difference of rates ``delta`` (default the
    observed ``p01 − p10``) with ``power`` at two-sided ``alpha``, from the observed discordant
    rate ψ = p10 + p01 (Connor 1987, eq. 3):

        n = (z_{1−α/2} √ψ + z_{power} √(ψ − δ²))² / δ²

    ψ is raised to |δ| when smaller (a difference of δ needs at least that many discordant
    pairs). None when δ is 0 (no number of items detects no difference)."""
    d = abs(p01 - p10) if delta is None else abs(delta)
    if d == 0 or math.isnan(d):
        return None
    psi = max(p10 + p01, d)
    za, zb = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    return math.ceil((za * math.sqrt(psi) + zb * math.sqrt(max(psi - d * d, 0.0))) ** 2 / d ** 2)


def paired_mean_sample_size(sd: float, delta: float, alpha: float = 0.05,
                            power: float = 0.8) -> int | None:
    """Items for a paired test of a mean difference ``delta`` with differences of standard
    deviation ``sd`` (normal approximation); None when ``delta`` is 0."""
    if not delta or math.isnan(delta) or math.isnan(sd):
        return None
    za, zb = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    return max(2, math.ceil(((za + zb) * sd / abs(delta)) ** 2))
