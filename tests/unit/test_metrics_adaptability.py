"""engine.metrics.adaptability: MIRAGE §1 NV / CA / CI / CM, patterns and their CIs."""

import math
import random

import pytest

from engine.metrics.adaptability import (
    CATEGORIES,
    METRIC_KEYS,
    PATTERN_KEYS,
    adaptability,
    category_label,
    category_of,
    context_acceptability,
    context_insensitivity,
    context_misinterpretation,
    noise_vulnerability,
    overall_score,
    pattern_counts,
    pattern_key,
)
from engine.stats import clopper_pearson, rate_interval

# Hand-worked: 10 items.
#   b o m   category            count
#   0 1 0   noise vulnerable      2
#   1 1 0   noise vulnerable      1
#   0 1 1   context acceptable    3
#   1 1 1   context acceptable    1
#   0 0 0   context insensitive   1
#   0 0 1   context insensitive   1
#   1 0 0   context misinterp.    1
# NV = 3/10, CA = 4/10, CI = 2/10, CM = 1/10; overall = -.3 + .4 - .2 - .1 = -0.2
# accuracy: base 3/10, oracle 7/10, mixed 5/10
ITEMS = ([(0, 1, 0)] * 2 + [(1, 1, 0)] + [(0, 1, 1)] * 3 + [(1, 1, 1)] + [(0, 0, 0)]
         + [(0, 0, 1)] + [(1, 0, 0)])


def test_pattern_key_names_each_setting():
    assert pattern_key(1, 0, 1) == "b1o0m1"
    assert pattern_key(True, False, False) == "b1o0m0"
    assert pattern_key(0.0, 1.0, 1.0) == "b0o1m1"


def test_labels_must_be_binary():
    with pytest.raises(ValueError):
        pattern_key(2, 0, 1)
    with pytest.raises(ValueError):
        adaptability([(1, 0)])


def test_pattern_counts_has_all_eight_keys():
    assert pattern_counts([]) == dict.fromkeys(PATTERN_KEYS, 0)
    counts = pattern_counts(ITEMS)
    assert len(counts) == 8
    assert counts["b0o1m0"] == 2 and counts["b0o1m1"] == 3 and counts["b1o1m1"] == 1
    assert counts["b1o0m1"] == 0
    assert sum(counts.values()) == 10


@pytest.mark.parametrize("b,o,m,category", [
    (0, 1, 0, "noise_vulnerable"), (1, 1, 0, "noise_vulnerable"),
    (0, 1, 1, "context_acceptable"), (1, 1, 1, "context_acceptable"),
    (0, 0, 0, "context_insensitive"), (0, 0, 1, "context_insensitive"),
    (1, 0, 0, "context_misinterpreted"), (1, 0, 1, "context_misinterpreted"),
])
def test_category_of_every_pattern(b, o, m, category):
    assert category_of(b, o, m) == category


def test_category_labels_name_the_mixed_setting():
    assert category_label("noise_vulnerable") == (
        "noise vulnerable: right with oracle, wrong with mixed")
    assert category_label("noise_vulnerable", "retrieved@5").endswith("wrong with retrieved@5")
    assert {category_label(c).split(":")[0] for c in CATEGORIES} == {
        "noise vulnerable", "context acceptable", "context insensitive",
        "context misinterpreted"}


def test_shares_hand_worked():
    assert noise_vulnerability(ITEMS) == pytest.approx(0.3)
    assert context_acceptability(ITEMS) == pytest.approx(0.4)
    assert context_insensitivity(ITEMS) == pytest.approx(0.2)
    assert context_misinterpretation(ITEMS) == pytest.approx(0.1)
    assert overall_score(ITEMS) == pytest.approx(-0.2)
    assert noise_vulnerability([]) is None


def test_report_hand_worked():
    report = adaptability(ITEMS, n_boot=300, seed=0)
    assert report.n == 10
    assert report.nv.value == pytest.approx(0.3)
    assert report.ca.value == pytest.approx(0.4)
    assert report.ci.value == pytest.approx(0.2)
    assert report.cm.value == pytest.approx(0.1)
    assert report.overall.value == pytest.approx(-0.2)
    assert report.accuracy["base"].value == pytest.approx(0.3)
    assert report.accuracy["oracle"].value == pytest.approx(0.7)
    assert report.accuracy["mixed"].value == pytest.approx(0.5)
    assert report.patterns == pattern_counts(ITEMS)
    for est in (report.nv, report.ca, report.ci, report.cm, report.overall):
        assert est.lo <= est.value <= est.hi and est.n == 10


def test_the_four_sum_to_one_exactly():
    report = adaptability(ITEMS, n_boot=50)
    total = report.nv.value + report.ca.value + report.ci.value + report.cm.value
    assert total == pytest.approx(1.0, abs=1e-12)
    assert report.nv.value + report.ca.value == pytest.approx(report.accuracy["oracle"].value)


