"""Reference judges: each answer compared with the reference answer, no LLM.

Verdicts are checked against similarities worked out by hand (token F1, character 3-gram
recall) or computed here from the packaged MiniLM's own vectors (cosine); the arena and the
calibration run them through the real store, judgments cache and battle rows.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from testkit.arena import import_reference_labels, answered_run, write_lfrqa

from engine.arena.trust.calibrate import CalibrationError, calibrate_judge, latest_calibration
from engine.arena.judges.specs import open_judge
from engine.arena.judging.job import judge_arena
from engine.arena.types import ArenaError
from engine.arena.judges.reference import (NeedsReference, ReferenceJudge, logistic,
                                           reference_judge_names)
from engine.datasets.importing import import_path
from engine.runs.lookup import load_run


def fields(a, b, ref="the cat sat"):
    return {"query": "q?", "answer_a": a, "answer_b": b, "reference": ref}


# --------------------------------------------------------------------------- verdicts

def test_f1_verdict_follows_hand_computed_token_f1():
    judge = ReferenceJudge("reference:f1")
    # normalised: A "cat sat on mat" vs "cat sat": P 2/4, R 2/2, F1 2/3; B "dog": F1 0
    v = judge.verdict(fields("The cat sat on the mat.", "A dog."))
    assert v.label == "A" and v.method == "reference" and not v.parse_failed
    assert json.loads(v.raw)["A"] == pytest.approx(2 / 3, abs=1e-6)
    assert json.loads(v.raw)["B"] == 0.0
    assert v.probs["B"] == pytest.approx(logistic(10.0 * (0 - 2 / 3)))
    assert v.probs["A"] + v.probs["B"] == pytest.approx(1.0)
    # shown the other way round, the same answer wins and the probabilities mirror
    w = judge.verdict(fields("A dog.", "The cat sat on the mat."))
    assert w.label == "B" and w.probs["B"] == pytest.approx(v.probs["A"])


def test_char3_verdict_and_best_over_gold_answers():
    judge = ReferenceJudge("reference:char3")
    # gold 3-grams of "kovalevskaya": 10; "kovalevskaia" shares kov ova val ale lev evs vsk ska
    v = judge.verdict(fields("kovalevskaia", "paris", ref=["nothing", "kovalevskaya"]))
    assert v.label == "A"
    assert json.loads(v.raw)["A"] == pytest.approx(8 / 10)


def test_equal_answers_are_a_tie_within_the_margin():
    judge = ReferenceJudge("reference:f1")
    v = judge.verdict(fields("the cat", "cat the"))
    assert v.label == "tie" and v.probs["A"] == pytest.approx(0.5)


def test_cosine_verdict_equals_the_embedders_own_vectors_and_embeds_each_text_once(store):
    from models.catalog import load_embedder

    embedder = load_embedder("minilm-l6-v2")
    calls = []

    class Counting:
        def __getattr__(self, name):
            return getattr(embedder, name)

        def embed_passages(self, texts):
            calls.append(list(texts))
            return embedder.embed_passages(texts)

    judge = ReferenceJudge("reference:minilm-l6-v2", store, embedder=Counting())
    assert judge.judge_name == "reference:minilm-l6-v2"
    a, b, ref = ("Paris is the capital of France.", "Bananas are yellow.",
                 "The capital of France is Paris.")
    v = judge.verdict(fields(a, b, ref))
    vec = embedder.embed_passages([a, b, ref])
    vec = vec / np.linalg.norm(vec, axis=1, keepdims=True)
    cos_a, cos_b = float(vec[0] @ vec[2]), float(vec[1] @ vec[2])
    assert json.loads(v.raw)["A"] == pytest.approx(cos_a, abs=1e-5)
    assert json.loads(v.raw)["B"] == pytest.approx(cos_b, abs=1e-5)
    assert v.label == "A" and v.probs["B"] == pytest.approx(logistic(20 * (cos_b - cos_a)),
                                                            abs=1e-4)
    judge.verdict(fields(b, a, ref))
    assert sum(len(c) for c in calls) == 3          # each text embedded once
    # a second judge on the same store reads the stored vectors: no embedding at all
    again = ReferenceJudge("reference:minilm-l6-v2", store, embedder=Counting())
    assert again.verdict(fields(a, b, ref)).label == "A"
    assert sum(len(c) for c in calls) == 3
    stored = store.query("SELECT COUNT(*) FROM embeddings WHERE role = 'passage'")[0][0]
    assert stored == 3


def test_names_and_unknown_embedder():
    assert "reference:minilm-l6-v2" in reference_judge_names()
    assert "reference:f1" in reference_judge_names()
    with pytest.raises(ArenaError, match="cannot load embedder 'nope'"):
        open_judge("reference:nope", "ragqa_arena_pairwise")
    with pytest.raises(ArenaError, match="name a similarity"):
        open_judge("reference:", "ragqa_arena_pairwise")


def test_identity_differs_by_rule():
    f1, char3 = ReferenceJudge("reference:f1"), ReferenceJudge("reference:char3")
    assert f1.generator.identity.key() != char3.generator.identity.key()
    assert f1.template.id == "reference_f1@1"


# --------------------------------------------------------------------------- in the arena



def test_arena_with_a_reference_judge_uses_the_gold_answers(demo_run):
    store = demo_run
    summary = judge_arena(store, load_run(store, "r"), "reference:f1")
    assert summary.status == "done" and summary.done == summary.total == 18
    judge = ReferenceJudge("reference:f1")
    rows = store.query(
        "SELECT b.winner, b.system_a, b.system_b, q.answers, b.detail FROM battles b "
        "JOIN queries q ON q.id = b.query_rowid")
    answers = {(r[0], f"{r[1]} | {r[2]}"): r[3] for r in store.query(
        "SELECT ri.query_rowid, ri.system, ri.setting, g.text FROM run_items ri "
        "JOIN generations g ON g.key = ri.generation_key")}
    checked = 0
    for r in store.query("SELECT query_rowid, system_a, system_b, winner FROM battles"):
        golds = json.loads(store.query("SELECT answers FROM queries WHERE id = ?",
                                       (r[0],))[0][0])
        s_a, s_b = judge.similarities([answers[(r[0], r[1])], answers[(r[0], r[2])]], golds)
        want = "tie" if abs(s_b - s_a) < 0.001 else ("b" if s_b > s_a else "a")
        assert r["winner"] == want
        checked += 1
    assert checked == 18 and rows


def test_reference_judge_refuses_pairs_reference_mode(store, tmp_path):
    import_path(store, write_lfrqa(tmp_path / "lfrqa"), name="lf")
    answered_run(store, name="lr", dataset="lf", sample=None)
    with pytest.raises(NeedsReference, match="cannot be judged against itself.*LLM judge"):
        judge_arena(store, load_run(store, "lr"), "reference:f1", pairs="reference")
    assert store.query("SELECT COUNT(*) FROM arenas")[0][0] == 0


def test_reference_judge_refuses_queries_without_any_reference(demo_run):
    store = demo_run
    with store.write() as db:
        db.conn.execute("UPDATE queries SET answers = '[]', reference_answer = NULL")
    with pytest.raises(NeedsReference, match=r"3 of the 3 queries .* no reference answer"):
        judge_arena(store, load_run(store, "r"), "reference:f1")
    assert store.query("SELECT COUNT(*) FROM arenas")[0][0] == 0


# --------------------------------------------------------------------------- calibration

@pytest.fixture
def labels(store, tmp_path):
    return import_reference_labels(store, tmp_path)


@pytest.mark.parametrize("order", ["random", "both", "debiased"])
def test_calibrating_a_reference_judge_in_each_order(store, labels, order):
    summary = calibrate_judge(store, labels, "reference:f1", order=order, n_boot=50)
    assert summary.status == "done" and summary.pairs == 10
    sign = summary.figures["sign_accuracy"]
    assert (sign.value, sign.n) == (pytest.approx(0.9), 10)
    stored = latest_calibration(store, calibration_id=summary.calibration_id)
    assert stored.config["order"] == order and stored.judge == "reference:f1"
    assert stored.template == "reference_f1@1"
    if order != "random":      # no position bias: the two orders never disagree
        assert summary.figures["flip_rate"].value == 0.0


def test_calibration_refuses_labels_without_reference(store, tmp_path):
    path = tmp_path / "bare.jsonl"
    path.write_text("\n".join(json.dumps({"query": f"q{i}", "answer_a": "x", "answer_b": "y",
                                          "label": 1}) for i in range(3)))
    import_path(store, path)
    with pytest.raises(CalibrationError, match="3 of the 3 pairs .* no reference answer"):
        calibrate_judge(store, "bare", "reference:f1")
    assert store.query("SELECT COUNT(*) FROM calibrations")[0][0] == 0


def test_logistic_is_stable():
    assert logistic(-1000) == 0.0 and logistic(1000) == 1.0
    assert math.isclose(logistic(0), 0.5)


def test_identity_follows_the_margin(monkeypatch):
    """A cached verdict is keyed by the judge's identity: a judge that reads differences
    with another margin must not reuse it."""
    from engine.arena.judges import reference as rj

    before = ReferenceJudge("reference:f1").generator.identity.key()
    monkeypatch.setitem(rj.RULES, "f1", rj.Rule("token F1", margin=0.05, scale=10.0))
    assert ReferenceJudge("reference:f1").generator.identity.key() != before
