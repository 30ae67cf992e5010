"""engine.stats: percentile bootstrap (single and many statistics) and the Wilson interval."""

import math

import numpy as np
import pytest

from engine import stats
from engine.stats import Estimate, bootstrap_ci, bootstrap_many, resample_indices, wilson_interval


# ------------------------------------------------------------------------------- Estimate

def test_estimate_as_dict_uses_the_prefix():
    est = Estimate(0.412, 0.35, 0.471, 120)
    assert est.as_dict("nv") == {"nv": 0.412, "nv_lo": 0.35, "nv_hi": 0.471}


def test_estimate_format_pct():
    assert Estimate(0.412, 0.35, 0.471, 120).format_pct() == "41.2% [35.0, 47.1] n=120"
    assert Estimate(None, None, None, 0).format_pct() == "– n=0"


def test_estimate_format_num():
    assert Estimate(-0.25, -0.5, 0.125, 8).format_num() == "-0.250 [-0.500, 0.125] n=8"


# ------------------------------------------------------------------------------ bootstrap

def _naive_bootstrap(values, n_boot, seed, alpha=0.05):
    """The textbook loop, from the same generator: what the vectorised code must equal."""
    rng = np.random.default_rng(seed)
    x = np.asarray(values, dtype=float)
    idx = rng.integers(0, len(x), size=(n_boot, len(x)))
    means = [x[row].mean() for row in idx]
    return tuple(np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)]))


def test_bootstrap_ci_empty_gives_none():
    assert bootstrap_ci([]) == Estimate(None, None, None, 0)


def test_bootstrap_ci_single_item_has_a_point_interval():
    assert bootstrap_ci([0.7]) == Estimate(0.7, 0.7, 0.7, 1)


def test_bootstrap_ci_constant_values_have_a_point_interval():
    est = bootstrap_ci([1, 1, 1, 1])
    assert (est.value, est.lo, est.hi, est.n) == (1.0, 1.0, 1.0, 4)


def test_bootstrap_ci_matches_the_naive_loop():
    values = [0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1]
    est = bootstrap_ci(values, n_boot=500, seed=3)
    lo, hi = _naive_bootstrap(values, 500, 3)
    assert est.value == pytest.approx(8 / 12)
    assert (est.lo, est.hi) == (pytest.approx(lo), pytest.approx(hi))
    assert est.lo <= est.value <= est.hi


def test_bootstrap_ci_is_deterministic_under_a_seed():
    values = list(np.random.default_rng(1).random(50))
    assert bootstrap_ci(values, seed=7) == bootstrap_ci(values, seed=7)
    assert bootstrap_ci(values, seed=7) != bootstrap_ci(values, seed=8)


def test_bootstrap_ci_drops_none_values():
    est = bootstrap_ci([1, None, 0, None, 1])
    assert est.n == 3
    assert est.value == pytest.approx(2 / 3)


def test_bootstrap_ci_other_statistic():
    est = bootstrap_ci([1, 2, 3, 100, 5], statistic=np.median, n_boot=200)
    assert est.value == 3.0
    assert est.lo <= 3.0 <= est.hi


def test_chunked_resampling_equals_one_draw(monkeypatch):
    whole = np.concatenate(list(resample_indices(7, 30, seed=5)))
    monkeypatch.setattr(stats, "_MAX_CELLS", 10)  # one row per chunk
    chunks = list(resample_indices(7, 30, seed=5))
    assert len(chunks) == 30
    assert np.array_equal(np.concatenate(chunks), whole)
    assert whole.shape == (30, 7)


def test_bootstrap_many_shares_sum_to_one_on_every_resample():
    rng = np.random.default_rng(0)
    kind = rng.integers(0, 4, size=40)  # each item in exactly one of four categories
    cols = {name: (kind == i).astype(float) for i, name in enumerate(("a", "b", "c", "d"))}
    shares = {name: (lambda c, name=name: c[name].mean(axis=-1)) for name in cols}
    shares["total"] = lambda c: sum(c[name].mean(axis=-1) for name in ("a", "b", "c", "d"))
    est = bootstrap_many(cols, shares, n_boot=300, seed=2)
    assert est["total"] == Estimate(1.0, pytest.approx(1.0), pytest.approx(1.0), 40)
    assert sum(est[name].value for name in "abcd") == pytest.approx(1.0)


def test_bootstrap_many_uses_the_same_resamples_as_bootstrap_ci():
    rng = np.random.default_rng(4)
    a, b = rng.random(25), rng.random(25)
    est = bootstrap_many({"a": a, "b": b}, n_boot=200, seed=9)
    assert est["a"] == bootstrap_ci(list(a), n_boot=200, seed=9)
    assert est["b"] == bootstrap_ci(list(b), n_boot=200, seed=9)


def test_bootstrap_many_accepts_a_matrix():
    est = bootstrap_many([[1, 0], [1, 1], [0, 1], [1, 1]], n_boot=100)
    assert est["0"].value == 0.75 and est["1"].value == 0.75
    assert est["0"].n == 4


def test_bootstrap_many_rejects_ragged_columns():
    with pytest.raises(ValueError):
        bootstrap_many({"a": [1, 2], "b": [1]})


def test_bootstrap_many_empty():
    assert bootstrap_many({"a": []}) == {"a": Estimate(None, None, None, 0)}


# -------------------------------------------------------------------------------- Wilson

def test_wilson_interval_hand_worked():
    # z = 1.95996: 5/10 -> centre 0.5, half-width 0.26341; 0/10 -> [0, 0.27753]
    half = wilson_interval(5, 10)
    assert (half.value, half.n) == (0.5, 10)
    assert half.lo == pytest.approx(0.236593, abs=1e-6)
    assert half.hi == pytest.approx(0.763407, abs=1e-6)
    zero = wilson_interval(0, 10)
    assert zero.lo == 0.0 and zero.hi == pytest.approx(0.277533, abs=1e-6)
    full = wilson_interval(10, 10)
    assert full.hi == 1.0 and full.lo == pytest.approx(1 - 0.277533, abs=1e-6)


def test_wilson_interval_empty_and_invalid():
    assert wilson_interval(0, 0) == Estimate(None, None, None, 0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_wilson_interval_narrows_with_n():
    small, large = wilson_interval(4, 10), wilson_interval(400, 1000)
    assert math.isclose(small.value, large.value)
    assert large.hi - large.lo < small.hi - small.lo
