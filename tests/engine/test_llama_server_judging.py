"""A run, judging and calibration through a model host on the llama-server backend, end to end: the
judge is SmolLM2 named as ``--judge`` names it, hosted on the llama-server stand-in
(tests/testkit/llama_server_standin.py), so every verdict goes engine → inflight → client →
host → llama-server's ``/completion`` with ``n_probs`` and back. The run's answers come from
scripted generators (testkit.arena); the store, the judgments cache and the arena are real."""

from __future__ import annotations

import pytest
from testkit.arena import import_reference_labels, answered_run
from testkit.llama_server_standin import host_on_standin, logged, stop_everything
from testkit.runs import SMOL

from engine.arena.ratings.battles import battle_rows
from engine.arena.trust.calibrate import calibrate_judge, latest_calibration
from engine.arena.judging.job import judge_arena
from engine.datasets.demo_pool import ensure_demo
from engine.runs.lookup import load_run
from engine.runs import RunConfig, execute, plan_named
from models.host.llama_server import LABEL_TOP_N


def asked_after_warm_up(log) -> list[dict]:
    """What llama-server was asked, less the one-token warm-up a freshly loaded local model
    gets before its first item or verdict (models.check.warm_up), which must come first and
    once."""
    asked = logged(log)
    assert asked and asked[0]["n_predict"] == 1 and "n_probs" not in asked[0], asked[:1]
    assert sum(1 for b in asked if b["n_predict"] == 1 and "n_probs" not in b) == 1
    return asked[1:]


@pytest.fixture
def standin_log(tmp_path, monkeypatch):
    log = host_on_standin(monkeypatch, tmp_path)
    yield log
    assert stop_everything(log) == [], "a host or a stand-in survived the test"


def test_an_arena_judged_through_llama_server(store, standin_log):
    ensure_demo(store)
    answered_run(store, sample=2, settings=("base", "oracle"))
    run = load_run(store, "r")
    summary = judge_arena(store, run, SMOL, n_threads=1)
    assert summary.status == "done", summary.message
    assert (summary.total, summary.done, summary.errors) == (12, 12, 0)
    asked = asked_after_warm_up(standin_log)
    by_logits = [b for b in asked if b.get("n_probs") == LABEL_TOP_N]
    assert len(asked) == len(by_logits) == summary.judge_calls == 12   # one pass a verdict
    assert len(logged(standin_log, "start")) == 1          # one host, one llama-server
    rows = battle_rows(store, run)
    assert len(rows) == 12 and all(r["winner"] in ("a", "b", "tie") for r in rows)
    again = judge_arena(store, run, SMOL, n_threads=1)     # all from the cache now
    # no verdict asked again: only the judge's warm-up as it loads once more
    new = logged(standin_log)[len(asked) + 1:]
    assert again.judge_calls == 0 and [b.get("n_probs") for b in new] == [None]


def test_a_calibration_through_llama_server(store, tmp_path, standin_log):
    labels = import_reference_labels(store, tmp_path)
    result = calibrate_judge(store, labels, SMOL, n_boot=50, n_threads=1)
    assert result.status == "done", result.message
    assert result.pairs == 10 and result.judge_calls == 10
    assert result.counts["failed"] == 0
    assert [b["n_probs"] for b in asked_after_warm_up(standin_log)] == [LABEL_TOP_N] * 10
    stored = latest_calibration(store, SMOL)
    assert stored is not None and stored.estimate("sign_accuracy").n >= 1


def test_a_run_through_llama_server(store, standin_log):
    ensure_demo(store)
    plan = plan_named(store, RunConfig(dataset="demo", generators=[SMOL], sample=2, threads=1,
                                     settings=["base", "oracle"], max_tokens=4, name="ls"))
    summary = execute(store, plan)
    assert summary.status == "done", summary.message
    texts = [r[0] for r in store.query("SELECT text FROM generations")]
    asked = asked_after_warm_up(standin_log)
    assert len(texts) == len(asked) == 4 and all(t.strip() for t in texts)
    assert all(b["n_predict"] == 4 and b["cache_prompt"] for b in asked)
