"""engine.stats.intervals: the interval per metric kind has real coverage and never zero width.

Simulated data with a known truth: for rates (0/1 per item) and for the adaptability overall
(a composite of one multinomial of categories), the 95% interval must cover the truth in at least
93% of seeded trials, for p in {0, 0.02, 0.1, 0.5} and n in {8, 30, 200}, and never be a point.
Clopper–Pearson depends on the data only through (k, n), so each trial's interval is looked up
per distinct k (fast), but through the same public functions the report uses.
"""

import numpy as np
import pytest

from engine.metrics.adaptability import adaptability
from engine.stats import (
    BOUNDED_MEAN, MEAN, RATE, SIGNED_SHARE, clopper_pearson, composite_interval, infer_kind,
    interval, intervals,
)

TRIALS = 400
PS = (0.0, 0.02, 0.1, 0.5)
NS = (8, 30, 200)


def _rate_bounds(n: int) -> dict[int, tuple[float, float]]:
    """k -> (lo, hi) of interval(RATE, k ones of n), for every k."""
    out = {}
    for k in range(n + 1):
        est = interval(RATE, [1] * k + [0] * (n - k))
        assert est.value == k / n and est.n == n
        out[k] = (est.lo, est.hi)
    return out


@pytest.mark.parametrize("n", NS)
def test_rate_intervals_cover_the_truth_and_are_never_points(n):
    bounds = _rate_bounds(n)
    for k, (lo, hi) in bounds.items():
        assert hi - lo > 0, f"zero width at k={k}, n={n}"
        assert 0.0 <= lo <= k / n <= hi <= 1.0
    rng = np.random.default_rng(1000 + n)
    for p in PS:
        ks = rng.binomial(n, p, size=TRIALS)
        covered = np.mean([bounds[k][0] <= p <= bounds[k][1] for k in ks])
        assert covered >= 0.93, f"p={p}, n={n}: coverage {covered:.3f}"


def test_zero_of_eight_is_the_exact_interval():
    est = interval(RATE, [0] * 8)
    assert (est.value, est.lo, est.n) == (0.0, 0.0, 8)
    assert est.hi == pytest.approx(1 - 0.025 ** (1 / 8))  # 0.369
    full = interval(RATE, [1] * 8)
    assert (full.value, full.hi, full.lo) == (1.0, 1.0, pytest.approx(0.025 ** (1 / 8)))
    assert clopper_pearson(0, 8) == (est.lo, est.hi)


def test_wilson_would_under_cover_where_clopper_pearson_does_not():
    """The reason rates do not use Wilson: 1 of 8 gives a Wilson lower bound above 0.02."""
    from engine.stats import wilson_interval

    assert wilson_interval(1, 8).lo > 0.02
    assert clopper_pearson(1, 8)[0] < 0.02


def _overall_truths():
    """(shares of NV, CA, CI, CM) with a known overall -NV + CA - CI - CM = 2 CA - 1."""
    for ca in PS:
        rest = (1 - ca) / 3
        yield (rest, ca, rest, rest)
    yield (0.0, 1.0, 0.0, 0.0)  # overall +1: every query context-acceptable
    yield (0.5, 0.0, 0.5, 0.0)  # overall -1 with two categories present


_CATEGORY_ITEMS = {0: (0, 1, 0), 1: (0, 1, 1), 2: (0, 0, 0), 3: (1, 0, 0)}  # NV, CA, CI, CM


@pytest.mark.parametrize("n", NS)
def test_adaptability_overall_covers_the_truth_and_is_never_a_point(n):
    rng = np.random.default_rng(2000 + n)
    for shares in _overall_truths():
        truth = -shares[0] + shares[1] - shares[2] - shares[3]
        counts = rng.multinomial(n, shares, size=TRIALS)
        seen: dict[tuple, tuple[float, float]] = {}
        hits = 0
        for row in map(tuple, counts):
            if row not in seen:
                items = [_CATEGORY_ITEMS[c] for c, m in enumerate(row) for _ in range(m)]
                est = adaptability(items, n_boot=20).overall
                assert est.value == pytest.approx(2 * row[1] / n - 1)
                assert est.hi - est.lo > 0, f"zero width overall at counts {row}"
                assert -1.0 <= est.lo <= est.value <= est.hi <= 1.0
                seen[row] = (est.lo, est.hi)
            lo, hi = seen[row]
            hits += lo - 1e-12 <= truth <= hi + 1e-12
        assert hits / TRIALS >= 0.93, f"shares={shares}, n={n}: coverage {hits / TRIALS:.3f}"


