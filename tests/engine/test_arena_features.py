"""MIRAGE-Bench heuristic features: the pure parts on hand-worked cases, the stored features of a
small run (model-free and judged by a scripted judge), resume, per-contestant means with CIs,
and one short real pass with the packaged SmolLM2 as the judge.

The synthetic run ``feat-run`` on dataset ``toy@1``: q1 (en, with a long reference answer) and
q2 (de, gold short answer only), three chunks each (chunk 0 relevant), two systems in setting
``mixed`` with the three chunks as numbered contexts. Fakes only at the edge: the judge.
"""

from __future__ import annotations

import json

import pytest

from engine.arena.surrogate.features.responses import Response, response_parts
from engine.arena.surrogate.features.specs import FEATURES
from engine.arena.surrogate.features.stored import compute_features, system_features
from engine.arena.surrogate.features.text import (bleu, citation_map, citation_recall,
                                                  model_free_features, overlap_tokens, rouge_l,
                                                  split_sentences)
from engine.runs.lookup import load_run
from testkit.scripted import ScriptedJudge, sections

A, B = "gen-a/mirage-bench@1", "gen-b/mirage-bench@1"
MIXED = "mixed"

CHUNKS = {
    1: ["Paris is the capital of France.", "Lyon is a large city in France.",
        "Berlin is the capital of Germany."],
    2: ["Berlin ist die Hauptstadt von Deutschland.", "München liegt in Bayern.",
        "Paris ist die Hauptstadt von Frankreich."],
}
TEXTS = {
    (A, 1): "##Reason: The capital of France is Paris [2][1]. Lyon is a city [2].\n"
            "##Answer: The capital of France is Paris [1].",
    (B, 1): "##Reason: I am not sure. ##Answer: Paris [3]",
    (A, 2): "##Reason: Die Hauptstadt von Deutschland ist Berlin [1].\n"
            "##Answer: Die Hauptstadt von Deutschland ist Berlin [1].",
    (B, 2): "The capital of Germany is Berlin, a large and old city.",
}


def _chunk(q: int, j: int) -> int:
    return 1000 + 10 * q + j


def build_run(store) -> None:
    with store.write() as db:
        c = db.conn
        c.execute("INSERT INTO datasets (id, name, version, kind, format, content_hash, "
                  "created_at) VALUES (1, 'toy', 1, 'qa', 'mirage', 'h', '2024-01-01')")
        c.execute("INSERT INTO queries (id, dataset_id, query_id, text, language, answers, "
                  "reference_answer) VALUES (1, 1, 'q1', 'What is the capital of France?', "
                  "'en', ?, 'The capital of France is Paris.')", (json.dumps(["Paris"]),))
        c.execute("INSERT INTO queries (id, dataset_id, query_id, text, language, answers) "
                  "VALUES (2, 1, 'q2', 'Was ist die Hauptstadt von Deutschland?', 'de', ?)",
                  (json.dumps(["", "Berlin"]),))
        for q, texts in CHUNKS.items():
            for j, text in enumerate(texts):
                c.execute("INSERT INTO chunks (id, dataset_id, chunk_id, text, content_hash) "
                          "VALUES (?, 1, ?, ?, ?)", (_chunk(q, j), f"q{q}-c{j}", text, f"h{q}{j}"))
                c.execute("INSERT INTO pool VALUES (?, ?, ?, ?, ?, 'label')",
                          (q, _chunk(q, j), j, int(j == 0), int(j == 0)))
        c.execute("INSERT INTO runs (id, name, dataset_id, config, header, status, created_at, "
                  "updated_at) VALUES (1, 'feat-run', 1, '{}', '{}', 'done', 'x', 'x')")
        for (system, q), text in TEXTS.items():
            key = f"{system}|{q}"
            c.execute("INSERT INTO generations (key, model_key, model_name, prompt, params, text, "
                      "created_at) VALUES (?, 'm', 'm', ?, '{}', ?, 'x')", (key, key, text))
            c.execute("INSERT INTO run_items (run_id, system, setting, query_rowid, "
                      "generation_key, context) VALUES (1, ?, ?, ?, ?, ?)",
                      (system, MIXED, q, key, json.dumps([_chunk(q, j) for j in range(3)])))
        # a failed item has no response: it is never scored
        c.execute("INSERT INTO run_items (run_id, system, setting, query_rowid, context, error) "
                  "VALUES (1, ?, 'oracle', 1, '[]', 'context overflow')", (A,))


