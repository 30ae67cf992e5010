"""An arena checks its ranking against the answers' accuracy (issue 34): a scripted run whose
four systems are right on all, two thirds, one third and none of the demo queries, judged by
the answer-match judge (the ranking follows accuracy), by a judge that prefers wrong answers
(it is flagged), and a run where no system is ever right (accuracy cannot rank it). Also the
answer-match verdicts by hand, the CLI's JSON and the HTML page."""

from __future__ import annotations

import json

import pytest
from testkit.arena import ScriptedJudge
from testkit.runs import mirage_cli
from testkit.scripted import ScriptedGenerator
from testkit.store import copy_workspace, idle_machine_load

from engine.arena.ratings.battles import battles_of, resolve_arena
from engine.arena.trust.cross_check import cochran_q, cross_check
from engine.arena.judging.job import judge_arena
from engine.arena.ratings.leaderboard import compute_ratings
from engine.arena.judges.reference import ReferenceJudge
from engine.datasets.demo_pool import ensure_demo
from engine.runs import RunConfig, execute, plan_named
from engine.runs.lookup import load_run
from engine.store import Store

RIGHT_WHEN = {"gen-a": lambda i: True, "gen-b": lambda i: i % 3 != 0,
              "gen-c": lambda i: i % 3 == 0, "gen-d": lambda i: False}


def knowing(store, name: str, right_when) -> ScriptedGenerator:
    """A generator that gives the query's first gold answer when ``right_when(i)`` (i: the
    query's place among the demo questions), else a wrong one."""
    golds = {r["text"]: json.loads(r["answers"])[0]
             for r in store.query("SELECT text, answers FROM queries ORDER BY id")}
    order = {q: i for i, q in enumerate(golds)}

    def answer(prompt: str) -> str:
        question = max((q for q in golds if q in prompt), key=len)
        if right_when(order[question]):
            return f"{name}: {golds[question]}"
        return f"{name}: wrong"

    return ScriptedGenerator(name, answer, backend="fake", usage=lambda text: (10, 5, 10, 0.001),
                             renders=False)


def scripted_run(store, name: str, right=RIGHT_WHEN) -> str:
    ensure_demo(store)
    config = RunConfig(dataset="demo", generators=list(right), settings=["base"], sample=60,
                       seed=0, name=name)
    plan = plan_named(store, config, check_models=False)
    gens = {g: knowing(store, g, rule) for g, rule in right.items()}
    assert execute(store, plan, generators=gens).status == "done"
    return name


@pytest.fixture(scope="module")
def run_r_template(tmp_path_factory):
    """A workspace with :func:`scripted_run`'s run ``r`` (4 systems, 60 queries), made once a
    module and never written: ``run_r`` copies it."""
    path = tmp_path_factory.mktemp("cross-check") / "w.db"
    store = Store(path)
    try:
        with pytest.MonkeyPatch.context() as monkeypatch:  # as built inside a test
            idle_machine_load(monkeypatch)
            scripted_run(store, "r")
    finally:
        store.close()
    return path


@pytest.fixture
def run_r(run_r_template, tmp_path):
    """This test's own copy of the workspace with run ``r``, open."""
    store = Store(copy_workspace(run_r_template, tmp_path / "w.db"))
    yield store
    store.close()


def prefer_wrong(s):
    """A judge that picks the wrong answer (the template's labels, as prefer_stronger reads)."""
    a, b = s.get("Answer A", s.get("Answer 1")), s.get("Answer B", s.get("Answer 2"))
    first, second, tie = ("A", "B", "C") if "Answer A" in s else ("1", "2", "0")
    if ("wrong" in a) == ("wrong" in b):
        return tie
    return first if "wrong" in a else second


def checked(store, run_name: str, judge, name: str):
    run = load_run(store, run_name)
    judge_arena(store, run, judge, name=name)
    info = resolve_arena(store, run, name)
    battles = battles_of(store, info.id)
    ratings = compute_ratings(battles, n_boot=50, seed=0)
    return cross_check(store, run, battles, ratings), ratings


def test_the_answer_match_judge_decides_as_the_runs_scorer_does():
    judge = ReferenceJudge("reference:answer-match")
    golds = ["Eisenach", "in Eisenach"]

    def label(a, b):
        return judge.verdict(judge.fields("Where?", a, b, reference=golds)).label

    assert label("He was born in Eisenach.", "Leipzig") == "A"          # EM_loose decides
    assert label("Leipzig", "Eisenach, Thuringia") == "B"
    # both match: the higher F1 (MIRAGE's set F1 over the golds' pooled tokens)
    assert label("in Eisenach", "Bach was born in the town of Eisenach") == "A"
    # neither matches: F1 decides if it differs, else a tie
    assert label("in Leipzig", "Leipzig") == "A"
    assert label("Leipzig", "Weimar") == "tie"


def test_a_ranking_that_follows_accuracy_says_so(run_r):
    store = run_r
    check, ratings = checked(store, "r", "reference:answer-match", "match")
    assert check.can_rank and check.systems == 4 and check.cochran_p < 0.05
    assert check.accuracy == {"gen-a/mirage@1 | base": 1.0, "gen-b/mirage@1 | base": 40 / 60,
                              "gen-c/mirage@1 | base": 20 / 60, "gen-d/mirage@1 | base": 0.0}
    assert check.spearman == pytest.approx(1.0) and check.kendall == pytest.approx(1.0)
    assert not check.disagrees
    # pairs where exactly one matches: a-b 20, a-c 40, a-d 60, b-c 60, b-d 40, c-d 20
    assert check.gold_pairs.value == 1.0 and check.gold_pairs.n == 240
    assert check.line.startswith("cross-check with em_loose over 4 systems: Elo vs accuracy "
                                 "Spearman ρ 1.00, Kendall τ 1.00; on 240 pairs where exactly "
                                 "one answer matches the gold, the judge picks it 100.0% [")
    assert [s.system.split("/")[0] for s in ratings.systems] == ["gen-a", "gen-b", "gen-c",
                                                                   "gen-d"]


