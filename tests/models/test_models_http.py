"""HttpGenerator against a real llama.cpp OpenAI-compatible server (llama-cpp-python[server])
serving the packaged SmolLM2, plus tiny local servers that misbehave on purpose.

All traffic stays on 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import http.server
import math
import threading
import time

import pytest
from testkit.llama_server import free_port as _free_port
from testkit.llama_server import smollm2 as _smollm2
from testkit.llama_server import start_server as _start_server
from testkit.llama_server import stop as _stop
from testkit.llama_server import wait_ready as _wait_ready

from models.base import Generator, ModelError, SamplingParams
from models.http.generator import HttpGenerator
from models.judges import PairwiseJudge, PointwiseJudge

ASK = [{"role": "user", "content": "Is Paris in France? Answer yes or no."}]


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Two real servers, started together: the default one (logits_all on, so logprobs work)
    and one started with --logits_all False (it answers logprobs requests with HTTP 500)."""
    folder = tmp_path_factory.mktemp("llama_server")
    logs = folder / "server.log", folder / "server_nologits.log"
    started = [_start_server(logs[0]), _start_server(logs[1], "--logits_all", "False")]
    try:
        for (proc, url), log in zip(started, logs):
            _wait_ready(proc, url, log)
        yield started[0][1], started[1][1]
    finally:
        for proc, _ in started:
            _stop(proc)


@pytest.fixture(scope="module")
def server(servers):
    return servers[0]


@pytest.fixture(scope="module")
def chat(server):
    return HttpGenerator(server, api="chat", timeout=60)


@pytest.fixture(scope="module")
def completions(server):
    return HttpGenerator(server, api="completions", timeout=60)


# --------------------------------------------------------------------------- generation

def test_chat_generation_reports_usage_and_is_greedy_deterministic(chat):
    assert isinstance(chat, Generator) and chat.chat
    params = SamplingParams(max_tokens=8, seed=7)
    first = chat.generate(ASK, params)
    again = chat.generate(ASK, params)
    assert first.text and first.text == again.text
    assert first.prompt_tokens > 0 and 0 < first.completion_tokens <= 8
    assert first.prompt_tokens_evaluated == first.prompt_tokens  # server reports no cache hits
    assert first.device == "http" and first.seconds > 0
    assert first.finish_reason in ("stop", "length")
    assert first.extra["api"] == "chat" and first.extra["url"].endswith("/v1/chat/completions")
    # a bare string becomes one user message
    assert chat.generate(ASK[0]["content"], params).text == first.text


def test_completions_generation_and_stop_sequence(completions):
    assert not completions.chat
    prompt = "1, 2, 3, 4, 5,"
    free = completions.generate(prompt, SamplingParams(max_tokens=6))
    stopped = completions.generate(prompt, SamplingParams(max_tokens=6, stop=(",",)))
    assert "," in free.text and free.finish_reason == "length"
    assert stopped.text and "," not in stopped.text and stopped.finish_reason == "stop"
    assert free.text.startswith(stopped.text)
    assert stopped.prompt_text == prompt and stopped.prompt_tokens > 0
    assert stopped.completion_tokens > 0
    with pytest.raises(ValueError, match="text prompt"):
        completions.generate(ASK)


def test_identity_and_token_count(server, chat, completions):
    from llama_cpp import Llama

    listed = chat.model
    assert listed.endswith(".gguf")          # llama-cpp-python names a model by its path
    ident = chat.identity
    assert ident.name == listed == chat.name and ident.backend == "http"
    assert ident.sha256 == hashlib.sha256((server + "/v1" + listed).encode()).hexdigest()
    assert ident.quantization is None
    assert ident.context_length == 0          # llama-cpp-python's /v1/models reports none
    # the same endpoint spelled with /v1/ is the same identity; the API does not change it
    assert HttpGenerator(server + "/v1/").identity == ident == completions.identity

    text = "Hello world, this is a test of the token counter."
    vocab = Llama(_smollm2(), vocab_only=True, verbose=False)
    assert chat.count_tokens(text) == len(vocab.tokenize(text.encode(), special=True))


def test_a_spec_loads_the_real_server_through_the_catalog(server):
    from models.catalog import load_generator
    from models.check import check_model

    gen = load_generator(server + "/v1", n_threads=2)         # no #MODEL: the first listed
    assert isinstance(gen, HttpGenerator) and gen.model.endswith(".gguf")
    named = load_generator(f"{server}/v1#{gen.model}")
    assert named.identity == gen.identity
    # llama-cpp-python's server reports nothing but the id: a weak identity, said so
    assert gen.endpoint["identity"] == "weak: id only" and gen.endpoint["url"] == server + "/v1"
    result = check_model(f"{server}/v1#{gen.model}", max_tokens=4)
    assert result["ok"] and result["kind"] == "generator" and result["device"] == "http"
    assert 0 < result["completion_tokens"] <= 4


# --------------------------------------------------------------------------- label_probs

@pytest.mark.parametrize("api", ["chat", "completions"])
def test_label_probs_through_logprobs(server, api):
    gen = HttpGenerator(server, api=api)
    assert gen.supports_label_probs              # probed once ...
    assert gen._label_probs_n == 20               # ... and the server took top_logprobs=20
    prompt = ASK if api == "chat" else "Question: Is Paris in France?\nAnswer (yes or no):"
    probs = gen.label_probs(prompt, ["Yes", "No"])
    assert set(probs) == {"Yes", "No"}
    assert all(0.0 <= p <= 1.0 for p in probs.values())
    assert math.isclose(sum(probs.values()), 1.0, rel_tol=1e-9)
    assert gen.label_probs(prompt, ["Yes", "No"]) == probs   # greedy, one forward pass
    with pytest.raises(ModelError, match="none of the labels"):
        gen.label_probs(prompt, ["Zyzzogeton-unlikely"])