@pytest.fixture
def run_store(store):
    build_run(store)
    return store


def feats(store, system, q) -> dict[str, float | None]:
    rows = store.query("SELECT metric, value FROM scores WHERE generation_key = ? AND "
                       "query_rowid = ? AND metric LIKE 'feat:%'", (f"{system}|{q}", q))
    return {r[0]: r[1] for r in rows}


def details(store, system, q) -> dict[str, str]:
    rows = store.query("SELECT metric, detail FROM scores WHERE generation_key = ? AND "
                       "query_rowid = ?", (f"{system}|{q}", q))
    return {r[0]: r[1] for r in rows}


# --------------------------------------------------------------------------- scripted judge

KINDS = ("supports a sentence", "search query", "reference answer", "writing quality")


def template_kind(s: dict[str, str]) -> str:
    return next(k for k in KINDS if k in s["System"])


def template_probs(s: dict[str, str], labels) -> dict[str, float]:
    """Support P(yes) 0.9 when the passage names the sentence's city, else 0.2; relevance
    0.6; overlap grades 4 and 5 at 0.5 each (expected 4.5); fluency 3 for sure."""
    kind = template_kind(s)
    if kind == "supports a sentence":
        sentence = s["Sentence"].split("\n\n")[0]
        city = next((c for c in ("Paris", "Berlin", "Lyon") if c in sentence), None)
        p = 0.9 if city and city in s["Passage"] else 0.2
        return {"yes": p, "Yes": 0.0, "no": 1 - p, "No": 0.0}
    if kind == "search query":
        return {"yes": 0.6, "Yes": 0.0, "no": 0.4, "No": 0.0}
    if kind == "reference answer":
        return {"1": 0.0, "2": 0.0, "3": 0.0, "4": 0.5, "5": 0.5}
    return {"1": 0.0, "2": 0.0, "3": 1.0, "4": 0.0, "5": 0.0}


class FeaturesJudge(ScriptedJudge):
    """The kit's scripted judge on the feature templates: with ``probs`` it answers
    ``label_probs`` by template (:func:`template_probs`); its text replies come from
    ``replies`` (template -> reply)."""

    def __init__(self, probs: bool = True, replies: dict | None = None):
        replies = replies or {}
        super().__init__(lambda s: replies.get(template_kind(s), "I cannot tell."),
                         probs=template_probs, supports_label_probs=probs,
                         name="scripted-judge", sha="0" * 64)


JUDGE = "judge:scripted-judge"


# --------------------------------------------------------------------------- pure parts

def test_language_probabilities_target_and_english():
    def response(text, language):
        return Response("k", 1, text, "q", language, None, None, [], {}, set())

    def values(text, language):
        return {v.metric: v.value for v in model_free_features(response(text, language))}

    en = values("##Reason: x ##Answer: The capital of France is Paris, a large city [1].", "en")
    assert en["feat:lang_target@langid"] > 0.9 and en["feat:lang_en@langid"] > 0.9
    de = values("##Answer: Die Hauptstadt von Deutschland ist Berlin, eine große Stadt.", "de")
    assert de["feat:lang_target@langid"] > 0.9 and de["feat:lang_en@langid"] < 0.1
    wrong = values("The capital of Germany is Berlin, a large and old city.", "de-DE")
    assert wrong["feat:lang_target@langid"] < 0.1 and wrong["feat:lang_en@langid"] > 0.9
    assert values("Berlin ist groß und alt und schön.", None)["feat:lang_target@langid"] is None
    # no contexts, no reference: those features do not apply
    assert en["feat:citation_recall@10"] is None and en["feat:rouge_l"] is None


