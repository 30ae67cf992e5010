"""Run reports, the inspector's drill-down and exports, on hand-made rows (the report CLI is
tested in tests/cli/test_report_cli.py).

The synthetic run ``toy-run`` and its expected adaptability are described in
:mod:`testkit.toy_run`.
"""

from __future__ import annotations

import csv
import hashlib
import json

import pytest
from testkit.scripted import ScriptedGenerator
from testkit.toy_run import LABEL, RET, SETTINGS, A, B, chunk_rowid, fill, new_run

from engine.results.inspector import item_detail, items_for
from engine.results.report import build_report
from engine.results.text import format_report
from engine.runs.lookup import RunNotFound, load_run
from engine.stats import clopper_pearson

N_BOOT = 200

def _row(report, label):
    return next(s for s in report.as_json()["systems"] if s["system"] == label)


# --------------------------------------------------------------------------- adaptability

def test_adaptability_equals_hand_computed_fractions(toy):
    report = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT)
    labels = [s["system"] for s in report.as_json()["systems"]]
    assert labels == [A, f"{A} | {RET}", B]
    expected = {A: (2, 2, 2, 2), f"{A} | {RET}": (0, 4, 2, 2), B: (2, 5, 0, 1)}
    for label, (nv, ca, ci, cm) in expected.items():
        row = _row(report, label)
        assert row["n"] == 8
        assert (row["nv"], row["ca"], row["ci"], row["cm"]) == pytest.approx(
            (nv / 8, ca / 8, ci / 8, cm / 8))
        assert row["nv"] + row["ca"] + row["ci"] + row["cm"] == pytest.approx(1.0)
        assert row["overall"] == pytest.approx((-nv + ca - ci - cm) / 8)
        assert sum(row["patterns"].values()) == row["n"]
        assert len(row["patterns"]) == 8
    assert _row(report, A)["patterns"] == dict.fromkeys(_row(report, A)["patterns"], 1)
    assert _row(report, B)["patterns"]["b0o1m1"] == 5
    assert _row(report, B)["patterns"]["b1o0m0"] == 1
    ret = _row(report, f"{A} | {RET}")
    assert (ret["retriever"], ret["top_k"], ret["mixed_setting"]) == (LABEL, 1, RET)
    assert ret["retriever_name"] == "ret-x"
    assert (ret["generator"], ret["template"]) == ("gen-a", "mirage@1")


def test_items_left_out_are_counted(toy):
    report = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT)
    assert _row(report, A)["left_out"] == {"missing": 1, "errored": 0, "total": 1}
    assert _row(report, B)["left_out"] == {"missing": 0, "errored": 1, "total": 1}
    assert report.items.as_json() == {"done": 61, "total": 61, "generated": 60, "errors": 1,
                                      "truncated": 1, "pending": 0}
    assert not report.partial


def test_cis_contain_the_value_and_are_deterministic(toy):
    first = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT, seed=3).as_json()
    again = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT, seed=3).as_json()
    assert first == again
    for row in first["systems"]:
        for key in ("nv", "ca", "ci", "cm", "overall"):
            assert row[f"{key}_lo"] <= row[key] <= row[f"{key}_hi"]
        assert row["ca_lo"] < row["ca_hi"]  # not degenerate: 8 items that differ
    # the shares are k of n with exact (Clopper-Pearson) CIs, which no seed moves
    for row in first["systems"]:
        k = round(row["ca"] * row["n"])
        assert (row["ca_lo"], row["ca_hi"]) == clopper_pearson(k, row["n"])
        assert row["overall_lo"] == pytest.approx(2 * row["ca_lo"] - 1)
        assert row["overall_hi"] == pytest.approx(2 * row["ca_hi"] - 1)
    other = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT, seed=4).as_json()
    assert [r["nv"] for r in other["systems"]] == [r["nv"] for r in first["systems"]]
    assert [(r["ca_lo"], r["ca_hi"]) for r in other["systems"]] == [
        (r["ca_lo"], r["ca_hi"]) for r in first["systems"]]


