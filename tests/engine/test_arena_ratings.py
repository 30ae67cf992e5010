"""engine.arena ratings: the Bradley–Terry fit, bootstrap tournaments, the leaderboard (§2)."""

import math

import numpy as np
import pytest

from engine.arena.ratings import bradley_terry as bt
from engine.arena.ratings.bradley_terry import (bradley_terry_fit, bradley_terry_fit_method,
                                                bradley_terry_fit_pairs, doubled_pairs, elo_scale,
                                                win_matrix)
from engine.arena.ratings.leaderboard import compute_ratings, format_leaderboard
from engine.arena.ratings.tournaments import (bootstrap_thetas, bootstrap_thetas_pairs,
                                              encode_battles, per_query_wins, resample_counts,
                                              total_wins, tournament_win_rates)
from engine.arena.types import Battle
from engine.stats import clopper_pearson, resample_indices

BOOT = 50   # enough tournaments for the properties below, few enough to stay fast


def names(ratings):
    return [s.system for s in ratings.systems]


def by_name(ratings):
    return {s.system: s for s in ratings.systems}


def chain_battles(n_queries=10):
    """A beats B beats C, and A beats C, on every query."""
    out = []
    for q in range(n_queries):
        out += [Battle(q, "A", "B", "a"), Battle(q, "C", "B", "b"), Battle(q, "A", "C", "a")]
    return out


def random_outcomes(rng, n, m, tie_rate=0.2):
    out = []
    for _ in range(m):
        i, j = rng.choice(n, size=2, replace=False)
        u = rng.random()
        out.append((int(i), int(j), 0.5 if u < tie_rate else float(rng.random() < 0.5)))
    return out


# ------------------------------------------------------------------------------- the fit

def test_consistent_wins_give_that_order_and_finite_ratings():
    r = compute_ratings(chain_battles(), n_boot=BOOT)
    assert names(r) == ["A", "B", "C"]
    assert [s.rank for s in r.systems] == [1, 2, 3]
    assert all(math.isfinite(x) for s in r.systems for x in (s.elo, s.elo_lo, s.elo_hi))
    assert any("A never lost" in n and "alpha=0.01" in n for n in r.notes)
    assert any("C never won" in n for n in r.notes)


def test_ties_only_give_equal_ratings():
    battles = [Battle(q, a, b, "tie") for q in range(5)
               for a, b in [("A", "B"), ("B", "C"), ("A", "C")]]
    r = compute_ratings(battles, n_boot=BOOT)
    for s in r.systems:
        assert s.elo == pytest.approx(1000.0, abs=1e-9)
        assert s.elo_lo == pytest.approx(1000.0, abs=1e-9)
        assert s.elo_hi == pytest.approx(1000.0, abs=1e-9)
        assert s.rank == 1 and s.ties == 10 and s.win_rate == 0.5
    assert "every parsed battle was a tie: all ratings are equal" in r.notes


def test_a_perfect_record_is_finite_and_top():
    battles = []
    for q in range(6):
        battles += [Battle(q, "A", "B", "a"), Battle(q, "C", "A", "b"),
                    Battle(q, "B", "C", "a" if q % 2 else "b"), Battle(q, "B", "D", "a"),
                    Battle(q, "C", "D", "tie" if q % 3 else "a")]
    r = compute_ratings(battles, n_boot=BOOT)
    top = r.systems[0]
    assert top.system == "A" and top.losses == 0 and math.isfinite(top.elo)
    assert top.elo < 3000           # held finite by the regularisation, not merely not-inf
    assert r.systems[-1].system == "D" and math.isfinite(r.systems[-1].elo)
    assert any(n.startswith("A never lost") for n in r.notes)


def test_a_system_that_never_wins_is_finite_and_bottom():
    battles = []
    for q in range(6):
        battles += [Battle(q, "A", "B", "a" if q % 2 else "b"), Battle(q, "Z", "A", "b"),
                    Battle(q, "B", "Z", "a")]
    r = compute_ratings(battles, n_boot=BOOT)
    assert names(r)[-1] == "Z"
    z = by_name(r)["Z"]
    assert z.wins == 0 and z.losses == 12 and math.isfinite(z.elo) and math.isfinite(z.elo_lo)
    assert any(n.startswith("Z never won") for n in r.notes)


def test_groups_that_never_meet_stay_finite_and_are_noted():
    battles = [Battle(q, "A", "B", "a") for q in range(4)] + \
              [Battle(q, "C", "D", "a" if q % 2 else "b") for q in range(4)]
    r = compute_ratings(battles, n_boot=BOOT)
    assert all(math.isfinite(s.elo) for s in r.systems)
    assert any("2 groups that never met" in n for n in r.notes)
    assert r.win_fraction[r.order.index("A")][r.order.index("C")] is None


