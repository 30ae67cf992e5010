"""Judges fitted to people: the fit, its query-grouped cross-validation, its refusals, its
identity, and the fitted judge used where any judge is (calibration on other labels).

Real store, real imports, real scikit-learn; features that need no embedder (token F1, char
3-grams, length) keep the tests fast.
"""

from __future__ import annotations

import numpy as np
import pytest
from testkit.arena import answered_run
from testkit.labels import write_labels

from engine.arena.trust.calibrate import calibrate_judge, latest_calibration
from engine.arena.judges.fit_features import FitError, parse_features
from engine.arena.judges.fitted import fit_judge, fitted_judge, load_fitted_judge, query_folds
from engine.arena.trust.human_verdicts import record_human_verdict
from engine.arena.judges.specs import open_judge
from engine.arena.judging.job import judge_arena
from engine.arena.judging.plan import load_answers
from engine.arena.types import ArenaError
from engine.datasets.demo_pool import ensure_demo
from engine.runs.lookup import load_run

FEATURES = ["f1", "char3", "length"]


def test_cv_folds_never_share_a_query():
    groups = [f"q{i % 7}" for i in range(40)]
    folds = query_folds(groups)
    assert len(folds) == 5
    tested = []
    for train, test in folds:
        assert not {groups[i] for i in train} & {groups[i] for i in test}
        tested.extend(test)
    assert sorted(tested) == list(range(40))
    assert len(query_folds(["a", "a", "b", "b"])) == 2      # fewer queries than folds


def test_fit_stores_the_judge_with_cv_figures(store, tmp_path):
    write_labels(store, tmp_path, "people", n=30, flip=(3,))
    fit = fit_judge(store, "mine", "people", features=FEATURES)
    cv = fit.cv
    assert cv["pairs"] == 30 and cv["folds"] == 5 and cv["queries"] == 30
    e = fit.cv_estimate()
    assert e.n == 30 and 0 <= e.lo <= e.value <= e.hi <= 1
    assert e.value == pytest.approx(29 / 30)        # the flipped pair is missed
    assert cv["best_single"]["feature"] in FEATURES
    assert set(cv["by_feature"]) == set(FEATURES)
    assert fit.labels_datasets == ["people@1"] and len(fit.coefficients) == 3
    stored = fitted_judge(store, "fitted:mine")
    assert stored.sha256 == fit.sha256 and stored.cv == fit.cv


def test_fitted_verdict_has_no_position_bias(store, tmp_path):
    write_labels(store, tmp_path, "people")
    fit_judge(store, "mine", "people", features=FEATURES)
    judge = open_judge("fitted:mine", "ignored", store=store)
    assert judge.judge_name == "fitted:mine" and judge.needs_reference
    fields = {"query": "q?", "answer_a": "city 7 is the capital", "answer_b": "town 3, I think",
              "reference": "the capital is city 7"}
    v = judge.verdict(fields)
    w = judge.verdict({**fields, "answer_a": fields["answer_b"], "answer_b": fields["answer_a"]})
    assert v.label == "A" and w.label == "B" and v.method == "fitted"
    assert v.probs["A"] == pytest.approx(w.probs["B"])
    same = judge.verdict({**fields, "answer_b": fields["answer_a"]})
    assert same.label == "tie" and same.probs["B"] == pytest.approx(0.5)


def test_fit_refuses_tiny_labels(store, tmp_path):
    write_labels(store, tmp_path, "few", n=19)
    with pytest.raises(FitError, match=r"19 pair\(s\) with a non-tie label .* at least 20"):
        fit_judge(store, "x", "few", features=FEATURES)
    assert store.query("SELECT COUNT(*) FROM fitted_judges")[0][0] == 0


def test_fit_refuses_one_sided_labels(store, tmp_path):
    write_labels(store, tmp_path, "lopsided", n=25, one_side=True)
    with pytest.raises(FitError, match="all 25 non-tie pairs .* prefer answer B"):
        fit_judge(store, "x", "lopsided", features=FEATURES)