def test_a_judge_that_prefers_wrong_answers_is_flagged_in_words(run_r):
    store = run_r
    check, _ = checked(store, "r", ScriptedJudge(prefer_wrong), "wrong")
    assert check.can_rank and check.spearman == pytest.approx(-1.0) and check.disagrees
    assert check.gold_pairs.value == 0.0 and check.gold_pairs.n == 240
    # significant both ways: the accuracies differ (Cochran's Q) and ρ is not positive
    assert ("; the ranking disagrees with accuracy (ρ -1.00, p<0.001, n=4 systems, while the "
            "accuracies differ: Cochran's Q p<0.001 over 60 queries): the judge may reward "
            "something other than right answers") in check.line
    assert "DISAGREES" not in check.line
    assert check.as_json()["disagrees"] is True and check.as_json()["verdict"] == "disagrees"


def test_when_no_system_is_ever_right_accuracy_cannot_rank_them(store):
    never = {g: (lambda i: False) for g in ("gen-a", "gen-b", "gen-c")}
    scripted_run(store, "zero", right=never)
    check, _ = checked(store, "zero", ScriptedJudge(prefer_wrong), "z")
    assert not check.can_rank and check.spearman is None and check.kendall is None
    assert check.line == ("cross-check with em_loose: the accuracy cannot rank these 3 systems: "
                          "on every query they all score the same (em_loose from 0% to 0%, "
                          "n=60 queries); "
                          "no pair where exactly one answer matches the gold")


def test_with_almost_no_right_answer_accuracy_cannot_rank_either(store):
    """Two right answers in 180 (XQuAD Thai with these models looks like this)."""
    rare = {"gen-a": lambda i: i in (0, 1), "gen-b": lambda i: False,
            "gen-c": lambda i: False}
    scripted_run(store, "rare", right=rare)
    check, _ = checked(store, "rare", "reference:answer-match", "m")
    assert not check.can_rank and check.spearman is None
    assert check.why_not == ("the accuracy cannot rank these 3 systems: 2 of their answers "
                             "match the gold (em_loose from 0% to 3%, n=60 queries)")
    assert check.gold_pairs.n == 4 and check.gold_pairs.value == 1.0


def test_systems_as_accurate_overall_are_not_ranked_by_accuracy(store):
    """Right on different queries, as often overall: a rank correlation with equal accuracies
    is undefined (scipy warns and gives nan), so the check says why instead."""
    halves = {"gen-a": lambda i: i % 2 == 0, "gen-b": lambda i: i % 2 == 1,
              "gen-c": lambda i: i % 2 == 0}
    scripted_run(store, "halves", right=halves)
    check, _ = checked(store, "halves", "reference:answer-match", "h")
    assert not check.can_rank and check.spearman is None and check.kendall is None
    assert check.why_not == ("the accuracy cannot rank these 3 systems: each scores "
                             "em_loose 50%, n=60 queries")


def test_a_judge_that_ties_every_pair_does_not_rank(store):
    tie = lambda s: "C" if "Answer A" in s else "0"     # noqa: E731
    scripted_run(store, "ties")
    check, ratings = checked(store, "ties", ScriptedJudge(tie), "t")
    assert len({s.elo for s in ratings.systems}) == 1
    assert not check.can_rank and check.spearman is None
    assert check.why_not == f"the ratings do not rank these 4 systems: each is rated " \
                            f"{ratings.systems[0].elo:.0f}"


def test_cochrans_q_by_hand():
    # 4 queries × 3 systems: columns 4, 2, 0 right; rows 2, 2, 1, 1
    x = [[1, 1, 0], [1, 1, 0], [1, 0, 0], [1, 0, 0]]
    q, p = cochran_q(x)
    # Q = (k-1)(k·ΣC² − N²)/(k·N − ΣR²) = 2·(3·20 − 36)/(3·6 − 10) = 6.0, χ²(2): p = e^-3
    assert q == pytest.approx(6.0) and p == pytest.approx(0.049787, abs=1e-6)
    assert cochran_q([[1, 1, 1], [0, 0, 0]]) is None


def test_arena_ratings_json_carries_the_cross_check_and_the_html_shows_it(run_r, tmp_path):
    import subprocess

    store = run_r
    judge_arena(store, load_run(store, "r"), "reference:answer-match")
    out = subprocess.run([*mirage_cli(), "arena", "ratings", "r", "--db", str(store.path),
                          "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["cross_check"]["spearman"] == pytest.approx(1.0)
    assert data["cross_check"]["gold_pairs"]["n"] == 240
    assert data["judge_rule"].startswith("the default judge for this data: short gold answers")
    page = tmp_path / "lb.html"
    out = subprocess.run([*mirage_cli(), "arena", "ratings", "r", "--db", str(store.path),
                          "--html", str(page)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    html = page.read_text()
    # the answer-match judge decides by EM_loose: its agreement is said as by construction
    assert data["cross_check"]["by_construction"] is True
    assert ('<p class="cross-check">cross-check with em_loose: no evidence here: the judge '
            "reference:answer-match decides by the run&#x27;s own EM_loose, so its ranking "
            "agrees with accuracy by construction</p>") in html
    assert '<p class="judge-rule">the default judge for this data' in html
