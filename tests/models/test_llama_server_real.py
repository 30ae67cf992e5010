"""The real llama.cpp ``llama-server`` as a model host's backend, whenever a binary is found as
the product finds it (``find_llama_server()``: $MIRAGE_LLAMA_SERVER, ``<data dir>/bin``, PATH;
looked up when this module is imported, before the suite points the data dir elsewhere).
Without one every test here is skipped, saying how to build it. Kept short (SmolLM2, a few
demo items, a few tokens): under a minute on 2 cores.

tests/models/test_llama_server_host.py tests everything around the backend against a stand-in
speaking the same HTTP API; this file checks that the real binary answers the same way."""

from __future__ import annotations

import os

import pytest
from testkit.hosts import client_process, dead_within
from testkit.runs import SMOL

from models.base import SamplingParams
from models.host import registry, supervisor
from models.host.llama_server import find_llama_server

BINARY = find_llama_server()
pytestmark = pytest.mark.skipif(
    BINARY is None, reason="the real llama-server is NOT tested: no binary found "
    "($MIRAGE_LLAMA_SERVER, <data dir>/bin/llama-server, PATH); build it with "
    "`make llama-server` (~15-20 min on 2 cores), then run this file again")

ASK = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]


@pytest.fixture
def real(tmp_path, monkeypatch):
    """Hosts in a fresh data dir on the llama-server backend, the binary found above."""
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MIRAGE_HOSTING", "hosted")
    monkeypatch.setenv("MIRAGE_HOST_GRACE", "1")
    monkeypatch.setenv("MIRAGE_HOST_BACKEND", "llama-server")
    monkeypatch.setenv("MIRAGE_LLAMA_SERVER", str(BINARY))
    yield
    pids = [e.pid for e in registry.live_entries()]
    supervisor.stop_hosts()
    assert dead_within(pids, 15), "a host survived the test"


def _children(pid: int) -> list[int]:
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            out += [int(c) for c in f.read().split()]
    return out


def test_generation_and_judge_label_probs_through_the_real_binary(real, store):
    from engine.datasets.demo_pool import ensure_demo
    from engine.runs import RunConfig, execute, plan_named
    from models.catalog import load_generator
    from models.judges import PairwiseJudge

    gen = load_generator(SMOL, n_threads=1)
    local = load_generator(SMOL, hosted=False, n_threads=1)
    assert gen.identity.backend == "llama-server" and gen.device == "llama-server"
    out = gen.generate(ASK, SamplingParams(max_tokens=8))
    assert out.text.strip() and out.prompt_tokens == len(local.render(ASK).tokens)
    assert out.completion_tokens >= 1 and out.finish_reason in ("stop", "length")
    again = gen.generate(ASK, SamplingParams(max_tokens=8))
    assert again.text == out.text and again.prompt_tokens_evaluated < out.prompt_tokens
    # label probabilities on a judge prompt, against the full distribution in process
    judge = PairwiseJudge(gen, "ragqa_arena_pairwise")
    fields = judge.fields("What is the capital of France?", "Paris.", "I don't know.",
                          reference="Paris")
    verdict = judge.verdict(fields)
    assert verdict.method == "logits" and sum(verdict.probs.values()) == pytest.approx(1.0)
    exact = PairwiseJudge(local, "ragqa_arena_pairwise").verdict(fields)
    assert verdict.label == exact.label
    assert verdict.probs == pytest.approx(exact.probs, abs=0.05)
    # a few demo items, the product's own run through the same host
    ensure_demo(store)
    plan = plan_named(store, RunConfig(dataset="demo", generators=[SMOL], settings=["oracle"],
                                     sample=3, max_tokens=8, threads=1, name="real"))
    summary = execute(store, plan)
    assert summary.status == "done", summary.message
    texts = [r[0] for r in store.query("SELECT text FROM generations")]
    assert len(texts) == 3 and any(t.strip() for t in texts)
    assert len(registry.live_entries()) == 1


def test_two_processes_share_one_real_llama_server(real):
    from models.catalog import load_generator

    gen = load_generator(SMOL, n_threads=1)
    other, pid, _ = client_process(SMOL)
    try:
        assert pid == gen.host.pid
        assert gen.host.clients() == sorted([os.getpid(), other.pid])
        (server,) = _children(gen.host.pid)                   # one llama-server for both
        assert os.path.samefile(f"/proc/{server}/exe", BINARY)
    finally:
        other.stdin.close()
        other.wait(30)