def test_fit_refuses_reference_features_without_references(store, tmp_path):
    write_labels(store, tmp_path, "bare", n=24, reference=False)
    with pytest.raises(FitError, match=r"features f1, char3 compare .* 24 of the 24 pairs .* "
                                       r"features that work there: length"):
        fit_judge(store, "x", "bare", features=FEATURES)
    fit = fit_judge(store, "x", "bare", features=["length"])
    assert not load_fitted_judge(store, "x").needs_reference and fit.cv["pairs"] == 24


def test_features_and_names_are_checked():
    assert parse_features(None) == ["cos:minilm-l6-v2", "f1", "char3", "length"]
    assert parse_features("f1,length", "smollm2") == ["f1", "length", "judge:smollm2"]
    with pytest.raises(FitError, match="unknown feature 'lenght'; did you mean 'length'"):
        parse_features("f1,lenght")
    with pytest.raises(FitError, match="judge:LLM takes an LLM"):
        parse_features("judge:reference:f1")


def test_refit_needs_force_and_identity_changes_with_labels(store, tmp_path):
    write_labels(store, tmp_path, "people")
    write_labels(store, tmp_path, "people2", flip=(1, 2, 5))
    first = fit_judge(store, "mine", "people", features=FEATURES)
    with pytest.raises(FitError, match="already exists .* --force"):
        fit_judge(store, "mine", "people2", features=FEATURES)
    again = fit_judge(store, "mine", "people", features=FEATURES, force=True)
    assert again.sha256 == first.sha256          # same labels, same features: same judge
    second = fit_judge(store, "mine", "people2", features=FEATURES, force=True)
    assert second.labels_fingerprint != first.labels_fingerprint
    assert second.sha256 != first.sha256
    judge = load_fitted_judge(store, "mine")
    assert judge.generator.identity.sha256 == second.sha256
    assert store.query("SELECT COUNT(*) FROM fitted_judges")[0][0] == 1


def test_unknown_fitted_judge_says_did_you_mean(store, tmp_path):
    write_labels(store, tmp_path, "people")
    fit_judge(store, "best", "people", features=FEATURES)
    with pytest.raises(ArenaError, match=r"no fitted judge 'bets'; did you mean 'best'\? "
                                         r"\(fitted judges: best\)"):
        open_judge("fitted:bets", "t", store=store)
    with pytest.raises(ArenaError, match="stored in a workspace"):
        open_judge("fitted:best", "t")


def test_fit_on_one_labels_dataset_calibrate_on_another(store, tmp_path):
    write_labels(store, tmp_path, "train", n=30, queries=lambda i: f"t{i}")
    write_labels(store, tmp_path, "held", n=20, flip=(0, 7), queries=lambda i: f"h{i}")
    fit_judge(store, "mine", "train", features=FEATURES)
    summary = calibrate_judge(store, "held", "fitted:mine", order="both", n_boot=50)
    assert summary.status == "done" and summary.judge == "fitted:mine"
    sign = summary.figures["sign_accuracy"]
    assert (sign.value, sign.n) == (pytest.approx(18 / 20), 20)
    assert summary.figures["flip_rate"].value == 0.0
    stored = latest_calibration(store, calibration_id=summary.calibration_id)
    assert stored.labels == "held@1" and stored.template == "fitted@1"


@pytest.fixture
def verdict_run(store):
    ensure_demo(store)
    return answered_run(store, "vr", sample=6)


