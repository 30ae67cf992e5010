"""Real runs with the packaged SmolLM2 on the demo pool: a short run in process (prefix reuse,
the stored prompt, the header), Ctrl-C then ``kill -9`` then a rerun that repeats nothing, and
retrieved settings through the real retriever."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from testkit.paths import ROOT
from testkit.runs import SMOL, FakeGenerator, config, mirage_cli, run
from testkit.runs import cli_run as _cli

from engine.datasets.demo_pool import ensure_demo
from engine.metrics.answer import SCORER_VERSION
from engine.runs import execute, plan_named
from engine.runs.prompting import load_queries
from engine.store import Store


@pytest.mark.slow
def test_real_short_run_with_smollm2(demo):
    from models.llama.generator import LlamaGenerator

    smol = LlamaGenerator.load(SMOL, n_threads=1)
    cfg = config(generators=[SMOL], sample=2, max_tokens=16, name="real", threads=1)
    plan, summary = run(demo, cfg, {SMOL: smol})       # 2 queries x base, oracle, mixed
    assert summary.status == "done" and summary.generated == 6 and summary.errors == 0
    gens = demo.query("SELECT * FROM generations")
    assert len(gens) == 6
    assert all(g["completion_tokens"] <= 16 and g["device"] == "cpu" for g in gens)
    # prefix reuse is exact (issue 25): only whole PROMPT_BLOCK-token blocks of the previous
    # prompt are kept, so a warm evaluation runs a cold one's batches; the demo prompts share
    # less than a block, so here every token is evaluated (tests/models/test_models_llama.py
    # and test_determinism.py check reuse on prompts that share whole blocks)
    from models.llama.generator import PROMPT_BLOCK

    total = sum(g["prompt_tokens"] for g in gens)
    evaluated = sum(g["prompt_tokens_evaluated"] for g in gens)
    assert evaluated <= total
    assert all((g["prompt_tokens"] - g["prompt_tokens_evaluated"]) % PROMPT_BLOCK == 0
               for g in gens)
    # the stored prompt is exactly what the chat template renders
    first = plan.items[0]
    facts = load_queries(demo, [first.query_rowid])[first.query_rowid]
    from engine.prompts import get_template

    text = smol.render(get_template("mirage").messages(facts.text)).text
    assert demo.query("SELECT 1 FROM generations WHERE prompt = ?", (text,))
    assert text.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>")
    scores = demo.query("SELECT COUNT(DISTINCT generation_key) FROM scores "
                        "WHERE metric = 'em_loose'")[0][0]
    assert scores == 6
    header = json.loads(demo.query("SELECT header FROM runs")[0][0])
    model = header["models"][SMOL]
    assert model["quantization"] == "Q4_1" and len(model["sha256"]) == 64
    assert header["devices"] == ["cpu"] and header["packages"]["llama-cpp-python"]
    assert header["dataset"]["name"] == "demo" and header["scorer_version"] == SCORER_VERSION


def _start_run(db: Path, args: tuple, store: Store, until: int) -> subprocess.Popen:
    """Start ``run`` in a subprocess and return once ``until`` generations are stored."""
    proc = subprocess.Popen([*mirage_cli(), "run", "--db", str(db), *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while store.query("SELECT COUNT(*) FROM generations")[0][0] < until:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run ended or stalled before {until} generations: "
                        f"{proc.communicate()[1][-2000:]}")
        time.sleep(0.05)
    return proc


@pytest.mark.slow
def test_ctrl_c_then_kill_9_then_rerun_repeats_nothing(tmp_path):
    db = tmp_path / "w.db"
    store = Store(db)
    ensure_demo(store)
    args = ("--dataset", "demo", "--generator", SMOL, "--settings", "base,oracle",
            "--sample", "6", "--max-tokens", "12", "--threads", "1", "--name", "k")
    # Ctrl-C: the current item finishes, the run is marked cancelled
    proc = _start_run(db, args, store, until=2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "cancelled" in out and store.query("SELECT status FROM runs")[0][0] == "cancelled"
    cancelled = store.query("SELECT COUNT(*) FROM generations")[0][0]
    assert 2 <= cancelled < 12
    # kill -9: no chance to clean up; the status stays 'running'
    proc = _start_run(db, args, store, until=cancelled + 2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    before = {r["key"]: r["created_at"] for r in store.query(
        "SELECT key, created_at FROM generations")}
    assert cancelled + 2 <= len(before) < 12
    assert store.query("SELECT status FROM runs")[0][0] == "running"
    # the same command again: finishes, regenerating nothing that was stored
    done = _cli(*args, db=db)
    assert done.returncode == 0, done.stderr
    assert f"{12 - len(before)} generated, {len(before)} from the store" in done.stdout
    after = {r["key"]: r["created_at"] for r in store.query(
        "SELECT key, created_at FROM generations")}
    assert len(after) == 12 and all(after[k] == v for k, v in before.items())
    items = store.query("SELECT system, setting, query_rowid, generation_key FROM run_items")
    assert len(items) == 12 and len({tuple(r[:3]) for r in items}) == 12
    assert {r[3] for r in items} == set(after)
    assert store.query("SELECT status FROM runs")[0][0] == "done"
    assert store.query("SELECT COUNT(*) FROM scores WHERE metric = 'em_loose'")[0][0] == 12


@pytest.mark.slow
def test_retrieved_settings_through_the_real_retriever(demo):
    cfg = config(sample=3, settings=["base", "retrieved@1", "retrieved@3"],
                 retrievers=["minilm-l6-v2"], name="ret")
    plan, summary = run(demo, cfg)       # scripted generator, real MiniLM retriever
    assert summary.status == "done" and summary.generated + summary.cached == 9
    header = json.loads(demo.query("SELECT header FROM runs")[0][0])
    label = header["retrievers"]["minilm-l6-v2"]["label"]
    assert label.startswith("minilm-l6-v2#")
    assert header["retrievers"]["minilm-l6-v2"]["embedder"]["backend"] == \
        "sentence-transformers"
    for r in demo.query("SELECT setting, query_rowid, context FROM run_items "
                        "WHERE setting LIKE 'retrieved@%'"):
        k = int(r["setting"].split("@")[1].split(":")[0])
        assert r["setting"] == f"retrieved@{k}:{label}"
        ranked = json.loads(demo.query("SELECT ranked FROM retrievals WHERE retriever = ? AND "
                                       "query_rowid = ?", (label, r["query_rowid"]))[0][0])
        assert json.loads(r["context"]) == [c for c, _ in ranked[:k]]
    again = FakeGenerator()
    plan2 = plan_named(demo, cfg, check_models=False)
    assert plan2.retriever_labels["minilm-l6-v2"] == label       # read back from the header
    second = execute(demo, plan2, generators={"fake-gen": again})
    assert second.status == "done" and again.calls == [] and second.cached == 9
