"""engine.paired_stats against known values, and engine.results.paired on real runs
made by the run engine with scripted generators (tests/testkit/scripted_runs.py), whose
(b, o, m) labels per query are known in advance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from engine.arena.ratings.duel import compare
from engine.results.paired import PairingError, pair, side_runs
from engine.results.paired_words import verdict_line
from engine.results.paired_text import power_line
from engine.paired_stats import (bootstrap_means, holm, mcnemar_exact,
                                         mcnemar_sample_size, paired_bootstrap, sign_flip_p)
from engine.store import Store
from testkit.scripted_runs import build_workspace

# ------------------------------------------------------------------ statistics, known values


def test_mcnemar_exact_against_a_hand_computed_binomial():
    # 10 discordant pairs, 2 favour A (a_only) and 8 favour B: two-sided exact binomial
    # p = 2 * P(X <= 2 | n=10, 1/2) = 2 * (1 + 10 + 45) / 1024 = 112/1024
    a = [1] * 2 + [0] * 8 + [1] * 5 + [0] * 5
    b = [0] * 2 + [1] * 8 + [1] * 5 + [0] * 5
    out = mcnemar_exact(a, b)
    assert out["table"] == {"both": 5, "a_only": 2, "b_only": 8, "neither": 5}
    assert out["p"] == pytest.approx(112 / 1024)
    assert mcnemar_exact([1, 0], [1, 0])["p"] == 1.0          # no discordant pair
    assert mcnemar_exact([1, np.nan], [0, 1])["table"]["a_only"] == 1


def test_holm_against_a_hand_worked_case():
    # sorted p: 0.01, 0.02, 0.03, 0.04 (m=4) -> 0.04, 0.06, 0.06 (monotone), 0.06
    p = [0.03, 0.01, 0.04, 0.02, np.nan]
    adjusted = holm(p)
    assert adjusted[:4] == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert math.isnan(adjusted[4])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])     # capped at 1


def test_mcnemar_sample_size_connor_formula():
    # Connor (1987): psi = 0.3, delta = 0.1 -> (1.95996*sqrt(.3) + 0.84162*sqrt(.29))^2 / .01
    expected = (1.959964 * math.sqrt(0.3) + 0.841621 * math.sqrt(0.29)) ** 2 / 0.01
    assert mcnemar_sample_size(0.1, 0.2) == math.ceil(expected)
    assert mcnemar_sample_size(0.1, 0.1) is None                       # no difference
    assert mcnemar_sample_size(0.1, 0.1, delta=0.05) > mcnemar_sample_size(0.1, 0.2)


def test_bootstrap_shortcut_matches_resampling_items():
    """The multinomial shortcut for tied columns gives the distribution that resampling items
    gives: same mean and spread of the bootstrap means (different draws, same law)."""
    rng = np.random.default_rng(1)
    d = rng.choice([-1.0, 0.0, 1.0], p=[0.15, 0.6, 0.25], size=400)
    d[:20] = np.nan
    fast = bootstrap_means(d, n_boot=20_000, seed=2)[:, 0]
    dense = bootstrap_means(np.column_stack([d, rng.random(400)]), n_boot=20_000, seed=2)
    idx = rng.integers(0, 400, (20_000, 400))
    slow = np.nanmean(d[idx], axis=1)
    assert fast.mean() == pytest.approx(slow.mean(), abs=2e-3)
    assert fast.std() == pytest.approx(slow.std(), rel=0.05)
    assert dense[:, 0].std() == pytest.approx(slow.std(), rel=0.05)
    # seeded
    assert np.array_equal(bootstrap_means(d, 500, seed=3), bootstrap_means(d, 500, seed=3))


def test_paired_bootstrap_ci_covers_the_true_difference_about_95_percent():
    hits, trials = 0, 400
    for seed in range(trials):
        rng = np.random.default_rng(seed)
        a = rng.random(120) < 0.5
        b = np.where(rng.random(120) < 0.8, a, rng.random(120) < 0.7)  # paired, P(b)=0.54
        true = 0.8 * 0.5 + 0.2 * 0.7 - 0.5
        f1 = rng.beta(2, 2, 120) + 0.1 * rng.standard_normal(120)     # continuous, Δ = 0
        lo, hi = paired_bootstrap(np.column_stack([b - a.astype(float), f1 - 0.5]),
                                  n_boot=1000, seed=seed)
        hits += int(lo[0] <= true <= hi[0]) + int(lo[1] <= 0 <= hi[1])
    coverage = hits / (2 * trials)
    assert 0.92 <= coverage <= 0.975, coverage


def test_sign_flip_p_values_are_uniform_under_the_null():
    ps = []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        a = rng.random(30)
        b = a + rng.standard_normal(30)           # symmetric differences around 0
        ps.append(sign_flip_p(a, b, n_resamples=499, seed=seed))
    assert stats.kstest(ps, "uniform").pvalue > 0.01
    # and a real difference is found
    rng = np.random.default_rng(0)
    a = rng.random(50)
    assert sign_flip_p(a, a + 0.3 + 0.1 * rng.standard_normal(50), 999) < 0.01


def test_sign_flip_is_exact_on_small_samples():
    # 4 pairs all +1: of the 16 sign patterns, 2 are as extreme (all + or all −): p = 1/8
    assert sign_flip_p([0, 0, 0, 0], [1, 1, 1, 1]) == pytest.approx(0.125)


# ------------------------------------------------------------------ pairing stored runs


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    ws = build_workspace(tmp_path_factory.mktemp("paired") / "workspace.db")
    s = Store(ws["path"])
    yield s
    s.close()


def test_two_systems_of_one_run(store):
    sides = ("alpha:fake-a/mirage@1", "alpha:fake-b/mirage@1")
    c = compare(store, *sides, side_runs(store, *sides), n_boot=2000)
    assert (c.shared_items, c.shared_queries, c.only_a, c.only_b) == (18, 6, 0, 0)
    mixed = c.row("em_loose", "mixed")
    assert (mixed.a, mixed.b, mixed.kind) == (pytest.approx(2 / 6), pytest.approx(4 / 6),
                                              "binary")
    assert mixed.table == {"both": 2, "a_only": 0, "b_only": 2, "neither": 2}
    assert mixed.p == pytest.approx(0.5) and mixed.verdict == "no clear difference"
    base = c.row("em_loose", "base")
    assert base.table["a_only"] == 2 and base.table["b_only"] == 1
    # Holm over every row: never below the raw p
    assert all(r.p_holm >= r.p - 1e-12 for r in c.rows)
    nv = c.row("nv", "mixed")
    assert nv.kind == "adaptability" and nv.delta == pytest.approx(-1 / 6)   # A: q0, q4; B: q2
    # the item diff: EM_loose flips per setting, with both responses
    assert c.flip_groups("setting") == {"base": {"better": 1, "worse": 2},
                                        "mixed": {"better": 2, "worse": 0},
                                        "oracle": {"better": 1, "worse": 0}}
    flip = next(f for f in c.flips if f.setting == "mixed")
    assert flip.a_response == "I am not sure." and flip.b_response.startswith("The answer is")
    # pattern transitions of the six queries (A -> B)
    t = c.transitions["mixed"]
    moves = {(a, b): n for a, row in t.items() for b, n in row.items() if n}
    assert moves == {("b0o1m0", "b0o1m1"): 1, ("b0o1m1", "b0o1m1"): 1,
                     ("b0o0m0", "b0o1m0"): 1, ("b1o0m0", "b0o0m0"): 1,
                     ("b0o1m0", "b1o1m1"): 1, ("b1o1m1", "b0o1m1"): 1}
    assert verdict_line(c).startswith("No clear difference on em_loose (mixed): +33.3 pp")
    assert "18 shared items" in verdict_line(c)
    assert power_line(c).startswith("power: ")
    # the run's arena: fake-b's mixed answers won 4, lost 1, tied 1 of 6 battles
    duel = next(a for a in c.arena if a["setting"] == "mixed")
    assert duel["p_a_stronger"] < 0.5 and duel["elo_delta"] > 0
    assert duel["elo_lo"] <= duel["elo_delta"] <= duel["elo_hi"] and duel["queries"] == 6
    # seeded: same numbers again
    again = compare(store, *sides, side_runs(store, *sides), n_boot=2000)
    assert [(r.lo, r.hi, r.p) for r in again.rows] == [(r.lo, r.hi, r.p) for r in c.rows]


def test_different_models_across_runs(store):
    # issue 18's case: no system in common, yet the same (setting, query) items
    sides = ("alpha:fake-b/mirage@1", "beta")
    c = compare(store, *sides, side_runs(store, *sides), n_boot=500)
    assert c.b.system == "fake-a/mirage@1" and c.shared_items == 18
    assert c.row("em_loose", "mixed").n == 6
    as_json = c.as_json()
    assert as_json["a"]["run"] == "alpha" and len(as_json["rows"]) == len(c.rows)
    assert len(c.items) == 18 and {"a_em_loose", "b_em_loose"} <= set(c.items[0])


def test_refusals(store):
    def paired(a: str, b: str):
        return pair(store, a, b, side_runs(store, a, b))

    with pytest.raises(PairingError, match="2 systems; say which"):
        paired("alpha", "beta:nobody")
    with pytest.raises(PairingError, match="no system 'nobody'"):
        paired("beta:nobody", "alpha")
    with pytest.raises(PairingError, match="same system"):
        paired("beta", "beta")
    # two systems in one run, named by the run alone
    p = paired("alpha", "alpha")
    assert (p.a.system, p.b.system) == ("fake-a/mirage@1", "fake-b/mirage@1")


def test_fail_if_worse_gate_on_known_rows():
    from engine.results.paired import PairedComparison, PairedRow, Side, worse_than

    def row(metric, delta, lo, hi, p_holm):
        return PairedRow(metric, "mixed", "binary", 300, 0.5, 0.5 + delta, delta, lo, hi,
                         p_holm, "McNemar exact", p_holm=p_holm)

    side = Side("r", "s", "d@1")
    c = PairedComparison(side, side, 300, 300, 0, 0,
                         [row("em_loose", -0.08, -0.12, -0.04, 0.001),    # worse by 4..12
                          row("f1_mirage", -0.08, -0.12, -0.01, 0.001),   # CI reaches −1
                          row("nv", 0.06, 0.03, 0.09, 0.01),              # lower is better
                          row("ca", -0.30, -0.5, 0.1, 0.2)],               # not significant
                         "em_loose", [], {}, 100, 0)
    assert [r.metric for r in worse_than(c, "em_loose", 2)] == ["em_loose"]
    assert worse_than(c, "em_loose", 5) == []          # the CI's bound −4 is not beyond −5
    assert worse_than(c, "f1_mirage", 2) == []
    assert [r.metric for r in worse_than(c, "nv", 2)] == ["nv"]
    assert worse_than(c, "ca", 0) == []
    with pytest.raises(PairingError, match="no compared row for 'bleu'"):
        worse_than(c, "bleu", 1)