def test_ties_count_as_half_wins_which_changes_the_order():
    # A beat C once and tied it twenty times; B beat C six times in nine. Ties dropped (the
    # MIRAGE-Bench reference), A's record is a perfect 1-0 and it leads; ties as half wins
    # (FastChat, mirage-tui), A is 11-10 against C and B (6-3) leads.
    battles = [Battle(0, "A", "C", "a")] + [Battle(q, "A", "C", "tie") for q in range(1, 21)]
    battles += [Battle(q, "B", "C", "a" if q % 3 else "b") for q in range(21, 30)]
    r = compute_ratings(battles, n_boot=BOOT)
    assert names(r) == ["B", "A", "C"]
    assert r.ties == "half-win"

    enc = encode_battles([b for b in battles if b.winner != "tie"])
    dropped = bradley_terry_fit(total_wins(enc))
    assert dropped[enc.systems.index("A")] > dropped[enc.systems.index("B")]


def test_two_systems_recover_the_log_odds():
    # 30 wins to 10: the unregularised MLE is θ_A − θ_B = ln 3, i.e. 400·log10(3) ≈ 190.8 Elo
    wins = np.array([[0.0, 30.0], [10.0, 0.0]])
    theta = bradley_terry_fit(wins, alpha=1e-9)
    assert theta[0] - theta[1] == pytest.approx(math.log(3), abs=1e-6)
    assert theta.sum() == pytest.approx(0.0, abs=1e-12)
    elo = elo_scale(theta)
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(3), abs=1e-4)
    assert elo.mean() == pytest.approx(1000.0)


def test_elo_scale_formula():
    assert elo_scale(0.0) == 1000.0
    assert elo_scale(math.log(10)) == pytest.approx(1400.0)
    assert elo_scale(-math.log(10)) == pytest.approx(600.0)
    assert np.allclose(elo_scale(np.array([0.0, 1.0])), [1000.0, 1000.0 + 400 / math.log(10)])
    assert elo_scale(1.0, anchor=1500.0) == pytest.approx(1500.0 + 400 / math.log(10))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matrix_fit_equals_pair_list_fit(seed):
    rng = np.random.default_rng(seed)
    outcomes = random_outcomes(rng, 5, 80) + [(5, k, 1.0) for k in range(5)] \
        + [(k, 5, 0.0) for k in range(0, 5, 2)]            # 5 has a perfect record
    theta = bradley_terry_fit(win_matrix(6, outcomes))
    pairs = bradley_terry_fit_pairs(6, doubled_pairs(outcomes))
    assert np.max(np.abs(theta - pairs)) <= 1e-6
    assert np.all(np.isfinite(theta)) and np.argmax(theta) == 5


def test_matrix_fit_equals_pair_list_fit_when_groups_never_meet():
    outcomes = [(0, 1, 1.0), (0, 1, 0.5), (2, 3, 0.0), (2, 3, 1.0), (3, 2, 1.0)]
    theta = bradley_terry_fit(win_matrix(4, outcomes))
    assert np.all(np.isfinite(theta))
    assert np.max(np.abs(theta - bradley_terry_fit_pairs(4, doubled_pairs(outcomes)))) <= 1e-6


def test_pair_weight_scales_alpha():
    # one pair per win (pair_weight=1) gives the same fit as doubled pairs at 0.5
    outcomes = [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (0, 2, 1.0)]
    single = [(i, j) for i, j, _ in outcomes]
    assert np.allclose(bradley_terry_fit_pairs(3, single, pair_weight=1.0),
                       bradley_terry_fit_pairs(3, doubled_pairs(outcomes)), atol=1e-6)


def test_fallback_to_the_penalised_map_agrees_both_ways():
    rng = np.random.default_rng(4)
    outcomes = random_outcomes(rng, 5, 60)
    wins = win_matrix(5, outcomes)
    theta, method = bradley_terry_fit_method(wins, max_iter=1)     # I-LSR cannot converge
    assert method == "map" and np.all(np.isfinite(theta))
    pairs = bradley_terry_fit_pairs(5, doubled_pairs(outcomes), max_iter=1)
    assert np.max(np.abs(theta - pairs)) <= 1e-6
    # on well-connected data, both estimators approach the MLE as alpha goes to 0
    assert np.allclose(bt._map_dense(wins, 1e-9), bradley_terry_fit(wins, alpha=1e-9),
                       atol=1e-5)


