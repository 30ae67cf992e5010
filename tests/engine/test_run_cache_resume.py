"""The generation cache and resuming a run: a second run generates nothing (exact keys), and a
run cancelled, crashed or stopped by a full disk resumes to the same rows; a run's name with
another configuration, or another model file, is refused. The CLI's run command is tested in
tests/cli/test_run_cli.py, real SmolLM2 runs (and kill -9) in tests/e2e/test_run_real.py.

Fakes only at the edge: a scripted generator that counts its calls; the store, the engine and
the metrics are real.
"""

from __future__ import annotations

import json
import threading

import pytest
from testkit.runs import FakeGenerator, config, rows, run

from engine.datasets.demo_pool import ensure_demo
from engine.metrics.answer import LANGUAGE_VARIANTS, METRICS, SCORER_VERSION
from engine.runs import (
    SCORER_MARK,
    RunConfigMismatch,
    execute,
    generation_key,
    plan_named,
)
from engine.store import Store
from models.base import ModelIdentity


def test_second_run_generates_nothing_and_keys_are_exact(demo):
    gen = FakeGenerator()
    plan, first = run(demo, config(), {"fake-gen": gen})
    assert first.generated == 18 == len(gen.calls) and first.status == "done"
    before = rows(demo)
    again = FakeGenerator()
    _, second = run(demo, config(), {"fake-gen": again})
    assert again.calls == [] and second.generated == 0 and second.cached == 18
    assert rows(demo) == before
    g = demo.query("SELECT key, model_key, prompt, params FROM generations LIMIT 1")[0]
    from engine.runs.prompting import sampling_params

    assert g["key"] == generation_key(g["model_key"], g["prompt"], sampling_params(64, 0))
    assert json.loads(g["params"])["temperature"] == 0.0
    # every generation is scored once per query, with the scorer's version
    marks = demo.query("SELECT COUNT(*), MIN(detail) FROM scores WHERE metric = ?",
                       (SCORER_MARK,))[0]
    assert tuple(marks) == (18, SCORER_VERSION)
    # a second run name reuses the cache too
    other = FakeGenerator()
    _, third = run(demo, config(name="other"), {"fake-gen": other})
    assert other.calls == [] and third.cached == 18
    status = demo.query("SELECT status FROM runs WHERE name = 't'")[0][0]
    assert status == "done"


def test_cancelled_run_resumes_to_the_same_rows(tmp_path):
    whole = Store(tmp_path / "whole.db")
    ensure_demo(whole)
    run(whole, config())
    parts = Store(tmp_path / "parts.db")
    ensure_demo(parts)
    gen = FakeGenerator()
    stop = threading.Event()
    events = []

    def progress(event):
        events.append(event)
        if event.done >= 7:
            stop.set()

    _, first = run(parts, config(), {"fake-gen": gen}, cancel=stop, progress=progress,
                   min_interval=0)
    assert first.status == "cancelled" and first.done == 7 and len(gen.calls) == 7
    assert parts.query("SELECT status FROM runs")[0][0] == "cancelled"
    assert events[-1].status == "cancelled"
    again = FakeGenerator()
    _, second = run(parts, config(), {"fake-gen": again})
    assert second.status == "done" and len(again.calls) == 11 and second.cached == 7
    assert rows(parts) == rows(whole)


def test_a_crashing_generator_fails_the_run_and_resume_completes_it(demo):
    crashing = FakeGenerator(fail_on={5})
    _, first = run(demo, config(), {"fake-gen": crashing})
    assert first.status == "failed" and "scripted crash on call 5" in first.message
    run_row = demo.query("SELECT status, header FROM runs")[0]
    assert run_row["status"] == "failed"
    assert "scripted crash" in json.loads(run_row["header"])["message"]
    errored = demo.query("SELECT error FROM run_items WHERE error IS NOT NULL")
    assert len(errored) == 1 and "scripted crash" in errored[0][0]
    assert demo.query("SELECT COUNT(*) FROM generations")[0][0] == 4
    healthy = FakeGenerator()
    _, second = run(demo, config(), {"fake-gen": healthy})
    assert second.status == "done" and len(healthy.calls) == 14
    assert demo.query("SELECT COUNT(*) FROM run_items WHERE generation_key IS NOT NULL "
                      "AND error IS NULL")[0][0] == 18
    assert demo.query("SELECT COUNT(*) FROM generations")[0][0] == 18
    assert "message" not in json.loads(demo.query("SELECT header FROM runs")[0][0])


def test_a_full_disk_stops_cleanly_and_resumes(demo):
    gen = FakeGenerator()
    plan = plan_named(demo, config(), check_models=False)
    conn = demo.conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 4}")
    summary = execute(demo, plan, generators={"fake-gen": gen})
    assert summary.status == "failed" and summary.message.startswith("the disk is full")
    assert 0 < summary.done < 18
    conn.execute("PRAGMA max_page_count = 1073741823")
    # nothing half-written: every stored item has its generation and all its scores
    for item in demo.query("SELECT generation_key, query_rowid FROM run_items"):
        assert demo.query("SELECT 1 FROM generations WHERE key = ?", (item[0],))
        assert demo.query("SELECT COUNT(*) FROM scores WHERE generation_key = ? AND "
                          "query_rowid = ?", (item[0], item[1]))[0][0] == (
                              len(METRICS) + len(LANGUAGE_VARIANTS) + 1)
    stored = demo.query("SELECT COUNT(*) FROM run_items")[0][0]
    assert stored == summary.done
    again = FakeGenerator()
    _, resumed = run(demo, config(), {"fake-gen": again})
    assert resumed.status == "done" and len(again.calls) == 18 - stored
    assert demo.query("SELECT COUNT(*) FROM run_items")[0][0] == 18


def test_same_name_with_another_config_is_refused_unless_forced(demo):
    run(demo, config())
    with pytest.raises(RunConfigMismatch, match="differs in: seed.*--force-new"):
        plan_named(demo, config(seed=1), check_models=False)
    # how far and how fast a run goes may change between sessions
    plan_named(demo, config(threads=3), check_models=False)
    gen = FakeGenerator()
    plan = plan_named(demo, config(seed=1), force_new=True, check_models=False)
    summary = execute(demo, plan, generators={"fake-gen": gen})
    assert summary.status == "done" and len(gen.calls) == 18   # new seed: new keys
    assert json.loads(demo.query("SELECT config FROM runs")[0][0])["seed"] == 1
    assert demo.query("SELECT COUNT(*) FROM run_items")[0][0] == 18


def test_a_changed_model_file_is_refused_on_resume(demo):
    stop = threading.Event()
    run(demo, config(), cancel=stop, progress=lambda e: e.done >= 2 and stop.set(),
        min_interval=0)

    class Other(FakeGenerator):
        @property
        def identity(self):
            return ModelIdentity(self.name, "0" * 64, None, self.n_ctx, "fake")

    _, summary = run(demo, config(), {"fake-gen": Other()})
    assert summary.status == "failed" and "not the model this run started with" in \
        summary.message
