"""Judge calibration figures on small hand-made label sets whose κ, correlations and flip
rates are worked out by hand (and, for κ and the correlations, checked against sklearn and
scipy)."""

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from engine.arena.trust.figures import (CalibrationItem, JudgedOrder, breakdown,
                                        calibration_figures, confusion, human_five, judge_class,
                                        kappa_rows, pearson_rows, spearman_rows, verdict_counts)


def item(human, *orders, domain="d", aspect="overall", pair="p"):
    return CalibrationItem(pair, aspect, domain, tuple(human),
                           tuple(JudgedOrder(*o) if isinstance(o, tuple) else o
                                 for o in orders))


def test_sign_accuracy_agreement_and_kappa_by_hand():
    # human classes a, a, b, b, tie; judge a, b, b, b, tie
    items = [item([-1, -2], ("ab", "a")), item([-1, -1], ("ab", "b")),
             item([2, 1], ("ba", "b")), item([1, 1], ("ab", "b")), item([1, -1], ("ab", "tie"))]
    f = calibration_figures(items, n_boot=200)
    assert f["sign_accuracy"].value == pytest.approx(3 / 4) and f["sign_accuracy"].n == 4
    assert f["agreement"].value == pytest.approx(4 / 5) and f["agreement"].n == 5
    # po = 0.8; margins human (a 2, tie 1, b 2), judge (a 1, tie 1, b 3):
    # pe = (2*1 + 1*1 + 2*3) / 25 = 9/25; kappa = (0.8 - 0.36) / 0.64 = 0.6875
    assert f["kappa"].value == pytest.approx(0.6875)
    assert f["kappa"].value == pytest.approx(cohen_kappa_score(
        ["a", "a", "b", "b", "t"], ["a", "b", "b", "b", "t"]))
    assert f["kappa"].lo <= f["kappa"].value <= f["kappa"].hi
    # no probabilities: no weighted kappa, and it says so (None, n = 0)
    assert f["weighted_kappa"].value is None and f["weighted_kappa"].n == 0


def test_weighted_kappa_and_correlations_with_probabilities():
    humans = [[-2, -2], [-1, -1], [0, 0], [1, 1], [2, 2], [1, 2]]
    scores = [-0.9, -0.2, 0.1, 0.6, 0.8, 0.7]
    items = [item(h, ("ab", "b" if s > 0 else "a", s)) for h, s in zip(humans, scores)]
    f = calibration_figures(items, n_boot=200)
    means = [np.mean(h) for h in humans]
    assert f["pearson"].value == pytest.approx(stats.pearsonr(scores, means)[0])
    assert f["spearman"].value == pytest.approx(stats.spearmanr(scores, means)[0])
    assert f["spearman"].value == pytest.approx(1.0)   # the same order exactly
    # judge 5-point: round(2s) halves to 0 -> -2, 0, 0, 1, 2, 1; human: -2, -1, 0, 1, 2, 1
    # (1.5 rounds to 1)
    assert [human_five(i) for i in items] == [-2, -1, 0, 1, 2, 1]
    expected = cohen_kappa_score([-2, -1, 0, 1, 2, 1], [-2, 0, 0, 1, 2, 1], weights="linear",
                                 labels=[-2, -1, 0, 1, 2])
    assert f["weighted_kappa"].value == pytest.approx(expected) and f["weighted_kappa"].n == 6


def test_position_bias_flip_rate_and_first_position_share():
    # four pairs judged both ways: the judge always picks whatever it is shown first on
    # three (a flip each), and is consistent on the fourth
    always_first = [("ab", "a"), ("ba", "b")]
    items = [item([1, 1], *always_first) for _ in range(3)]
    items.append(item([1, 1], ("ab", "b"), ("ba", "b")))
    f = calibration_figures(items, n_boot=200)
    assert f["flip_rate"].value == pytest.approx(3 / 4) and f["flip_rate"].n == 4
    # 8 decisive verdicts; the first shown won in 6 + 1 ('ba' picked b, shown first)
    assert f["first_position_wins"].value == pytest.approx(7 / 8)
    assert f["first_position_wins"].n == 8
    # a flip is a tie, as in the arena
    assert [judge_class(i) for i in items] == ["tie", "tie", "tie", "b"]