def test_citation_recall_and_map_hand_computed():
    assert citation_recall([2, 1], {1}) == 1.0
    assert citation_map([2, 1], {1}) == 0.5
    assert citation_recall([3], {1, 2}) == 0.0 and citation_map([3], {1, 2}) == 0.0
    # relevant at ranks 1 and 3 of two relevant: (1/1 + 2/3) / 2
    assert citation_map([1, 3, 2], {1, 2}) == pytest.approx((1 + 2 / 3) / 2)
    # three relevant, one cited: AP divides by all relevant (trec_eval map_cut)
    assert citation_map([5], {5, 6, 7}) == pytest.approx(1 / 3)
    assert citation_recall([5], {5, 6, 7}) == pytest.approx(1 / 3)
    # only the top 10 count
    run = list(range(100, 110)) + [1]
    assert citation_recall(run, {1}) == 0.0 and citation_map(run, {1}) == 0.0
    assert citation_recall([], set()) is None and citation_map([1], set()) is None


def test_citations_map_to_the_prompts_numbered_contexts():
    ctx = [11, 12, 13]
    r = Response("k", 1, "##Reason: a [2][1]. ##Answer: b [2][7]", "q", "en", None, None, ctx,
                 {c: "" for c in ctx}, {11})
    out = {v.metric: v for v in model_free_features(r)}
    assert out["feat:citation_recall@10"].value == 1.0
    assert out["feat:citation_map@10"].value == 0.5
    assert json.loads(out["feat:citation_map@10"].detail) == {
        "cited": [2, 1], "invalid": 1, "relevant": [1]}