def test_fit_on_every_recorded_verdict(store, verdict_run):
    run = load_run(store, verdict_run)
    answers = load_answers(store, run.id)
    recorded = 0
    for q, by in sorted(answers.items()):
        systems = sorted(by)
        for i, a in enumerate(systems):
            for b in systems[i + 1:]:
                if ("oracle" in a) != ("oracle" in b):   # people prefer the answer with context
                    record_human_verdict(store, run, q, a, b, "a" if "oracle" in a else "b",
                                         annotator="me")
                    recorded += 1
    assert recorded == 24
    with pytest.raises(FitError, match="no labels on aspect 'fluency'"):
        fit_judge(store, "mine", "verdicts", aspect="fluency", features=FEATURES)
    fit = fit_judge(store, "mine", "verdicts", features=["f1", "length"])
    # the verdict pairs have no reference of their own: the query's gold answers stand in
    assert fit.labels_datasets == ["verdicts:vr@1"] and fit.cv["pairs"] == 24
    assert fit.cv_estimate().n == 24 and fit.cv["queries"] == 6
    assert np.isfinite(fit.coefficients).all()
    # ... and the fitted judge then judges the whole arena, no LLM
    summary = judge_arena(store, run, "fitted:mine")
    assert summary.status == "done" and summary.done == summary.total == 36
    rows = store.query("SELECT system_a, system_b, winner FROM battles")
    decided = [r for r in rows if ("oracle" in r[0]) != ("oracle" in r[1])]
    assert decided and all(r[2] == ("a" if "oracle" in r[0] else "b") for r in decided)


def test_judge_feature_averages_both_orders_through_the_cache(store, tmp_path):
    from testkit.arena import ScriptedJudge

    from models.judges import PairwiseJudge

    def prefers_the_city(s):            # a judge that knows the answer, shown either way
        return "1 - it is." if s["Answer 1"].startswith("city") else "2 - it is."

    model = ScriptedJudge(prefers_the_city)
    llm = {"judge:fake": PairwiseJudge(model, "ragqa_arena_pairwise")}
    write_labels(store, tmp_path, "people", n=20, reference=False)
    events = []
    fit = fit_judge(store, "llm", "people", features=["judge:fake"], llms=llm,
                    progress=events.append)
    assert len(model.calls) == 40 and fit.cv_estimate().value == 1.0
    assert fit.coefficients[0] > 0
    assert {e.kind for e in events} == {"fit"} and events[0].done == 0      # its progress
    assert [e.done for e in events] == sorted(e.done for e in events)
    last = events[-1]
    assert (last.status, last.done, last.total, last.new, last.cached) == \
        ("done", 20, 20, 40, 0)
    events.clear()
    fit_judge(store, "llm", "people", features=["judge:fake"], llms=llm, force=True,
              progress=events.append)
    assert len(model.calls) == 40                   # every verdict from the judgments cache
    assert (events[-1].new, events[-1].cached) == (0, 40)


def test_a_cancelled_fit_stores_nothing_and_keeps_the_verdicts_judged(store, tmp_path):
    import threading

    from testkit.arena import ScriptedJudge

    from engine.jobs import Stop
    from models.judges import PairwiseJudge

    cancel = threading.Event()

    def prefers_the_city(s):            # and asks the fit to stop at its fifth call
        if len(model.calls) == 5:
            cancel.set()
        return "1 - it is." if s["Answer 1"].startswith("city") else "2 - it is."

    model = ScriptedJudge(prefers_the_city)
    llm = {"judge:fake": PairwiseJudge(model, "ragqa_arena_pairwise")}
    write_labels(store, tmp_path, "people", n=20, reference=False)
    events = []
    with pytest.raises(Stop) as stopped:
        fit_judge(store, "llm", "people", features=["judge:fake"], llms=llm, cancel=cancel,
                  progress=events.append)
    assert stopped.value.status == "cancelled" and events[-1].status == "cancelled"
    assert 5 <= len(model.calls) < 40 and events[-1].done < 20
    with pytest.raises(ArenaError, match="no fitted judge"):
        fitted_judge(store, "fitted:llm")
    fit = fit_judge(store, "llm", "people", features=["judge:fake"], llms=llm)
    assert len(model.calls) == 40 and fit.cv_estimate().value == 1.0   # none asked twice