def test_accuracy_per_setting_and_other_metrics(toy):
    report = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT)
    acc = report.accuracy
    assert list(acc[A]) == ["base", "oracle", "mixed", RET]
    assert (acc[A]["base"].value, acc[A]["base"].n) == (pytest.approx(4 / 9), 9)
    assert (acc[A]["oracle"].value, acc[A]["oracle"].n) == (pytest.approx(5 / 9), 9)
    assert (acc[A]["mixed"].value, acc[A]["mixed"].n) == (pytest.approx(4 / 8), 8)
    assert (acc[B]["oracle"].value, acc[B]["oracle"].n) == (pytest.approx(7 / 8), 8)
    assert (acc[B]["mixed"].value, acc[B]["mixed"].n) == (pytest.approx(6 / 9), 9)
    for per in acc.values():
        for e in per.values():
            assert e.lo <= e.value <= e.hi
    assert _row(report, A)["accuracy"] == {s: e.as_json() for s, e in acc[A].items()}
    metrics = report.metrics[A]["base"]
    assert list(metrics) == ["em_loose", "em_strict", "f1_mirage", "correct_language",
                             "no_answer"]
    assert metrics["f1_mirage"].value == pytest.approx(0.5 * 4 / 9)
    assert metrics["no_answer"].value == pytest.approx(5 / 9)
    assert metrics["em_strict"].value == pytest.approx(1 / 9)  # only q0
    # correct_language: None for q0, q3, q6 (too short), so n counts the other six
    assert metrics["correct_language"].as_json() == {
        "value": 1.0, "lo": pytest.approx(0.025 ** (1 / 6)), "hi": 1.0,
        "n": 6}  # 6 of 6: Clopper-Pearson


def test_by_language_and_by_source_split_the_queries(toy):
    report = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT)
    a, b = _row(report, A), _row(report, B)
    assert set(a["by_language"]) == {"de", "en"}
    for lang in ("de", "en"):
        sub = a["by_language"][lang]
        assert sub["n"] == 4
        assert (sub["nv"], sub["ca"], sub["ci"], sub["cm"]) == pytest.approx((.25,) * 4)
    assert (b["by_language"]["en"]["ca"], b["by_language"]["en"]["n"]) == (1.0, 4)
    de = b["by_language"]["de"]
    assert (de["nv"], de["ca"], de["ci"], de["cm"]) == pytest.approx((.5, .25, 0, .25))
    # the language split of accuracy keeps q8 (English), which adaptability leaves out
    assert a["by_language"]["en"]["accuracy"]["oracle"]["n"] == 5
    assert a["by_language"]["en"]["accuracy"]["oracle"]["value"] == pytest.approx(3 / 5)
    wiki, news = a["by_source"]["wiki"], a["by_source"]["news"]
    assert (wiki["ca"], wiki["ci"], wiki["n"]) == (0.5, 0.5, 4)
    assert (news["nv"], news["cm"], news["n"]) == (0.5, 0.5, 4)


def test_retrieval_table_from_stored_rankings(toy):
    report = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT)
    (entry,) = report.retrieval
    assert (entry.retriever, entry.n, entry.missing) == (LABEL, 8, 1)
    assert (entry.retriever_name, entry.no_gold) == ("ret-x", 0)
    m = entry.metrics
    # even queries: hit at rank 1 and both golds in the top 3; odd: one gold at rank 2,
    # the other at rank 4
    assert m["p@1"].value == pytest.approx(0.5)
    assert m["r@1"].value == pytest.approx(0.25)
    assert m["p@3"].value == pytest.approx((4 * 2 / 3 + 4 * 1 / 3) / 8)
    assert m["r@3"].value == pytest.approx((4 * 1 + 4 * 0.5) / 8)
    assert m["r@5"].value == pytest.approx(1.0)
    assert m["ndcg_mirage@1"].value == pytest.approx(0.5)
    assert m["p@1"].n == 8
    assert m["p@1"].lo <= 0.5 <= m["p@1"].hi
    assert entry.by_language["en"].n == 4  # q8 has no ranking
    assert entry.by_language["en"].metrics["p@1"].value == pytest.approx(0.5)


# --------------------------------------------------------------------------- partial runs