def test_server_without_logits_has_no_label_probs(servers):
    _, plain = servers
    for api in ("chat", "completions"):
        gen = HttpGenerator(plain, api=api)
        assert gen.supports_label_probs is False
        with pytest.raises(NotImplementedError, match="no logprobs"):
            gen.label_probs("Hi", ["A", "B"])
        assert gen.generate("Hi" if api == "completions" else ASK,
                            SamplingParams(max_tokens=2)).completion_tokens > 0


def test_judges_read_label_probabilities_over_http(server, servers):
    docs = ["Paris is the capital and largest city of France.", ("d2", "Lyon is in France.")]
    for api in ("chat", "completions"):
        gen = HttpGenerator(server, api=api)
        v = PairwiseJudge(gen).judge("What is the capital of France?",
                                     "The capital of France is Paris [1].", "It is Berlin.",
                                     documents=docs)
        assert v.method == "logits" and not v.parse_failed and v.raw is None
        assert set(v.probs) == {"A", "B", "tie"} and v.label == max(v.probs, key=v.probs.get)
        assert math.isclose(sum(v.probs.values()), 1.0, rel_tol=1e-9)
        assert v.template == "mirage_bench_pairwise@1" and v.judge == gen.identity.name
        s = PointwiseJudge(gen, "support_yes_no").judge(passage=docs[0],
                                                        sentence="Paris is in France.")
        assert s.method == "logits" and set(s.probs) == {"yes", "no"}
        assert math.isclose(sum(s.probs.values()), 1.0, rel_tol=1e-9)
    # a server without logprobs: the judge parses a short reply instead
    v = PairwiseJudge(HttpGenerator(servers[1], api="chat"), max_tokens=8).judge(
        "What is the capital of France?", "Paris [1].", "Berlin.", documents=docs)
    assert v.method == "parsed" and v.probs is None and isinstance(v.raw, str)
    assert v.parse_failed == (v.label is None)


# --------------------------------------------------------------------------- errors

def test_connection_refused_names_the_url():
    port = _free_port()                 # bound then released: nothing listens there
    gen = HttpGenerator(f"http://127.0.0.1:{port}", model="m", timeout=5)
    with pytest.raises(ModelError, match=rf"127\.0\.0\.1:{port}/v1/chat/completions.*refused"):
        gen.generate(ASK, SamplingParams(max_tokens=2))


def test_non_200_carries_status_and_body(server):
    gen = HttpGenerator(server + "/nope", model="m", timeout=30)
    with pytest.raises(ModelError, match=r"/nope/v1/chat/completions: HTTP 404.*Not Found"):
        gen.generate(ASK, SamplingParams(max_tokens=2))
    with pytest.raises(ModelError, match=r"HTTP 404"):
        _ = gen.identity


SLOW_RELEASED = threading.Event()
"""``/slow`` answers only once this is set (at the end of the module): no answer comes in time."""


class _Misbehaving(http.server.BaseHTTPRequestHandler):
    def _answer(self):
        if self.path.startswith("/slow"):
            SLOW_RELEASED.wait(120)
        if self.path == "/showslow/api/show":
            time.sleep(1.5)             # Ollama loading the model: past the probe's timeout
        body = {"/bad/v1/models": b"this is not { json",
                "/showslow/v1/models": b'{"data": [{"id": "m"}]}',
                "/bad/v1/chat/completions": b"<html>502 bad gateway</html>",
                "/shape/v1/chat/completions": b'{"object": "chat.completion", "choices": []}',
                "/list/v1/chat/completions": b"[1, 2, 3]"}.get(self.path, b"{}")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass                        # the impatient client has gone

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def bad_server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Misbehaving)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    SLOW_RELEASED.set()
    httpd.shutdown()
    httpd.server_close()


def test_malformed_json_and_unexpected_shapes(bad_server):
    with pytest.raises(ModelError, match=r"/bad/v1/models: malformed JSON.*not \{ json"):
        _ = HttpGenerator(bad_server + "/bad").identity
    with pytest.raises(ModelError, match=r"/bad/v1/chat/completions: malformed JSON"):
        HttpGenerator(bad_server + "/bad", model="m").generate(ASK)
    with pytest.raises(ModelError, match=r"/shape/v1/chat/completions: unexpected response"):
        HttpGenerator(bad_server + "/shape", model="m").generate(ASK)
    with pytest.raises(ModelError, match=r"expected a JSON object, got list"):
        HttpGenerator(bad_server + "/list", model="m").generate(ASK)
    with pytest.raises(ModelError, match=r"no models listed"):
        _ = HttpGenerator(bad_server + "/empty").identity


def test_a_slow_identity_probe_leaves_a_weak_identity_and_says_so(bad_server, monkeypatch):
    import models.http.generator

    monkeypatch.setattr(models.http.generator, "PROBE_TIMEOUT_S", 0.3)
    gen = HttpGenerator(bad_server + "/showslow", server="ollama")
    identity = gen.identity                 # no exception: the probe's timeout is noted
    url = bad_server + "/showslow/v1"
    assert identity.sha256 == hashlib.sha256((url + "m").encode()).hexdigest()
    assert gen.endpoint["identity"] == "weak: id only (/api/show: no answer within 0.3 s)"


def test_timeout_is_a_model_error(bad_server):
    gen = HttpGenerator(bad_server + "/slow", model="m", timeout=0.5)
    with pytest.raises(ModelError, match=r"/slow/v1/chat/completions: no answer within 0\.5 s"):
        gen.generate(ASK)                   # the server holds its answer until the module ends
    assert not SLOW_RELEASED.is_set()