def test_fallback_is_noted(monkeypatch):
    def no_convergence(*args, **kwargs):
        raise RuntimeError("Did not converge")

    monkeypatch.setattr(bt.choix, "ilsr_pairwise_dense", no_convergence)
    r = compute_ratings(chain_battles(4), n_boot=5)
    assert names(r) == ["A", "B", "C"]
    assert any("fell back to the penalised MAP" in n for n in r.notes)


def test_degenerate_matrices():
    assert bradley_terry_fit(np.zeros((1, 1))).tolist() == [0.0]
    assert bradley_terry_fit(np.zeros((0, 0))).tolist() == []
    assert np.allclose(bradley_terry_fit(np.zeros((3, 3))), 0.0, atol=1e-12)   # no data
    with pytest.raises(ValueError, match="square"):
        bradley_terry_fit(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        bradley_terry_fit(np.array([[0.0, -1.0], [1.0, 0.0]]))


# ------------------------------------------------------------------------------ tournaments

def test_per_query_matrices_sum_to_the_whole():
    battles = chain_battles(3) + [Battle(7, "A", "B", "tie"), Battle(7, "B", "A", "a")]
    enc = encode_battles(battles)
    per_query = per_query_wins(enc).toarray().reshape(enc.n_queries, 3, 3)
    assert np.allclose(per_query.sum(axis=0), win_matrix(3, enc.outcomes()))
    a, b = enc.systems.index("A"), enc.systems.index("B")
    assert per_query[enc.queries.index(7), b, a] == 1.5 and per_query[3, a, b] == 0.5


def test_resample_counts_match_the_shared_resampler():
    counts = resample_counts(7, 30, seed=3)
    idx = np.concatenate(list(resample_indices(7, 30, seed=3)))
    assert counts.shape == (30, 7) and np.all(counts.sum(axis=1) == 7)
    assert all(np.array_equal(counts[t], np.bincount(idx[t], minlength=7)) for t in range(30))


def test_matrix_bootstrap_equals_pair_list_bootstrap():
    rng = np.random.default_rng(0)
    systems = list("ABCDE")
    battles = []
    for q in range(12):
        for i, j, s in random_outcomes(rng, 5, 8):
            battles.append(Battle(q, systems[i], systems[j], {1.0: "a", 0.0: "b", 0.5: "tie"}[s]))
    enc = encode_battles(battles)
    fast = bootstrap_thetas(enc, 20, seed=5)
    slow = bootstrap_thetas_pairs(enc, 20, seed=5)
    assert fast.shape == (20, 5) and np.max(np.abs(fast - slow)) <= 1e-6
    subset = bootstrap_thetas_pairs(enc, 20, seed=5, tournaments=[3, 11])
    assert np.max(np.abs(subset - fast[[3, 11]])) <= 1e-6


# ------------------------------------------------------------------------------ leaderboard

def spread_battles():
    """A and B even, C and D even, A and B beat C and D nine times in ten."""
    battles = []
    for q in range(40):
        battles += [Battle(q, "A", "B", "a" if q % 2 else "b"),
                    Battle(q, "C", "D", "a" if q % 2 else "b")]
        for top in "AB":
            for low in "CD":
                battles.append(Battle(q, top, low, "b" if (q + ord(top) + ord(low)) % 10 == 0
                                      else "a"))
    return battles


def test_rank_counts_systems_whose_ci_is_entirely_above():
    r = compute_ratings(spread_battles(), n_boot=BOOT)
    assert [s.rank for s in r.systems] == [1, 1, 3, 3]
    assert set(names(r)[:2]) == {"A", "B"}
    for s in r.systems:
        assert s.rank == 1 + sum(o.elo_lo > s.elo_hi for o in r.systems)
        assert s.elo_lo <= s.elo <= s.elo_hi
    # sorted by rank, then Elo descending
    assert [(s.rank, -s.elo) for s in r.systems] == sorted((s.rank, -s.elo) for s in r.systems)


def test_same_seed_same_ratings_other_seed_other_cis():
    battles = spread_battles()
    first = compute_ratings(battles, seed=0)
    assert first.n_boot == 200
    assert compute_ratings(battles, seed=0) == first
    other = compute_ratings(battles, seed=1)
    assert [s.elo for s in other.systems] == [s.elo for s in first.systems]
    assert [(s.elo_lo, s.elo_hi) for s in other.systems] != \
        [(s.elo_lo, s.elo_hi) for s in first.systems]


def test_win_fraction_and_counts():
    battles = [Battle(0, "A", "B", "a"), Battle(1, "B", "A", "b"), Battle(2, "A", "B", "tie"),
               Battle(3, "B", "A", "a"), Battle(0, "B", "C", "a")]
    r = compute_ratings(battles, n_boot=BOOT)
    a, b, c = (r.order.index(x) for x in "ABC")
    assert r.order == ["A", "B", "C"]
    assert r.win_fraction[a][b] == pytest.approx(2.5 / 4)
    assert r.win_fraction[b][a] == pytest.approx(1.5 / 4)
    assert r.win_fraction[b][c] == 1.0 and r.win_fraction[c][b] == 0.0
    assert r.win_fraction[a][c] is None and r.win_fraction[a][a] is None
    assert r.battle_counts == [[0, 4, 0], [4, 0, 1], [0, 1, 0]]
    rec = by_name(r)
    assert (rec["A"].wins, rec["A"].ties, rec["A"].losses, rec["A"].battles) == (2, 1, 1, 4)
    assert (rec["B"].wins, rec["B"].ties, rec["B"].losses, rec["B"].battles) == (2, 1, 2, 5)
    assert rec["A"].win_rate == pytest.approx(0.625)


def test_parse_failures_are_left_out_and_counted():
    battles = chain_battles(5)
    failed = [Battle(q, "A", "B", None) for q in range(3)] + [Battle(2, "C", "X", None)]
    plain = compute_ratings(battles, n_boot=BOOT)
    with_failures = compute_ratings(battles + failed, n_boot=BOOT)
    assert with_failures.parse_failures == 4 and plain.parse_failures == 0
    assert with_failures.n_battles == plain.n_battles == 15
    assert with_failures.n_queries == 5
    assert with_failures.systems == plain.systems
    assert any(n.startswith("X: no parsed battle") for n in with_failures.notes)


def test_no_battles_is_a_clear_error():
    with pytest.raises(ValueError, match="no battles to rate"):
        compute_ratings([])
    with pytest.raises(ValueError, match="2 of them parse failures"):
        compute_ratings([Battle(0, "A", "B", None), Battle(1, "A", "B", None)])


def test_bad_battles_are_refused():
    with pytest.raises(ValueError, match="winner"):
        compute_ratings([Battle(0, "A", "B", "A")])
    with pytest.raises(ValueError, match="itself"):
        compute_ratings([Battle(0, "A", "A", "tie")])


def test_one_query_and_no_bootstrap():
    # resampling one query (or two) cannot vary the battles: no Elo CI, every rank shared
    one = compute_ratings([Battle(0, "A", "B", "a"), Battle(0, "B", "C", "tie")], n_boot=BOOT)
    assert all(s.elo_lo is None and s.elo_hi is None and s.rank == 1 for s in one.systems)
    assert any(n.startswith("1 query only: too few queries for an interval") for n in one.notes)
    assert "  –  " in format_leaderboard(one)
    none = compute_ratings(chain_battles(3), n_boot=0)
    assert all(s.elo_lo == s.elo == s.elo_hi for s in none.systems)
    assert any("n_boot=0" in n for n in none.notes)


def test_format_leaderboard_has_every_row():
    battles = chain_battles(6) + [Battle(0, "A", "B", None)]
    r = compute_ratings(battles, n_boot=BOOT, seed=7)
    text = format_leaderboard(r)
    lines = text.splitlines()
    assert lines[0].split() == ["rank", "system", "Elo", "95%", "CI", "battles", "win", "rate"]
    for s, line in zip(r.systems, lines[1:4]):
        assert line.split()[:3] == [str(s.rank), s.system, f"{s.elo:.0f}"]
        assert f"+{s.elo_hi - s.elo:.0f}/-{s.elo - s.elo_lo:.0f}" in line
        assert (f"{100 * s.win_rate:.1f}% [{100 * s.win_rate_lo:.1f}, "
                f"{100 * s.win_rate_hi:.1f}] n={s.battles}") in line
    assert "note: A never lost" in text
    assert lines[-1] == (f"{BOOT} tournaments over 6 queries, seed 7; ties count as half "
                         f"wins; 1 parse failures left out")
    assert r.as_json()["systems"][0]["system"] == "A"


# ------------------------------------------------------------------------------ win-rate CIs

def test_win_rate_cis_are_seeded():
    battles = spread_battles()
    first = compute_ratings(battles, n_boot=BOOT, seed=0)
    again = compute_ratings(battles, n_boot=BOOT, seed=0)
    cis = [(s.win_rate_lo, s.win_rate_hi) for s in first.systems]
    assert cis == [(s.win_rate_lo, s.win_rate_hi) for s in again.systems]
    other = compute_ratings(battles, n_boot=BOOT, seed=1)
    assert cis != [(s.win_rate_lo, s.win_rate_hi) for s in other.systems]


def test_win_rate_cis_match_a_per_tournament_recount():
    # the slow way: rebuild each tournament's battles from the drawn queries and count
    battles = spread_battles() + [Battle(q, "A", "C", "tie") for q in range(0, 40, 3)]
    r = compute_ratings(battles, n_boot=BOOT, seed=4)
    queries = sorted({b.query for b in battles})
    rates = {name: [] for name in r.order}
    for idx in np.concatenate(list(resample_indices(len(queries), BOOT, seed=4))):
        score = {name: [0.0, 0] for name in r.order}
        for q in idx:
            for b in (b for b in battles if b.query == queries[q]):
                a_share = {"a": 1.0, "b": 0.0, "tie": 0.5}[b.winner]
                score[b.a][0] += a_share
                score[b.b][0] += 1.0 - a_share
                score[b.a][1] += 1
                score[b.b][1] += 1
        for name, (won, n) in score.items():
            rates[name].append(won / n)
    for s in r.systems:
        lo, hi = np.percentile(rates[s.system], [2.5, 97.5])
        assert (s.win_rate_lo, s.win_rate_hi) == pytest.approx((lo, hi), abs=1e-12)


def test_a_balanced_record_has_a_ci_around_its_win_rate():
    battles = [Battle(q, "A", "B", "a" if q % 2 else "b") for q in range(30)]
    battles += [Battle(q, "A", "B", "tie") for q in range(30, 40)]
    r = compute_ratings(battles, n_boot=BOOT)
    for s in r.systems:
        assert s.win_rate == 0.5
        assert s.win_rate_lo < s.win_rate < s.win_rate_hi
        assert 0.0 <= s.win_rate_lo and s.win_rate_hi <= 1.0


def test_a_perfect_record_has_an_exact_ci_never_zero_wide():
    # every tournament gives 100%: the percentiles are [1, 1]; the interval is Clopper–Pearson
    r = by_name(compute_ratings(chain_battles(), n_boot=BOOT))
    lo, hi = clopper_pearson(20, 20)
    assert (r["A"].win_rate, r["A"].win_rate_hi) == (1.0, 1.0) and hi == 1.0
    assert r["A"].win_rate_lo == pytest.approx(lo) and lo < 1.0
    assert (r["C"].win_rate, r["C"].win_rate_lo) == (0.0, 0.0)
    assert r["C"].win_rate_hi == pytest.approx(clopper_pearson(0, 20)[1])
    data = r["A"].as_json()
    assert (data["win_rate"], data["win_rate_hi"]) == (1.0, 1.0) and data["win_rate_lo"] < 1.0


def test_win_rate_cis_without_bootstrap_are_the_point_values():
    for s in compute_ratings(spread_battles(), n_boot=0).systems:
        assert s.win_rate_lo == s.win_rate == s.win_rate_hi


def test_a_tournament_without_a_systems_battles_leaves_it_out():
    wins = np.zeros((2, 3, 3))
    wins[0, 0, 1], wins[0, 1, 0] = 3.0, 1.0      # tournament 0: A 3-1 B, C absent
    wins[1, 0, 2], wins[1, 2, 0] = 0.5, 0.5      # tournament 1: A tied C, B absent
    rates = tournament_win_rates(wins)
    assert rates[0, :2].tolist() == [0.75, 0.25] and np.isnan(rates[0, 2])
    assert rates[1].tolist()[::2] == [0.5, 0.5] and np.isnan(rates[1, 1])
    # a system seen in only a few queries still gets a CI from the tournaments that drew it
    battles = spread_battles() + [Battle(0, "A", "X", "a")]
    x = by_name(compute_ratings(battles, n_boot=BOOT))["X"]
    assert x.battles == 1 and (x.win_rate, x.win_rate_lo) == (0.0, 0.0)
    assert x.win_rate_hi == pytest.approx(clopper_pearson(0, 1)[1])   # 0 of 1: [0, 0.975]


def test_equal_ratings_share_rank_one_despite_rounding():
    battles = [Battle(q, a, b, "tie") for q in range(4)
               for a, b in [("x", "y"), ("x", "z"), ("y", "z")]]
    ratings = compute_ratings(battles, n_boot=50, seed=0)
    assert [r.rank for r in ratings.systems] == [1, 1, 1]