def test_unparsed_and_failed_are_counted_never_scored():
    items = [item([1, 1], ("ab", "b")), item([1, 1], ("ab", None)),
             item([-1, -1], JudgedOrder("ba", None, failed=True)),
             item([-1, -1], ("ab", None), ("ba", "a"))]
    f = calibration_figures(items, n_boot=100)
    assert f["sign_accuracy"].value == 1.0 and f["sign_accuracy"].n == 2
    assert verdict_counts(items) == {"pairs": 4, "orders": 5, "unparsed": 2, "failed": 1,
                                     "no_verdict": 2}
    matrix = confusion(items)
    assert matrix["none"] == {"a": 1, "tie": 0, "b": 1} and matrix["b"]["b"] == 1


def test_human_ceiling_and_breakdowns():
    items = [item([-2, -1], ("ab", "a"), domain="x"), item([1, 2], ("ab", "b"), domain="x"),
             item([1, -1], ("ab", "b"), domain="y"), item([0, 2], ("ab", "b"), domain="y"),
             item([2, 2], ("ab", "b"), domain="y", aspect="correctness")]
    f = calibration_figures(items, n_boot=100)
    # both non-tie on four pairs; the annotators agree on three of them
    assert f["human_sign_agreement"].value == pytest.approx(3 / 4)
    assert f["human_sign_agreement"].n == 4
    h1, h2 = [-2, 1, 1, 0, 2], [-1, 2, -1, 2, 2]
    assert f["human_pearson"].value == pytest.approx(stats.pearsonr(h1, h2)[0])
    assert f["human_kappa"].value == pytest.approx(cohen_kappa_score(np.sign(h1), np.sign(h2)))
    by_domain = breakdown(items, lambda i: i.domain, n_boot=50)
    assert list(by_domain) == ["x", "y"] and by_domain["x"]["agreement"].n == 2
    assert set(breakdown(items, lambda i: i.aspect, n_boot=50)) == {"correctness", "overall"}


def test_vectorised_statistics_match_the_libraries_on_random_rows():
    rng = np.random.default_rng(1)
    x = rng.integers(-2, 3, size=(20, 30)).astype(float)
    y = np.clip(x + rng.integers(-1, 2, size=x.shape), -2, 2)
    mask = rng.random(x.shape) < 0.8
    k = kappa_rows(x, y, mask, [-2, -1, 0, 1, 2], "linear")
    r, rho = pearson_rows(x, y, mask), spearman_rows(x, y, mask)
    for row in range(20):
        m = mask[row]
        assert k[row] == pytest.approx(cohen_kappa_score(
            x[row][m], y[row][m], labels=[-2, -1, 0, 1, 2], weights="linear"))
        assert r[row] == pytest.approx(stats.pearsonr(x[row][m], y[row][m])[0])
        assert rho[row] == pytest.approx(stats.spearmanr(x[row][m], y[row][m])[0])


def test_empty_and_deterministic():
    f = calibration_figures([])
    assert all(e.value is None and e.n == 0 for e in f.values())
    items = [item([i % 5 - 2, (i * 3) % 5 - 2], ("ab", "ab"[i % 2])) for i in range(30)]
    assert calibration_figures(items, seed=3) == calibration_figures(items, seed=3)


def test_paired_difference_on_common_pairs():
    from engine.arena.trust.figures import paired_difference

    humans = [[-1, -1], [1, 2], [2, 2], [-2, -1], [1, 1]]
    wrong = [item(h, ("ab", "b" if np.mean(h) < 0 else "a"), pair=str(i))
             for i, h in enumerate(humans)]
    right = [item(h, ("ab", "a" if np.mean(h) < 0 else "b"), pair=str(i))
             for i, h in enumerate(humans)]
    right.append(item([1, 1], ("ab", "a"), pair="only-in-b"))   # not in common: left out
    d = paired_difference(wrong, right, n_boot=200)
    assert d["sign_accuracy"].value == 1.0 and d["sign_accuracy"].n == 5
    assert d["sign_accuracy"].lo == d["sign_accuracy"].hi == 1.0   # paired: no spread
    same = paired_difference(right, right, n_boot=200)
    assert same["agreement"].value == 0 and (same["agreement"].lo, same["agreement"].hi) == (0, 0)
    assert same["flip_rate"].value is None          # one order: undefined on both sides
