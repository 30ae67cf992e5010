"""The llama-server backend of the model host, against a stand-in that speaks llama-server's
HTTP API (tests/testkit/llama_server_standin.py): everything around the backend, without the
binary (tests/models/test_llama_server_real.py runs the real one when it is built).

The host is a real ``python -m models.host`` process started through the product path
(``load_generator`` → ``HostedGenerator`` → ``find_or_start``, backend chosen by
``$MIRAGE_HOST_BACKEND``, binary found through ``$MIRAGE_LLAMA_SERVER``); it loads SmolLM2's
vocabulary only and runs the stand-in as its child. Checked: the command line it starts
llama-server with, the health wait (slow, never, exit while loading), token-id prompts equal
to what LlamaGenerator renders in process, generations and label probabilities read from the
replies, the stand-in dying under a request, leases and a second process sharing the host."""

from __future__ import annotations

import math
import os
import time

import pytest
from testkit.llama_server_standin import (WORDS, host_on_standin, logged, reply_ids,
                                          stop_everything, top_logprobs)
from testkit.hosts import client_process, dead_within
from testkit.runs import SMOL

from engine.inflight import is_transient
from models.base import (ContextOverflow, ModelError, ReplyError, SamplingParams,
                         TransientModelError)
from models.catalog import load_generator
from models.host import registry
from models.host.client import HostedGenerator
from models.host.llama_server import LABEL_TOP_N

ASK = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
GREEDY = SamplingParams(max_tokens=5)


@pytest.fixture
def standin(tmp_path, monkeypatch):
    """``standin(**faults)``: hosts in a fresh data dir on the llama-server backend, whose
    binary is the stand-in (with those ``STANDIN_*`` faults); returns its log. At the end no
    host and no stand-in survives."""
    log = tmp_path / "standin.jsonl"
    yield lambda **faults: host_on_standin(monkeypatch, tmp_path, **faults)
    assert stop_everything(log) == [], "a host or a stand-in survived the test"


@pytest.fixture(scope="module")
def local():
    """SmolLM2 in process: what the host must render and count exactly alike."""
    return load_generator(SMOL, hosted=False, n_threads=1)


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_the_product_starts_a_host_on_llama_server_with_its_flags(standin, local):
    log = standin()
    gen = load_generator(SMOL, n_threads=1)
    assert isinstance(gen, HostedGenerator) and gen.backend == "llama-server"
    assert gen.identity.backend == "llama-server" and gen.identity.sha256 == local.identity.sha256
    assert gen.device == "llama-server" and gen.max_concurrency == 4       # -np, the slots
    (start,) = logged(log, "start")
    argv = start["argv"]
    assert _flag(argv, "-m") == str(gen.spec.path) and _flag(argv, "--host") == "127.0.0.1"
    assert int(_flag(argv, "-c")) == gen.n_ctx * 4 and _flag(argv, "-np") == "4"
    assert _flag(argv, "-t") == str(gen.n_threads) and _flag(argv, "-ngl") == "999"
    (entry,) = registry.live_entries()
    assert (entry.backend, entry.slots, entry.clients()) == ("llama-server", 4, [os.getpid()])
    assert "serving" in open(entry.log).read()


def test_token_id_prompts_and_replies_are_what_llama_generator_renders(standin, local):
    log = standin()
    gen = load_generator(SMOL, n_threads=1)
    rendered = local.render(ASK)
    out = gen.generate(ASK, GREEDY)
    (body,) = logged(log)
    assert body["prompt"] == rendered.tokens == gen.render(ASK).tokens   # ids, as in process
    assert body["cache_prompt"] is True and body["n_predict"] == 5 and body["seed"] == 0
    assert body["temperature"] == 0.0 and set(rendered.stop) <= set(body["stop"])
    expected = "".join(f" {w}" for w in _words(reply_ids(rendered.tokens, 5)))
    assert out.text == expected and out.finish_reason == "length"
    assert (out.prompt_tokens, out.completion_tokens) == (len(rendered.tokens), 5)
    assert out.prompt_text == rendered.text and out.device == "llama-server"
    assert out.extra["slots"] == 4 and out.extra["generation_tokens_per_s"] == 500.0
    assert gen.count_tokens("hello world") == local.count_tokens("hello world")
    # the same prompt again: the slot's cache leaves one token to evaluate
    assert gen.generate(ASK, GREEDY).prompt_tokens_evaluated == 1
    # a stop string cuts the reply before it, and it ends as 'stop'
    word = expected.split()[2]
    stopped = gen.generate(ASK, SamplingParams(max_tokens=5, stop=(word,)))
    assert stopped.text == expected[:expected.index(word)] and stopped.finish_reason == "stop"
    # the host checks the context itself, as in process
    with pytest.raises(ContextOverflow) as overflow:
        gen.generate("word " * 5000, GREEDY)
    assert overflow.value.context_length == gen.n_ctx == local.n_ctx
    assert len(logged(log)) == 3                     # the overflow never reached llama-server


def _words(ids):
    return [WORDS[t % len(WORDS)] for t in ids]