def test_partial_run_reports_what_it_has_and_updates(toy):
    run_id = new_run(toy, "partial", status="running", config={"sample": 4, "seed": 7},
                      header={"total_items": 12,
                              "selection": {"mode": "sample", "queries": 4, "of": 9}})
    fill(toy, run_id, systems=(A,), queries={"q0", "q1"})
    first = build_report(toy, load_run(toy, "partial"), n_boot=N_BOOT)
    assert first.partial
    assert first.items.as_json() == {"done": 8, "total": 12, "generated": 8, "errors": 0,
                           "truncated": 1, "pending": 4}
    assert first.sample.as_json() == {"mode": "sample", "queries": 4, "of": 9, "seed": 7}
    assert _row(first, A)["n"] == 2
    assert (_row(first, A)["ca"], _row(first, A)["nv"]) == (0.5, 0.5)
    text = format_report(first)
    assert "PARTIAL" in text and "8 of 12 items done" in text
    assert "sample of 4 of 9 queries" in text

    fill(toy, run_id, systems=(A,), queries={"q2"})
    with toy.write() as db:
        db.conn.execute("UPDATE runs SET status = 'done' WHERE id = ?", (run_id,))
    second = build_report(toy, load_run(toy, "partial"), n_boot=N_BOOT)
    assert _row(second, A)["n"] == 3
    assert _row(second, A)["ci"] == pytest.approx(1 / 3)
    assert second.items.done == 12 and not second.partial
    assert "PARTIAL" not in format_report(second)


def test_unknown_run_lists_known_runs(toy):
    with pytest.raises(RunNotFound, match="no run named 'nope'.*toy-run"):
        build_report(toy, load_run(toy, "nope"))


# --------------------------------------------------------------------------- text report

def test_text_report_has_both_tables_patterns_and_cis(toy):
    text = format_report(build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT))
    assert "Table 1." in text and "Table 2." in text
    assert "NV↓" in text and "Overall↑" in text and "NDCG(ref)" in text
    assert "25.0 [" in text           # NV of A, in percent with its CI
    assert "62.5 [" in text           # CA of B
    assert "b0o1m1 5" in text         # B's pattern counts
    assert "left out 1 (1 errored, 0 missing)" in text
    assert "Accuracy per setting" in text and "n=6" in text
    # tables show a retriever's readable name; Table 2 maps it to the full label
    assert "ret-x is ret-x#0badcafe" in text and "retrieved@1:ret-x " in text
    assert "0badcafe" not in text.replace("ret-x is ret-x#0badcafe", "")
    by_lang = format_report(build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT), by="language")
    assert "by language" in by_lang and " de " in by_lang


# --------------------------------------------------------------------------- drill-down

def _keys(rows):
    return {(r.system, r.setting, r.query_id) for r in rows}


def test_items_for_filters_return_exactly_the_right_items(toy):
    rows = items_for(toy, load_run(toy, "toy-run"), system=A, setting="mixed", category="noise_vulnerable")
    assert _keys(rows) == {(A, "mixed", "q1"), (A, "mixed", "q5")}
    assert all(r.pattern in ("b0o1m0", "b1o1m0") and r.mixed_setting == "mixed" for r in rows)
    # without a setting, each item's pattern uses its own mixed-like setting, else "mixed"
    rows = items_for(toy, load_run(toy, "toy-run"), system=A, pattern="b0o0m0")
    assert _keys(rows) == {(A, s, "q2") for s in SETTINGS} | {(A, RET, "q6")}
    rows = items_for(toy, load_run(toy, "toy-run"), system=A, pattern="b0o0m0", mixed_setting="mixed")
    assert _keys(rows) == {(A, s, "q2") for s in SETTINGS}
    rows = items_for(toy, load_run(toy, "toy-run"), system=B, setting="oracle", language="de")
    assert [r.query_id for r in rows] == ["q4", "q5", "q6", "q7"]
    assert rows[0].query == "What is q4?" and rows[0].response == "It is ans4."
    rows = items_for(toy, load_run(toy, "toy-run"), setting="base", source="wiki",
                     category="context_misinterpreted")
    assert _keys(rows) == set()  # CM items of A are q3 and q7 (news); B's is q7
    rows = items_for(toy, load_run(toy, "toy-run"), setting="base", category="context_misinterpreted")
    assert _keys(rows) == {(A, "base", "q3"), (A, "base", "q7"), (B, "base", "q7")}
    rows = items_for(toy, load_run(toy, "toy-run"), system=A, setting="oracle", metric="correct_language",
                     min_value=0.5)
    assert [r.query_id for r in rows] == ["q1", "q2", "q4", "q5", "q7", "q8"]
    assert all(r.value == 1.0 and r.metric == "correct_language" for r in rows)
    page = items_for(toy, load_run(toy, "toy-run"), system=A, setting="base", limit=3, offset=3)
    assert [r.query_id for r in page] == ["q3", "q4", "q5"]
    errored = items_for(toy, load_run(toy, "toy-run"), system=B, setting="oracle", language="en")
    assert errored[-1].query_id == "q8" and errored[-1].error.startswith("context overflow")
    assert errored[-1].pattern is None
    with pytest.raises(ValueError, match="unknown category"):
        items_for(toy, load_run(toy, "toy-run"), category="noisy")


