"""A server smaller than the context assumed for it: its refusal of an overlong prompt teaches
the run its context, the item is fitted again and asked once more, and the workspace keeps the
context for every later run. Against a stand-in that refuses in OpenAI's and llama.cpp's words
(tests/testkit/openai_server.py), and against a real ``llama_cpp.server`` started with a small
``--n_ctx``."""

from __future__ import annotations

import json

import pytest
from testkit.llama_server import start_server, stop, wait_ready
from testkit.openai_server import fake_openai_server
from testkit.runs import config, run

from engine.store.speeds import learned_context
from engine.runs.manage import run_log
from models.http.generator import DEFAULT_CONTEXT, HttpGenerator


def learned_rows(store) -> list[tuple]:
    return [tuple(r) for r in store.query("SELECT endpoint, context_length FROM "
                                          "endpoint_contexts")]


@pytest.mark.parametrize("refusal", ["openai", "llamacpp"])
def test_a_context_refusal_is_learned_kept_and_the_items_refitted(demo, refusal):
    with fake_openai_server(models=("narrow-endpoint",)) as server:
        server.n_ctx, server.refusal = 600, refusal
        server.template_tokens = 12           # the server counts more than the estimate
        gen = HttpGenerator(server.url, model="narrow-endpoint")
        assert gen.n_ctx == DEFAULT_CONTEXT   # the server reports no context
        cfg = config(generators=["narrow-endpoint"], settings=["base", "mixed"], sample=6,
                     concurrency=4, max_tokens=32)
        _, first = run(demo, cfg, {"narrow-endpoint": gen})
        assert first.status == "done", first.message
        assert first.errors == 0 and first.done == 12 and first.truncated > 0
        assert 1 <= server.refused <= 4 + 2     # the first prompts out, then hardly any
        assert learned_rows(demo) == [(f"{server.url}#narrow-endpoint", 600)]
        assert gen.n_ctx == 600
        log = run_log(demo, "t")
        assert any(line.kind == "context" and "context of 600 tokens" in line.message
                   for line in log)
        header = json.loads(demo.query("SELECT header FROM runs")[0][0])
        assert header["models"]["narrow-endpoint"]["endpoint"]["context_length"] == 600
        # a later run (another name, a new generator object) starts from the kept context
        refused = server.refused
        fresh = HttpGenerator(server.url, model="narrow-endpoint")
        _, second = run(demo, config(generators=["narrow-endpoint"], settings=["mixed"], sample=8,
                                     max_tokens=32, name="later"), {"narrow-endpoint": fresh})
        assert second.status == "done" and second.errors == 0
        assert fresh.n_ctx == 600 and server.refused == refused


def test_a_refusal_that_teaches_nothing_is_the_items_error_and_counts(demo):
    with fake_openai_server(models=("tiny-endpoint",)) as server:
        server.n_ctx = 30                      # not even the bare question fits
        gen = HttpGenerator(server.url, model="tiny-endpoint")
        _, summary = run(demo, config(generators=["tiny-endpoint"], settings=["base"], sample=6,
                                      max_tokens=8, max_errors=100), {"tiny-endpoint": gen})
        assert summary.status == "done" and summary.errors == 6
        errors = [r[0] for r in demo.query("SELECT error FROM run_items")]
        # the first refusal teaches 30 tokens; then the question alone does not fit
        assert all("the question alone is" in e or "ContextOverflow" in e for e in errors)
        assert learned_context(demo, f"{server.url}#tiny-endpoint") == 30


# --------------------------------------------------------------------------- the real server

@pytest.fixture(scope="module")
def small_server(tmp_path_factory):
    """llama-cpp-python's OpenAI-compatible server on SmolLM2 with a 512-token context (it
    reports none: the run assumes 8,192)."""
    log = tmp_path_factory.mktemp("llama_small") / "server.log"
    proc, url = start_server(log, n_ctx=512)
    try:
        wait_ready(proc, url, log)
        yield url
    finally:
        stop(proc)


def test_a_real_llama_cpp_server_with_a_small_context_is_learned_and_refitted(demo,
                                                                              small_server):
    gen = HttpGenerator(small_server, timeout=120)
    assert gen.identity.context_length == 0 and gen.n_ctx == DEFAULT_CONTEXT
    cfg = config(generators=["narrow-endpoint"], settings=["mixed"], sample=3, concurrency=2,
                 max_tokens=8)
    _, summary = run(demo, cfg, {"narrow-endpoint": gen})
    assert summary.status == "done", summary.message
    assert summary.errors == 0 and summary.done == 3 and summary.truncated == 3
    assert gen.n_ctx == 512
    assert learned_context(demo, gen.context_key) == 512
    stored = demo.query("SELECT COUNT(*) FROM run_items WHERE generation_key IS NOT NULL")
    assert stored[0][0] == 3
