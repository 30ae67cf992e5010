"""Figures on a tiny arena say only what its data supports: over 2 queries a win rate of 3 of 3
is not ``100.0% [100.0, 100.0] n=3`` (its interval is exact, Clopper–Pearson, never zero
wide), the Elo gets no ``+39/-0`` from a bootstrap that has 3 possible resamples ("too few
queries for an interval"; every system shares rank 1), and the cross-check words a
disagreement only when it is significant, says "too few queries to tell" otherwise, and says
that the answer-match judge agrees with EM_loose by construction instead of offering it as
evidence."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from engine.arena.ratings.leaderboard import MIN_INTERVAL_QUERIES, compute_ratings
from engine.arena.trust.cross_check import CrossCheck
from engine.arena.types import Battle
from engine.stats import Estimate, clopper_pearson
from testkit.runs import mirage_cli


def cli(db, *args) -> subprocess.CompletedProcess:
    """The command as typed, on a terminal wide enough that no line is wrapped."""
    return subprocess.run([*mirage_cli(), *args, "--db", str(db)], capture_output=True,
                          text=True, timeout=180, env={**os.environ, "COLUMNS": "400"})


def test_a_two_query_arena_through_the_cli(answered_path):
    judged = cli(answered_path, "arena", "judge", "r", "--judge", "reference:answer-match",
                 "--queries", "2")
    assert judged.returncode == 0, judged.stderr
    text = cli(answered_path, "arena", "ratings", "r")
    assert text.returncode == 0, text.stderr
    out = text.stdout
    assert "[100.0, 100.0]" not in out and "[0.0, 0.0]" not in out, out
    assert "/-0 " not in out and "+0/" not in out, out
    assert ("note: 2 queries only: too few queries for an interval (resampling them cannot "
            "vary the battles enough; at least 3), so no Elo CI is given and every system "
            "shares rank 1") in out, out
    assert ("cross-check with em_loose: no evidence here: the judge reference:answer-match "
            "decides by the run's own EM_loose, so its ranking agrees with accuracy by "
            "construction") in out, out
    assert "picks it" not in out
    data = json.loads(cli(answered_path, "arena", "ratings", "r", "--json").stdout)
    systems = data["systems"]
    assert data["n_queries"] == 2
    assert all(s["elo_lo"] is None and s["elo_hi"] is None and s["rank"] == 1
               for s in systems)
    for s in systems:
        assert s["win_rate_lo"] < s["win_rate_hi"]
        assert s["win_rate_lo"] <= s["win_rate"] <= s["win_rate_hi"]
    assert data["cross_check"]["by_construction"] is True
    page = answered_path.parent / "board.html"             # the forest plot without CIs
    drawn = cli(answered_path, "arena", "ratings", "r", "--html", str(page))
    assert drawn.returncode == 0, drawn.stderr
    assert "too few queries for an interval" in page.read_text(encoding="utf-8")


def test_three_wins_of_three_over_two_queries_is_an_exact_interval():
    battles = [Battle(0, "A", "B", "a"), Battle(0, "A", "C", "a"), Battle(1, "A", "B", "a"),
               Battle(1, "B", "C", "tie")]
    r = {s.system: s for s in compute_ratings(battles, n_boot=200).systems}
    lo, hi = clopper_pearson(3, 3)
    assert (r["A"].win_rate, r["A"].win_rate_hi) == (1.0, 1.0)
    assert r["A"].win_rate_lo == pytest.approx(lo) and lo < 0.3
    assert all(s.elo_lo is None and s.rank == 1 for s in r.values())
    assert MIN_INTERVAL_QUERIES == 3


def test_enough_queries_keep_the_bootstrap_and_never_a_zero_wide_rate():
    battles = [Battle(q, "A", "B", "a" if q % 3 else "b") for q in range(12)]
    battles += [Battle(q, "A", "C", "a") for q in range(12)]
    r = {s.system: s for s in compute_ratings(battles, n_boot=200).systems}
    assert r["A"].elo_lo is not None and r["A"].elo_lo < r["A"].elo < r["A"].elo_hi
    assert r["C"].win_rate_lo == 0.0                  # 0 of 12: exact, never [0.0, 0.0]
    assert r["C"].win_rate_hi == pytest.approx(clopper_pearson(0, 12)[1])


def _check(**kw) -> CrossCheck:
    fields = dict(metric="em_loose", systems=4, accuracy={}, can_rank=True, why_not=None,
                  spearman=0.45, kendall=0.33, cochran_p=0.42,
                  gold_pairs=Estimate(1.0, *clopper_pearson(5, 5), 5), spearman_p=0.55,
                  queries=2, judge="reference:f1")
    return CrossCheck(**{**fields, **kw})


def test_a_weak_rho_on_accuracies_not_told_apart_is_too_few_queries_to_tell():
    check = _check()
    assert not check.disagrees and "DISAGREES" not in check.line
    assert check.line.endswith("; too few queries to tell whether the ranking follows accuracy "
                               "(the accuracies do not differ significantly: Cochran's Q "
                               "p=0.42 over 2 queries)")
    assert "the judge picks it 100.0% [47.8, 100.0]" in check.line and "on 5 pairs" in check.line


def test_a_disagreement_is_said_only_when_significant():
    check = _check(spearman=0.2, spearman_p=0.8, cochran_p=0.0004, queries=60)
    assert check.disagrees and check.as_json()["verdict"] == "disagrees"
    assert ("; the ranking disagrees with accuracy (ρ 0.20, p=0.80, n=4 systems, while the "
            "accuracies differ: Cochran's Q p<0.001 over 60 queries): the judge may reward "
            "something other than right answers") in check.line
    follows = _check(spearman=1.0, spearman_p=0.0, cochran_p=0.0004, queries=60)
    assert not follows.disagrees and "the ranking follows accuracy (ρ 1.00, p<0.001" in \
        follows.line
    leans = _check(spearman=0.8, spearman_p=0.2, cochran_p=0.0004, queries=60)
    assert "the ranking leans with accuracy, not significantly (ρ 0.80, p=0.20" in leans.line


def test_the_answer_match_judge_agrees_by_construction():
    check = _check(judge="reference:answer-match", spearman=1.0, spearman_p=0.0,
                   cochran_p=0.0001)
    assert check.by_construction and check.verdict is None and not check.disagrees
    assert "by construction" in check.line and "picks it" not in check.line