def test_item_detail_has_the_exact_prompt_scores_and_pool(toy):
    detail = item_detail(toy, load_run(toy, "toy-run"), A, "q1")
    assert (detail.query, detail.answers, detail.language) == ("What is q1?", ["ans1"], "en")
    assert [s.setting for s in detail.settings] == list(SETTINGS)
    oracle = detail.settings[1]
    assert oracle.prompt == f"<prompt {A} oracle q1>"
    assert oracle.response == "It is ans1." and oracle.truncated
    assert {s.metric: s.value for s in oracle.scores}["em_loose"] == 1.0
    assert {s.metric: s.detail for s in oracle.scores}["f1_mirage"] == "why f1_mirage q1"
    assert [s.metric for s in oracle.scores] == ["em_loose", "em_strict", "f1_mirage",
                                                 "correct_language", "no_answer"]
    assert oracle.scorer_version == "answer-1"
    assert detail.adaptability["mixed"]["category"] == "noise_vulnerable"
    assert detail.adaptability[RET]["pattern"] == "b0o1m1"
    pool = {c.chunk_id: c for c in detail.pool}
    assert pool["q1-c0"].is_oracle and pool["q1-c0"].support
    assert not pool["q1-c2"].support
    assert pool["q1-c2"].ranks == {LABEL: 1} and pool["q1-c0"].ranks == {LABEL: 2}
    assert "q2-c2" in pool and not pool["q2-c2"].in_pool  # retrieved from outside the pool
    assert pool["q1-c2"].in_context_of == ["mixed", RET]
    failed = item_detail(toy, load_run(toy, "toy-run"), B, "q8").settings[1]
    assert (failed.setting, failed.prompt, failed.scores) == ("oracle", None, [])
    assert failed.error.startswith("context overflow")
    with pytest.raises(LookupError):
        item_detail(toy, load_run(toy, "toy-run"), A, "q99")


# --------------------------------------------------------------------------- export

def test_export_csv_round_trip(toy, tmp_path):
    from engine.results.export import export_run

    path = export_run(toy, load_run(toy, "toy-run"), format="csv", out=tmp_path / "out.csv")
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 61
    for metric in ("em_loose", "em_strict", "f1_mirage", "correct_language", "no_answer"):
        assert metric in rows[0] and f"{metric}_detail" in rows[0]
    header = json.loads((tmp_path / "out.header.json").read_text(encoding="utf-8"))
    assert header["run"] == "toy-run" and header["dataset_content_hash"] == "hash-toy"
    assert header["run_header"]["models"] == {"gen-a": "sha-a"}
    assert header["columns"] == list(rows[0]) and header["rows"] == 61
    a_q1 = next(r for r in rows if (r["system"], r["setting"], r["query_id"])
                == (A, "oracle", "q1"))
    assert a_q1["prompt"] == f"<prompt {A} oracle q1>" and a_q1["truncated"] == "1"
    assert json.loads(a_q1["answers"]) == ["ans1"] and float(a_q1["em_loose"]) == 1.0
    failed = next(r for r in rows if r["error"])
    assert failed["em_loose"] == "" and failed["response"] == ""


def test_export_jsonl_round_trip(toy, tmp_path):
    from engine.results.export import export_run

    path = export_run(toy, load_run(toy, "toy-run"), format="jsonl", out=tmp_path / "out.jsonl")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["items"]["total"] == 61
    items = lines[1:]
    assert len(items) == 61 and all(i["type"] == "item" for i in items)
    assert set(lines[0]["columns"]) | {"type"} == set(items[0])
    ret = next(i for i in items if i["setting"] == RET and i["query_id"] == "q0")
    assert (ret["retriever"], ret["top_k"], ret["context"]) == (LABEL, 1, [chunk_rowid(0, 0)])
    assert ret["scorer_version"] == "answer-1" and "_scorer" not in ret
    assert ret["correct_language"] is None and ret["em_loose"] == 1.0
    assert not (tmp_path / "out.header.json").exists()


# --------------------------------------------------------------------------- with the run engine