def test_shares_get_clopper_pearson_and_overall_its_image():
    """Each share and accuracy is k of n with its Clopper–Pearson CI; overall = 2 CA - 1, so its
    CI is 2 CP(CA) - 1; none depends on the seed."""
    report = adaptability(ITEMS, n_boot=400, seed=11)
    nv_k = sum(int(o == 1 and m == 0) for b, o, m in ITEMS)
    assert (report.nv.lo, report.nv.hi) == clopper_pearson(nv_k, len(ITEMS))
    assert report.nv == rate_interval([int(o == 1 and m == 0) for b, o, m in ITEMS])
    oracle_k = sum(o for _, o, _ in ITEMS)
    assert (report.accuracy["oracle"].lo, report.accuracy["oracle"].hi) == clopper_pearson(
        oracle_k, len(ITEMS))
    ca_k = round(report.ca.value * len(ITEMS))
    ca_lo, ca_hi = clopper_pearson(ca_k, len(ITEMS))
    assert report.overall.lo == pytest.approx(2 * ca_lo - 1)
    assert report.overall.hi == pytest.approx(2 * ca_hi - 1)
    other = adaptability(ITEMS, n_boot=50, seed=3)
    assert [getattr(other, k) for k in METRIC_KEYS] == [getattr(report, k) for k in METRIC_KEYS]


def test_property_random_inputs_partition_items():
    rng = random.Random(1234)
    for _ in range(150):
        n = rng.randint(1, 40)
        items = [tuple(rng.randint(0, 1) for _ in range(3)) for _ in range(n)]
        report = adaptability(items, n_boot=20, seed=rng.randint(0, 1000))
        shares = (report.nv.value, report.ca.value, report.ci.value, report.cm.value)
        assert math.isclose(sum(shares), 1.0, abs_tol=1e-12)
        assert math.isclose(report.overall.value,
                            -shares[0] + shares[1] - shares[2] - shares[3], abs_tol=1e-12)
        assert math.isclose(shares[0] + shares[1], report.accuracy["oracle"].value)
        assert sum(report.patterns.values()) == n
        counted = {c: 0 for c in CATEGORIES}
        for item in items:
            counted[category_of(*item)] += 1
        assert math.isclose(counted["noise_vulnerable"] / n, shares[0])
        assert math.isclose(counted["context_misinterpreted"] / n, shares[3])


def test_as_json_keys_and_values():
    data = adaptability(ITEMS, n_boot=100, mixed_setting="retrieved@5").as_json()
    for key in ("nv", "ca", "ci", "cm", "overall"):
        assert {key, f"{key}_lo", f"{key}_hi"} <= set(data)
    for key in ("acc_base", "acc_oracle", "acc_mixed"):
        assert {key, f"{key}_lo", f"{key}_hi"} <= set(data)
    assert data["n"] == 10
    assert data["nv"] == pytest.approx(0.3)
    assert data["patterns"]["b0o1m1"] == 3
    assert data["mixed_setting"] == "retrieved@5"


def test_empty_report():
    report = adaptability([])
    assert report.n == 0
    assert report.nv.value is None and report.overall.lo is None
    assert report.patterns == dict.fromkeys(PATTERN_KEYS, 0)
    assert report.as_json()["nv"] is None


def test_single_item_has_exact_intervals():
    report = adaptability([(0, 1, 0)])
    # 1 of 1: Clopper-Pearson [0.025, 1]; 0 of 1 (CA): [0, 0.975], so overall [-1, 0.95]
    assert (report.nv.value, report.nv.lo, report.nv.hi) == (1.0, pytest.approx(0.025), 1.0)
    assert report.overall.value == -1.0
    assert (report.overall.lo, report.overall.hi) == (-1.0, pytest.approx(0.95))


def test_many_groups_at_once_equal_one_group_at_a_time():
    import random

    from engine.metrics.adaptability import PATTERN_KEYS, adaptability_many, pattern_counts

    rng = random.Random(7)
    groups = [[tuple(rng.randint(0, 1) for _ in range(3)) for _ in range(n)]
              for n in (0, 1, 2, 5, 8, 40, 333)]
    counts = [[pattern_counts(g)[key] for key in PATTERN_KEYS] for g in groups]
    for group, report in zip(groups, adaptability_many(counts, mixed_setting="retrieved@3")):
        one = adaptability(group, mixed_setting="retrieved@3")
        assert report == one
        assert report.n == len(group)
        if group:
            k_ca = sum(1 for _, o, m in group if o == 1 and m == 1)
            assert report.overall.value == (2 * k_ca - len(group)) / len(group)
            assert (report.overall.lo, report.overall.hi) == (
                -1 + 2 * clopper_pearson(k_ca, len(group))[0],
                -1 + 2 * clopper_pearson(k_ca, len(group))[1])
        else:
            assert report.nv.value is None and report.overall.n == 0