def test_rouge_l_and_bleu_known_values():
    # LCS "the cat on the mat" = 5 of 6 tokens each side
    assert rouge_l("the cat sat on the mat", "The cat is on the mat.") == pytest.approx(5 / 6)
    # clipped n-gram precisions 5/6, 3/5, 2/4, 1/3, equal lengths: (1/12) ** (1/4)
    assert bleu("the cat sat on the mat", "the cat sat on a mat") == pytest.approx(
        (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25)
    assert bleu("Paris", "Paris") == pytest.approx((1 * 0.1 * 0.1 * 0.1) ** 0.25)  # smoothed
    assert rouge_l("", "Paris") == 0.0 and bleu("", "Paris") == 0.0
    # scripts without spaces are compared character by character (rouge-score's own
    # tokenizer would drop them and score 0)
    assert overlap_tokens("北京是首都, OK!") == ["北", "京", "是", "首", "都", "ok"]
    assert rouge_l("北京是中国的首都", "北京是中国的首都") == 1.0
    assert rouge_l("Москва — столица", "Столица — Москва") == pytest.approx(0.5)


def test_sentences_and_response_parts():
    assert split_sentences("Paris is the capital [1]. It is big. [2][3] Berlin is 3.5 km.\n"
                           "Last [1]") == ["Paris is the capital [1].", "It is big. [2][3]",
                                           "Berlin is 3.5 km.", "Last [1]"]
    assert split_sentences("北京是首都[1]。上海很大。") == ["北京是首都[1]。", "上海很大。"]
    parts = response_parts("##Reason: A [1]. B [2]. ##Answer: Paris [1]")
    assert (parts.reason, parts.answer) == ("A [1]. B [2].", "Paris [1]")
    parts = response_parts("##Reason: cut short [1]")   # no Answer part: all answer
    assert (parts.reason, parts.answer) == ("cut short [1]", "cut short [1]")
    parts = response_parts("No headings at all [1].")
    assert (parts.reason, parts.answer) == ("No headings at all [1].", "No headings at all [1].")


def test_feature_list_describes_every_feature():
    assert [f.key for f in FEATURES] == ["lang_target", "lang_en", "citation_recall",
                                         "citation_map", "rouge_l", "bleu", "support",
                                         "reranker", "overlap", "fluency"]
    assert all(f.description and f.name("judge:x").startswith("feat:") for f in FEATURES)
    assert FEATURES[6].name("judge:x") == "feat:support@judge:x"
    with pytest.raises(ValueError):
        FEATURES[6].name()


# --------------------------------------------------------------------------- stored features

def test_model_free_features_are_stored_and_resumed(run_store):
    summary = compute_features(run_store, load_run(run_store, "feat-run"))
    assert (summary.responses, summary.computed, summary.skipped) == (4, 4, 0)
    assert summary.features_written == 4 * 6 and summary.judge is None
    a1 = feats(run_store, A, 1)
    assert set(a1) == {f.name() for f in FEATURES if not f.judged}
    # cited [2][1] (+ [2], [1] again) with relevant {1}: recall 1, MAP 0.5
    assert a1["feat:citation_recall@10"] == 1.0 and a1["feat:citation_map@10"] == 0.5
    assert a1["feat:rouge_l"] == 1.0        # answer == reference answer, citations removed
    assert a1["feat:lang_target@langid"] > 0.9
    b1 = feats(run_store, B, 1)
    assert b1["feat:citation_recall@10"] == 0.0 and b1["feat:citation_map@10"] == 0.0
    assert 0 < b1["feat:rouge_l"] < 1       # "Paris" against the reference answer
    b2 = feats(run_store, B, 2)             # no headings, no citations, English for a de query
    assert b2["feat:citation_recall@10"] == 0.0
    assert b2["feat:lang_target@langid"] < 0.1 and b2["feat:lang_en@langid"] > 0.9
    assert b2["feat:rouge_l"] == pytest.approx(2 / (1 + 11))  # "berlin" vs gold "Berlin"
    assert "gold_answer" in details(run_store, B, 2)["feat:rouge_l"]
    assert "reference_answer" in details(run_store, A, 1)["feat:rouge_l"]
    # nothing for the failed item; other metrics untouched
    assert run_store.query("SELECT COUNT(*) FROM scores")[0][0] == 4 * 6

    again = compute_features(run_store, load_run(run_store, "feat-run"))
    assert (again.computed, again.skipped, again.features_written) == (0, 4, 0)


def test_scope_by_contestant_and_query(run_store):
    s = compute_features(run_store, load_run(run_store, "feat-run"), systems=[f"{A} | {MIXED}"], queries=[2])
    assert s.responses == 1 and feats(run_store, A, 2) and not feats(run_store, A, 1)
    s = compute_features(run_store, load_run(run_store, "feat-run"), systems=[B])
    assert s.responses == 2 and feats(run_store, B, 1)


def test_judged_features_with_a_scripted_judge(run_store):
    judge = FeaturesJudge()
    summary = compute_features(run_store, load_run(run_store, "feat-run"), judge=judge)
    assert summary.judge == JUDGE and summary.reranker == JUDGE
    a1 = feats(run_store, A, 1)
    # sentence 1 cites [2] (Lyon chunk: 0.2) and [1] (Paris chunk: 0.9) -> 0.55;
    # sentence 2 "Lyon is a city" cites [2] (Lyon chunk) -> 0.9; macro mean 0.725
    assert a1[f"feat:support@{JUDGE}"] == pytest.approx((0.55 + 0.9) / 2)
    assert a1[f"feat:reranker@{JUDGE}"] == pytest.approx(0.6)
    assert a1[f"feat:overlap@{JUDGE}"] == pytest.approx(4.5)
    assert a1[f"feat:fluency@{JUDGE}"] == pytest.approx(3.0)
    b1 = feats(run_store, B, 1)
    assert b1[f"feat:support@{JUDGE}"] is None      # its reasoning cites nothing
    assert "no reasoning sentence cites" in details(run_store, B, 1)[f"feat:support@{JUDGE}"]
    assert b1[f"feat:reranker@{JUDGE}"] == pytest.approx(0.6)
    assert feats(run_store, B, 2)[f"feat:reranker@{JUDGE}"] is None   # cites nothing
    assert feats(run_store, A, 2)[f"feat:overlap@{JUDGE}"] == pytest.approx(4.5)  # vs gold
    # calls: support 2+1 (A q1) + 1 (A q2); relevance 2+1+1 (A q1 and q2, B q1; B q2 none);
    # overlap 4; fluency 4
    assert summary.judge_calls == len(judge.calls) == 4 + 4 + 4 + 4
    assert run_store.query("SELECT COUNT(*) FROM judgments")[0][0] == 16
    assert summary.features_written == 4 * 10   # model-free too: none were stored yet


def test_failed_grade_parse_is_stored_as_null(run_store):
    judge = FeaturesJudge(probs=False, replies={
        "supports a sentence": "Yes, it does.", "search query": "no",
        "reference answer": "4 - acceptable", "writing quality": "I can't grade this."})
    summary = compute_features(run_store, load_run(run_store, "feat-run"), judge=judge, systems=[A], queries=[1])
    a1 = feats(run_store, A, 1)
    assert a1[f"feat:fluency@{JUDGE}"] is None
    assert f"feat:fluency@{JUDGE}" in a1     # stored, as missing
    assert "parse failed" in details(run_store, A, 1)[f"feat:fluency@{JUDGE}"]
    assert a1[f"feat:overlap@{JUDGE}"] == 4.0
    assert a1[f"feat:support@{JUDGE}"] == 1.0 and a1[f"feat:reranker@{JUDGE}"] == 0.0
    assert summary.parse_failures == 1


def test_resume_makes_no_judge_calls(run_store):
    compute_features(run_store, load_run(run_store, "feat-run"), judge=FeaturesJudge())
    judge = FeaturesJudge()
    again = compute_features(run_store, load_run(run_store, "feat-run"), judge=judge)
    assert judge.calls == [] and again.skipped == 4 and again.judge_calls == 0
    # a lost feature row is recomputed from the judgments cache, still without a call
    with run_store.write() as db:
        db.conn.execute("DELETE FROM scores WHERE metric = ?", (f"feat:overlap@{JUDGE}",))
    third = compute_features(run_store, load_run(run_store, "feat-run"), judge=judge)
    assert judge.calls == [] and third.computed == 4 and third.judge_cached == 4
    assert feats(run_store, A, 1)[f"feat:overlap@{JUDGE}"] == pytest.approx(4.5)


def test_cancel_stops_between_responses(run_store):
    seen = []
    summary = compute_features(run_store, load_run(run_store, "feat-run"), cancel=lambda: len(seen) >= 2,
                               progress=seen.append)
    assert summary.cancelled and summary.computed == 1   # progress(0) then one response
    assert [(e.kind, e.status, e.done, e.total) for e in seen] == [
        ("features", "running", 0, 4), ("features", "running", 1, 4),
        ("features", "cancelled", 1, 4)]
    rest = compute_features(run_store, load_run(run_store, "feat-run"))
    assert rest.skipped == 1 and rest.computed == 3


def test_a_full_disk_ends_a_pass_as_a_job_does_keeping_what_is_stored(run_store, monkeypatch):
    """compute_features is a Job: a full disk at the third response ends the pass with the
    jobs' message (not a traceback), its last event says failed, and the two responses
    stored before it stay for the next pass."""
    import sqlite3

    import engine.arena.surrogate.features.stored as stored

    real, calls, seen = stored.save_features, [], []

    def fills_up(store, rows):
        calls.append(rows)
        if len(calls) == 3:
            raise sqlite3.OperationalError("database or disk is full")
        return real(store, rows)

    monkeypatch.setattr(stored, "save_features", fills_up)
    summary = compute_features(run_store, load_run(run_store, "feat-run"), progress=seen.append)
    assert summary.computed == 2 and not summary.cancelled
    assert summary.errors and "disk" in summary.errors[-1], summary.errors
    assert (seen[-1].status, seen[-1].done) == ("failed", 2)
    monkeypatch.setattr(stored, "save_features", real)
    rest = compute_features(run_store, load_run(run_store, "feat-run"))
    assert rest.skipped == 2 and rest.computed == 2


def test_system_features_mean_ci_and_n(run_store):
    compute_features(run_store, load_run(run_store, "feat-run"), judge=FeaturesJudge())
    out = system_features(run_store, load_run(run_store, "feat-run"), n_boot=200)
    assert set(out) == {f"{A} | {MIXED}", f"{B} | {MIXED}"}
    a = out[f"{A} | {MIXED}"]
    recall = a["feat:citation_recall@10"]
    assert (recall.value, recall.n) == (1.0, 2)
    rouge = out[f"{B} | {MIXED}"]["feat:rouge_l"]
    assert rouge.n == 2 and rouge.lo <= rouge.value <= rouge.hi and rouge.lo < rouge.hi
    support = out[f"{B} | {MIXED}"][f"feat:support@{JUDGE}"]
    assert (support.value, support.n) == (None, 0)   # NULLs are left out of n
    assert system_features(run_store, load_run(run_store, "feat-run"), n_boot=200) == out   # deterministic
    only = system_features(run_store, load_run(run_store, "feat-run"), ["feat:bleu"], queries=[1], n_boot=50)
    assert {m for per in only.values() for m in per} == {"feat:bleu"}
    assert all(per["feat:bleu"].n == 1 for per in only.values())


# --------------------------------------------------------------------------- real judge

def test_real_judged_features_with_packaged_smollm2(run_store):
    summary = compute_features(run_store, load_run(run_store, "feat-run"), judge="smollm2-135m-instruct",
                               n_threads=1, systems=[A], queries=[1])
    assert summary.judge == "judge:smollm2-135m-instruct" and not summary.errors
    assert summary.judge_calls == 3 + 2 + 1 + 1 and summary.parse_failures == 0
    a1 = feats(run_store, A, 1)
    name = "judge:smollm2-135m-instruct"
    for key in ("support", "reranker"):
        assert 0.0 <= a1[f"feat:{key}@{name}"] <= 1.0
    for key in ("overlap", "fluency"):
        assert 1.0 <= a1[f"feat:{key}@{name}"] <= 5.0


# --------------------------------------------------------------------------- through inflight

TEXT_REPLIES = {"supports a sentence": "Yes, it does.", "search query": "no",
                "reference answer": "4 - acceptable", "writing quality": "3"}


class FlakyJudge(FeaturesJudge):
    """The scripted judge replying in text, four requests at once, whose first call of each
    kind fails as a busy server's would (a transient error): inflight's retries absorb it."""

    max_concurrency = 4

    def __init__(self):
        import threading

        super().__init__(probs=False, replies=TEXT_REPLIES)
        self.failed: set[str] = set()
        self.lock = threading.Lock()

    def generate(self, messages, params):
        from models.base import TransientModelError

        kind = template_kind(sections(messages))
        with self.lock:
            first = kind not in self.failed
            self.failed.add(kind)
        if first:
            raise TransientModelError(f"{kind}: the server is busy")
        return super().generate(messages, params)


def all_features(store) -> dict:
    return {(r[0], r[1], r[2]): (r[3], r[4]) for r in store.query(
        "SELECT generation_key, query_rowid, metric, value, detail FROM scores "
        "WHERE metric LIKE 'feat:%'")}


def test_judged_features_go_through_inflight_retried_concurrent_and_identical(
        run_store, tmp_path, monkeypatch):
    import engine.inflight
    from engine.store import Store

    monkeypatch.setattr(engine.inflight, "BACKOFF_S", 0.001)
    flaky = FlakyJudge()
    summary = compute_features(run_store, load_run(run_store, "feat-run"), judge=flaky)
    assert not summary.errors and summary.computed == 4
    assert flaky.failed == {"supports a sentence", "search query", "reference answer",
                            "writing quality"}           # each failed once, then retried
    assert summary.judge_calls == len(flaky.calls) == 16 and summary.parse_failures == 0

    one_by_one = Store(tmp_path / "b.db")
    try:
        build_run(one_by_one)
        compute_features(one_by_one, load_run(one_by_one, "feat-run"),
                         judge=FeaturesJudge(probs=False, replies=TEXT_REPLIES))
        assert all_features(run_store) == all_features(one_by_one)
    finally:
        one_by_one.close()


def test_a_judge_that_keeps_failing_leaves_the_model_free_features(run_store, monkeypatch):
    import engine.inflight
    from models.base import TransientModelError

    monkeypatch.setattr(engine.inflight, "BACKOFF_S", 0.001)

    class Down(FeaturesJudge):
        def generate(self, messages, params):
            self.calls.append("down")
            raise TransientModelError("connection refused")

    down = Down(probs=False)
    summary = compute_features(run_store, load_run(run_store, "feat-run"), judge=down, systems=[A], queries=[1])
    assert summary.errors and "after 4 attempts" in summary.errors[0]
    a1 = feats(run_store, A, 1)
    assert f"feat:fluency@{JUDGE}" not in a1 and "feat:citation_recall@10" in a1
    again = compute_features(run_store, load_run(run_store, "feat-run"), judge=FeaturesJudge(), systems=[A],
                             queries=[1])
    assert again.computed == 1 and not again.errors
    assert feats(run_store, A, 1)[f"feat:fluency@{JUDGE}"] == pytest.approx(3.0)