def _gold_when_given_context(answers: dict[str, str]) -> ScriptedGenerator:
    """Answers with the gold when it is given context (and on every fifth base prompt),
    declines on every third prompt: enough variety for every adaptability category."""

    def answer(text: str) -> str:
        gold = next((a for q, a in answers.items() if q in text), "?")
        h = int(hashlib.sha256(text.encode()).hexdigest(), 16)
        return ("I do not know" if h % 3 == 0 else
                f"It is {gold}" if "Context" in text or h % 5 == 0 else "Paris")

    return ScriptedGenerator("scripted", answer, sha="0" * 64, n_ctx=4096, backend="fake",
                             usage=lambda text: (10, 3, 10, 0.01))


class _HashEmbedder:
    name, dim, max_seq_length, normalized = "hash-emb", 8, 128, True

    def __init__(self):
        from models.base import ModelIdentity

        self.identity = ModelIdentity("hash-emb", "1" * 64, None, 128, "fake")

    def _vectors(self, texts):
        import hashlib

        import numpy as np

        return np.array([np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8],
                                                   16)).normal(size=8) for t in texts],
                        dtype=np.float32)

    embed_queries = embed_passages = _vectors

    def count_tokens(self, texts):
        return [len(t) // 4 for t in texts]


def test_report_reads_what_the_run_engine_writes(store, tmp_path):
    from engine.datasets.demo_pool import ensure_demo
    from engine.results.export import export_run
    from engine.retrieval import Retriever
    from engine.runs import RunConfig, execute, plan_named

    ensure_demo(store)
    answers = {r[0]: json.loads(r[1])[0] for r in store.query("SELECT text, answers FROM queries")}
    config = RunConfig(dataset="demo", generators=["scripted"], name="e2e", sample=10,
                       settings=["base", "oracle", "mixed", "retrieved@1"],
                       retrievers=["hash-emb"])
    summary = execute(store, plan_named(store, config, check_models=False),
                      generators={"scripted": _gold_when_given_context(answers)},
                      retrievers={"hash-emb": Retriever(store, "demo", _HashEmbedder())})
    assert summary.status == "done" and summary.total == 40

    report = build_report(store, load_run(store, "e2e"), n_boot=N_BOOT)
    data = report.as_json()
    assert not report.partial and report.items.done == 40
    assert report.sample.as_json() == {"mode": "sample", "queries": 10, "of": 60, "seed": 0}
    assert [row["mixed_setting"].split(":")[0] for row in data["systems"]] == ["mixed",
                                                                              "retrieved@1"]
    for row in data["systems"]:
        assert row["n"] == 10 and sum(row["patterns"].values()) == 10
        assert row["nv"] + row["ca"] + row["ci"] + row["cm"] == pytest.approx(1.0)
    loose = store.query("SELECT ri.setting, AVG(s.value) FROM run_items ri JOIN scores s ON "
                        "s.generation_key = ri.generation_key AND s.query_rowid = ri.query_rowid "
                        "WHERE s.metric = 'em_loose' GROUP BY ri.setting")
    accuracy = report.accuracy["scripted/mirage@1"]
    for setting, mean in loose:
        assert accuracy[setting].value == pytest.approx(mean)
    assert "_scorer" not in report.metrics["scripted/mirage@1"]["base"]
    (retrieval,) = report.retrieval
    assert retrieval.retriever_name == "hash-emb" and retrieval.n == 10
    assert "Computed on a sample of 10 of 60 queries" in format_report(report)

    row = data["systems"][0]
    for category in ("noise_vulnerable", "context_acceptable", "context_insensitive",
                     "context_misinterpreted"):
        found = items_for(store, load_run(store, "e2e"), setting="mixed", category=category)
        share = {"noise_vulnerable": "nv", "context_acceptable": "ca",
                 "context_insensitive": "ci", "context_misinterpreted": "cm"}[category]
        assert len(found) == round(row[share] * 10)
    first = items_for(store, load_run(store, "e2e"), setting="oracle", limit=1)[0]
    detail = item_detail(store, load_run(store, "e2e"), first.system, first.query_id)
    oracle = next(s for s in detail.settings if s.setting == "oracle")
    sent = store.query("SELECT prompt FROM generations WHERE key = ?", (oracle.generation_key,))
    assert oracle.prompt == sent[0][0] and oracle.scorer_version
    path = export_run(store, load_run(store, "e2e"), format="jsonl", out=tmp_path / "e2e.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 41 and json.loads(lines[0])["run_header"]["total_items"] == 40