def test_label_probabilities_from_the_top_n_logprobs(standin, local):
    log = standin()
    gen = load_generator(SMOL, n_threads=1)
    assert gen.supports_label_probs
    labels = ["France", "capital"]                     # both in the prompt: among the top N
    probs = gen.label_probs(ASK, labels)
    body = logged(log)[-1]
    assert body["n_probs"] == LABEL_TOP_N and body["n_predict"] == 1
    top = {p["id"]: p["logprob"] for p in top_logprobs(local.render(ASK).tokens, LABEL_TOP_N)}
    mass = {label: sum(math.exp(top.get(t, -math.inf))
                       for t in local._label_token_ids(label)) for label in labels}
    total = sum(mass.values())
    assert total > 0 and probs == pytest.approx({k: v / total for k, v in mass.items()})
    with pytest.raises(ModelError, match=f"no label among llama-server's top {LABEL_TOP_N}"):
        gen.label_probs(ASK, ["zebra", "quartz"])              # neither in the prompt
    with pytest.raises(ValueError, match="at least one label"):
        gen.label_probs(ASK, [])
    with pytest.raises(ValueError, match="same token"):        # as in process
        gen.label_probs(ASK, ["Paris", "Paris is"])


def test_a_slow_start_is_waited_for(standin):
    standin(STANDIN_LOAD_S=1.5)
    started = time.monotonic()
    gen = load_generator(SMOL, n_threads=1)
    assert time.monotonic() - started >= 1.5 and gen.generate(ASK, GREEDY).text


def test_a_llama_server_that_exits_while_loading_is_named(standin, tmp_path, monkeypatch):
    standin(STANDIN_LOAD_FAILS=1)
    with pytest.raises(ModelError) as failed:
        load_generator(SMOL, n_threads=1)
    message = str(failed.value)
    assert SMOL in message and "llama-server exited with status 1 while loading" in message
    assert "(log: " in message and registry.live_entries() == []
    log = next(registry.hosts_dir().glob("*.log")).read_text()
    assert "failed to load model" in log              # llama-server's own words, in the log


def test_a_llama_server_that_never_becomes_healthy_times_out(standin, monkeypatch):
    standin(STANDIN_NEVER_READY=1)
    monkeypatch.setenv("MIRAGE_HOST_START_TIMEOUT", "12")   # llama-server gets 3 s
    with pytest.raises(ModelError) as failed:
        load_generator(SMOL, n_threads=1)
    # the host's wait for llama-server ended first, not the client's for the host ("the model
    # host did not answer within 12 s"): the message says which
    message = str(failed.value)
    assert SMOL in message and "llama-server did not become healthy within" in message
    assert "(log: " in message and registry.live_entries() == []


def test_a_bad_reply_is_a_reply_error_as_in_process(standin):
    standin(STANDIN_CONTENT="null")
    gen = load_generator(SMOL, n_threads=1)
    with pytest.raises(ReplyError, match="no text"):
        gen.generate(ASK, GREEDY)


def test_llama_server_dying_kills_the_host_restarted_once_then_stops(standin):
    log = standin(STANDIN_DIE_AFTER=1)
    gen = load_generator(SMOL, n_threads=1)
    first = gen.generate(ASK, GREEDY).text
    host = gen.host.pid
    with pytest.raises(TransientModelError) as died:        # the stand-in dies under it
        gen.generate(ASK, GREEDY)
    message = str(died.value)
    assert SMOL in message and "exited with status 70" in message and "log:" in message
    assert dead_within([host], 5) and dead_within([logged(log, "start")[0]["pid"]], 5)
    host_log = next(registry.hosts_dir().glob("*.log")).read_text()
    assert "mirage host: error: llama-server exited with status 1" in host_log
    assert gen.generate(ASK, GREEDY).text == first           # restarted: a new host, same reply
    assert gen.host.pid != host and len(logged(log, "start")) == 2
    with pytest.raises(ModelError) as again:
        gen.generate(ASK, GREEDY)
    assert "second time" in str(again.value) and not is_transient(again.value)
    events = gen.take_host_events()
    assert len(events) == 2 and "restarted" in events[0] and "the run stops" in events[1]


def test_a_second_process_shares_the_host_which_goes_after_the_last_client(standin):
    log = standin()
    gen = load_generator(SMOL, n_threads=1)
    other, pid, text = client_process(SMOL)
    try:
        assert pid == gen.host.pid
        assert text == gen.generate("Hello", SamplingParams(max_tokens=2)).text
        assert len(logged(log, "start")) == 1                 # one llama-server for both
        assert gen.host.clients() == sorted([os.getpid(), other.pid])
        host, server = gen.host.pid, logged(log, "start")[0]["pid"]
        gen.close()                                            # this process lets go first
        time.sleep(2)                                          # past the grace: other holds it
        assert registry.pid_alive(host) and registry.pid_alive(server)
        other.stdin.close()
        other.wait(30)
        assert dead_within([host, server], 15), "the host outlived its last client"
        assert registry.live_entries() == []
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()


@pytest.mark.parametrize("refuse, said", [
    ("n_probs must be at most 100", "n_probs must be at most 100 (invalid_request_error)"),
    ("text:slot unavailable: try later", "slot unavailable: try later")])
def test_a_refusal_carries_llama_servers_own_words(standin, refuse, said):
    standin(STANDIN_REFUSE=refuse)                 # 400 with a JSON error, or a plain body
    gen = load_generator(SMOL, n_threads=1)
    with pytest.raises(ModelError) as refused:
        gen.generate(ASK, GREEDY)
    message = str(refused.value)
    assert message.endswith(f"llama-server answered HTTP 400 Bad Request: {said}"), message
    assert "HTTP Error 400" not in message and not isinstance(refused.value, ContextOverflow)
