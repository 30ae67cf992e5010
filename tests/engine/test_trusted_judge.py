"""The arena's default judge and the line that heads every rating table (issue 24): the
best-calibrated judge that can judge the run, else the reference judge when the battles have
references, else the configured LLM in debiased order; and how far the arena's judge agrees
with people, from its newest calibration."""

from __future__ import annotations


import pytest
from testkit.arena import (ScriptedJudge, drop_references, give_long_form_references,
                           import_reference_labels)

from engine.app_config import config_path
from engine.arena.ratings.battles import resolve_arena
from engine.arena.trust.calibrate import calibrate_judge
from engine.arena.trust.rankings import judge_rankings
from engine.arena.judging.job import judge_arena
from engine.arena.trust.default_judge import (LONG_FORM_JUDGE, default_judge, judge_rule,
                                              judge_trust, reference_kind, run_has_references)
from engine.runs.lookup import load_run




@pytest.fixture
def labels(demo_run, tmp_path):
    """Reference labels in the run's own workspace."""
    return import_reference_labels(demo_run, tmp_path)


@pytest.fixture
def configured_judge():
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('judge = "smollm2-135m-instruct"\n')
    yield "smollm2-135m-instruct"
    path.unlink()


def first_wins(s):
    return "1"


# --------------------------------------------------------------------------- default judge

def test_short_gold_answers_get_the_answer_match_judge_calibrated_judges_or_not(demo_run,
                                                                             labels):
    """The demo pool (SQuAD-style golds): the run's own scorer decides, whatever judge the
    long-form labels calibrated best."""
    run = load_run(demo_run, "r")
    assert run_has_references(demo_run, run) and reference_kind(demo_run, run) == "short"
    calibrate_judge(demo_run, labels, "reference:f1", order="both", n_boot=50)     # 0.9
    choice = default_judge(demo_run, run)
    assert (choice.spec, choice.order) == ("reference:answer-match", "random")
    assert choice.why == ("short gold answers: the answer that matches the gold (EM_loose) "
                          "wins, else the higher F1, as the run scores them")
    assert choice.ranking is None


def test_long_form_references_without_a_calibrated_judge_get_the_long_form_judge(demo_run):
    give_long_form_references(demo_run)
    run = load_run(demo_run, "r")
    assert reference_kind(demo_run, run) == "long"
    choice = default_judge(demo_run, run)
    assert (choice.spec, choice.order) == (LONG_FORM_JUDGE, "random")
    assert choice.why.startswith("long-form references and no calibrated judge here")


def test_none_calibrated_without_references_is_the_configured_llm_debiased(
        demo_run, configured_judge):
    drop_references(demo_run)
    run = load_run(demo_run, "r")
    assert not run_has_references(demo_run, run)
    choice = default_judge(demo_run, run)
    assert (choice.spec, choice.order) == (configured_judge, "debiased")
    assert "config.toml" in choice.why and "no reference answer" in choice.why


def test_without_references_or_configured_judge_there_is_none_and_it_says_how(demo_run):
    drop_references(demo_run)
    choice = default_judge(demo_run, load_run(demo_run, "r"))
    assert choice.spec is None and "--judge MODEL" in choice.why


def test_the_best_calibrated_judge_that_can_judge_the_run_wins(demo_run, labels,
                                                              configured_judge):
    store = demo_run
    give_long_form_references(store)
    calibrate_judge(store, labels, "reference:f1", order="both", n_boot=50)     # 0.9
    calibrate_judge(store, labels, ScriptedJudge(first_wins), n_boot=50)       # a coin
    run = load_run(store, "r")
    choice = default_judge(store, run)
    assert (choice.spec, choice.order) == ("reference:f1", "both")
    assert choice.why.startswith("long-form references: the best-calibrated judge here: "
                                 "agrees with people 90.0%")
    assert choice.ranking.labels == "people@1"
    # against the reference answer a reference judge cannot judge: the configured LLM
    assert default_judge(store, run, pairs="reference").spec == configured_judge


def test_a_calibrated_judge_that_cannot_load_here_is_passed_over(demo_run, labels):
    store = demo_run
    # an LLM judge agreeing perfectly, but it is no installed model: not offered
    calibrate_judge(store, labels, ScriptedJudge(lambda s: "1" if "number" in s["Answer 1"]
                                                 else "2", name="not-installed"), n_boot=50)
    top = judge_rankings(store)[0]
    assert top.judge == "not-installed" and top.sign_accuracy.lo > 0.5
    give_long_form_references(store)
    choice = default_judge(store, load_run(store, "r"))
    assert choice.spec == LONG_FORM_JUDGE


# --------------------------------------------------------------------------- header line

def test_the_rule_line_says_whether_the_arenas_judge_is_the_default_and_why(demo_run):
    store = demo_run
    run = load_run(store, "r")
    judge_arena(store, run, "reference:answer-match")
    judge_arena(store, run, "reference:f1", name="by-f1")
    assert judge_rule(store, run, resolve_arena(store, run, "pairwise:reference:answer-match")) == \
        ("the default judge for this data: short gold answers: the answer that matches the "
         "gold (EM_loose) wins, else the higher F1, as the run scores them")
    assert judge_rule(store, run, resolve_arena(store, run, "by-f1")).startswith(
        "judge named for this arena; the default for this data would be "
        "reference:answer-match (short gold answers")
    trust = judge_trust(store, resolve_arena(store, run, "pairwise:reference:answer-match"))
    assert trust.line.startswith("judged by reference:answer-match: the run's own EM_loose")


def test_the_header_line_says_who_judged_and_how_far_to_trust_it(demo_run, labels):
    store = demo_run
    run = load_run(store, "r")
    judge_arena(store, run, "reference:f1")
    info = resolve_arena(store, run)
    trust = judge_trust(store, info)
    assert trust.line == ("judged by reference:f1, judge not calibrated (mirage-tui judge "
                          "calibrate --judge reference:f1 --labels DATASET)")
    assert trust.as_json()["calibrated"] is False
    calibrate_judge(store, labels, "reference:f1", order="both", n_boot=50)
    calibrate_judge(store, labels, "reference:f1", order="random", n_boot=50)
    trust = judge_trust(store, info)
    # the calibration in the arena's own order (random) is the one read
    assert trust.calibration.order == "random"
    assert trust.line.startswith("judged by reference:f1, agrees with people 90.0% [")
    assert trust.line.endswith("(n=10, labels people@1)")
    data = trust.as_json()
    assert data["calibrated"] and data["calibration"]["sign_accuracy"]["n"] == 10
    assert data["line"] == trust.line


def test_a_judge_worse_than_the_reference_is_marked(demo_run, labels):
    store = demo_run
    judge = ScriptedJudge(first_wins)
    run = load_run(store, "r")
    judge_arena(store, run, judge, order="both")
    calibrate_judge(store, labels, "reference:f1", n_boot=50)
    calibrate_judge(store, labels, ScriptedJudge(first_wins), order="both", n_boot=50)
    line = judge_trust(store, resolve_arena(store, run)).line
    assert line.startswith("judged by fake-judge, agrees with people ")
    assert "; worse than comparing with the reference (reference:f1 90.0% [" in line
    # the calibration used ragqa_arena_pairwise, the arena mirage_bench_pairwise: said so
    assert "calibrated with template ragqa_arena_pairwise@1, the arena used " \
           "mirage_bench_pairwise@1" in line