def test_overall_at_the_boundary():
    none_ca = adaptability([(0, 1, 0)] * 8).overall  # 8 of 8 noise vulnerable: overall -1
    assert none_ca.value == -1.0 and none_ca.lo == -1.0
    assert none_ca.hi == pytest.approx(2 * (1 - 0.025 ** (1 / 8)) - 1)  # -0.26, not -1
    all_ca = adaptability([(0, 1, 1)] * 8).overall
    assert all_ca.value == 1.0 and all_ca.hi == 1.0 and all_ca.lo < 1.0


def test_composite_with_many_weights_uses_a_jeffreys_dirichlet_bootstrap():
    lo, hi = composite_interval([0, 8, 0], [0.0, 0.5, 1.0], n_boot=2000, seed=1)
    assert lo < 0.5 < hi
    assert composite_interval([0, 8, 0], [0.0, 0.5, 1.0], n_boot=2000, seed=1) == (lo, hi)
    lo, hi = composite_interval([8, 0, 0], [0.0, 0.5, 1.0])
    assert lo == 0.0 and hi > 0.0


def test_bounded_means_never_collapse_and_keep_their_point_value():
    f1 = [0.0] * 8
    est = interval(BOUNDED_MEAN, f1)
    assert (est.value, est.lo, est.n) == (0.0, 0.0, 8) and est.hi == pytest.approx(0.369, abs=1e-3)
    spread = [0.2, 0.4, 0.6, 0.9, 0.1, 0.5, 0.3, 0.7]
    est = interval(BOUNDED_MEAN, spread)
    assert est.value == float(np.mean(spread)) and est.lo < est.value < est.hi
    lo, hi = clopper_pearson(round(sum(spread)), len(spread))
    assert est.lo <= lo and est.hi >= hi
    # no bounds known: the plain percentile bootstrap
    unbounded = interval(MEAN, [2.0, 5.0, 3.0, 4.0])
    assert unbounded.value == 3.5 and unbounded.lo < 3.5 < unbounded.hi


def test_kind_is_inferred_from_the_values():
    assert infer_kind([0, 1, 1]) == RATE
    assert infer_kind([0, 0.5, 1]) == BOUNDED_MEAN
    assert infer_kind([0, 2.5]) == MEAN
    out = intervals({"em": [0, 0, 0, 0], "f1": [0.0, 0.25, 0.0, 0.0], "none": [None, 1, None]})
    assert out["em"].hi == pytest.approx(clopper_pearson(0, 4)[1])
    assert out["f1"].hi > 0 and out["none"].n == 1
    with pytest.raises(ValueError):
        intervals({"x": [0.5]}, {"x": SIGNED_SHARE})
    with pytest.raises(ValueError):
        intervals({"x": [0.5]}, {"x": "nope"})


def test_a_count_mean_with_no_spread_is_not_zero_width():
    # every answer cites exactly two passages: the bootstrap alone says [2, 2]
    from engine.stats import interval, poisson_mean_interval

    est = interval(None, [2.0] * 8)
    assert est.value == 2.0 and est.lo < 2.0 < est.hi
    assert (est.lo, est.hi) == poisson_mean_interval(16, 8)
    lo, hi = poisson_mean_interval(0, 8)
    assert lo == 0.0 and hi == pytest.approx(3.6889 / 8, rel=1e-3)


def test_vectorised_clopper_pearson_is_binomtests_exact_interval():
    from scipy.stats import binomtest

    from engine.stats import clopper_pearson_many

    pairs = [(k, n) for n in (1, 2, 3, 8, 31, 200, 5000) for k in sorted({0, 1, n // 3, n - 1, n})
             if 0 <= k <= n]
    lo, hi = clopper_pearson_many([k for k, _ in pairs], [n for _, n in pairs])
    for (k, n), a, b in zip(pairs, lo, hi):
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        assert a == pytest.approx(ci.low, abs=1e-9) and b == pytest.approx(ci.high, abs=1e-9)
        assert (a == 0.0) == (k == 0) and (b == 1.0) == (k == n)
        assert clopper_pearson(k, n) == (float(a), float(b))    # one computation for both
    with pytest.raises(ValueError):
        clopper_pearson_many([3], [2])
