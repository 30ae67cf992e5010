"""Endpoint specs, the endpoints.toml config, discovery, and HttpGenerator's transport,
errors and identity, against a tiny OpenAI-compatible server on loopback
(:mod:`testkit.openai_server`); the real llama.cpp server is in test_models_http.py."""

from __future__ import annotations

import re
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from testkit.openai_server import fake_openai_server

from models import endpoints
from models.base import ModelError, SamplingParams, TransientModelError
from models.catalog import find_endpoint, load_generator
from models.endpoints import Endpoint, parse_spec
from models.http.generator import WEAK, HttpGenerator, HttpStatusError, HttpTransientStatusError

ASK = [{"role": "user", "content": "Hello?"}]
SMOL = "smollm2-135m-instruct"


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(endpoints.CONFIG_ENV, str(tmp_path))
    return tmp_path


def write_config(folder, text: str):
    path = folder / "endpoints.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- specs

def test_spec_forms():
    e = parse_spec("http://10.0.0.5:8000/v1#Qwen/Qwen2.5-7B-Instruct")
    assert (e.url, e.model, e.server) == ("http://10.0.0.5:8000/v1",
                                          "Qwen/Qwen2.5-7B-Instruct", None)
    assert parse_spec("https://box.example/").url == "https://box.example/v1"
    assert parse_spec("http://127.0.0.1:9/v1").model is None      # the first listed
    for spec, port in (("ollama:llama3.2:1b", 11434), ("lmstudio:qwen", 1234),
                       ("vllm:Qwen/Q", 8000), ("llamacpp:m", 8080)):
        e = parse_spec(spec)
        assert e.url == f"http://127.0.0.1:{port}/v1" and e.spec == spec
        assert e.model == spec.split(":", 1)[1] and e.server == spec.split(":")[0]
    assert parse_spec("ollama:").model is None
    with pytest.raises(ModelError, match="bad port"):
        parse_spec("http://host:99999999/v1")
    assert not endpoints.is_endpoint_spec(SMOL)
    assert not endpoints.is_endpoint_spec("~/models/x.gguf")
    assert find_endpoint(SMOL) is None and find_endpoint("/tmp/x.gguf") is None


def test_named_endpoints_from_the_config(config_dir, monkeypatch):
    write_config(config_dir, """
# my GPU box
[endpoints.mybox]
url = "http://10.0.0.5:8000/v1"
model = "Qwen/Qwen2.5-7B-Instruct"
api_key_env = "MYBOX_KEY"
api = "chat"
timeout = 120

[endpoints.base-model]
url = "http://127.0.0.1:8080"
api = "completions"
context_length = 4096
""")
    both = endpoints.configured()
    box = both["mybox"]
    assert (box.url, box.model, box.api_key_env, box.timeout, box.source) == (
        "http://10.0.0.5:8000/v1", "Qwen/Qwen2.5-7B-Instruct", "MYBOX_KEY", 120.0, "config")
    assert both["base-model"].url == "http://127.0.0.1:8080/v1"
    assert find_endpoint("mybox") == box == find_endpoint("endpoint:mybox")
    gen = load_generator("base-model", n_ctx=512, n_threads=2)   # llama.cpp options ignored
    assert isinstance(gen, HttpGenerator) and not gen.chat and gen.spec == "base-model"
    with pytest.raises(ModelError, match=r"no endpoint 'nope' in .*endpoints\.toml "
                                         r"\(configured: base-model, mybox\)"):
        find_endpoint("endpoint:nope")


def test_a_name_both_endpoint_and_catalog_model_is_refused(config_dir):
    write_config(config_dir, f'[endpoints.{SMOL}]\nurl = "http://127.0.0.1:9/v1"\n')
    with pytest.raises(ModelError, match=rf"is both endpoint '{SMOL}' of .*endpoints\.toml "
                                         rf"and catalog model '{SMOL}'"):
        load_generator(SMOL)
    assert find_endpoint(f"endpoint:{SMOL}").url == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize("text, line, problem", [
    ('[endpoints.a]\nurl = "http://x:1/v1"\nmodel = \n', 3, r"not valid TOML: .*line 3"),
    ('[endpoints.a]\nmodel = "m"\n', 1, r"\[endpoints\.a\]: url is required"),
    ('\n[endpoints.a]\nurl = "ftp://x/v1"\n', 3, r"\[endpoints\.a\]\.url: not an http"),
    ('[endpoints.a]\nurl = "http://x:1/v1"\n\n[endpoints.b]\nurl = "http://y:2"\n'
     'api_key = "sk-secret"\n', 6, r"\[endpoints\.b\]\.api_key: keys are not stored"),
    ('[endpoints.a]\nurl = "http://x:1/v1"\ntimeout = -1\n', 3, r"\.timeout: -1: a number"),
    ('[endpoints.a]\nurl = "http://x:1/v1"\napi = "embeddings"\n', 3,
     r"\.api: 'embeddings': 'chat' or 'completions'"),
    ('[endpoints.a]\nurl = "http://x:1/v1"\napi_key_env = "sk 123"\n', 3,
     r"\.api_key_env: the name of an environment variable"),
    ('[endpoints.a]\nurl = "http://x:1/v1"\nport = 3\n', 3, r"\.port: unknown key"),
])
def test_a_malformed_config_names_file_line_and_problem(config_dir, text, line, problem):
    path = write_config(config_dir, text)
    with pytest.raises(ModelError) as caught:
        endpoints.configured()
    message = str(caught.value)
    assert "\n" not in message and "sk-secret" not in message
    assert message.startswith(f"{path}:{line}: ") or (
        message.startswith(f"{path}: not valid TOML") and f"line {line}" in message), message
    assert re.search(problem, message), message
    # the catalog still answers its own names; an unknown name reports the config
    assert find_endpoint(SMOL) is None
    with pytest.raises(ModelError, match=str(path)):
        find_endpoint("qqxz")


# --------------------------------------------------------------------------- discovery

def test_discover_lists_running_servers_as_specs(monkeypatch):
    with fake_openai_server(["m1", "m2"]) as server:
        port = int(server.url.split(":")[2].split("/")[0])
        monkeypatch.setenv(endpoints.PORTS_ENV, f"{port},{_closed_port()}")
        # the ports are probed at once: each probe waits here until both have started
        together, probe = threading.Barrier(2, timeout=30), endpoints._probe
        monkeypatch.setattr(endpoints, "_probe",
                            lambda *args: (together.wait(), probe(*args))[1])
        found = endpoints.discover()
    assert [e.spec for e in found] == [f"{server.url}#m1", f"{server.url}#m2"]
    assert all(e.source == "discovered" and e.url == server.url for e in found)
    monkeypatch.setenv(endpoints.PORTS_ENV, "")
    assert endpoints.discover() == []


# --------------------------------------------------------------------------- transport

def test_the_api_key_comes_from_the_environment_at_request_time(monkeypatch):
    with fake_openai_server() as server:
        gen = Endpoint(spec="k", url=server.url, model="fake-model",
                       api_key_env="FAKE_KEY").open()
        monkeypatch.delenv("FAKE_KEY", raising=False)
        with pytest.raises(ModelError, match="environment variable FAKE_KEY .* is not set"):
            gen.generate(ASK)
        monkeypatch.setenv("FAKE_KEY", "sk-test-123")
        assert gen.generate(ASK).text == "I don't know"
        monkeypatch.setenv("FAKE_KEY", "sk-rotated")
        gen.generate(ASK)
        assert "sk-" not in repr(vars(gen)) and "sk-" not in str(gen.endpoint)
    assert [auth for path, auth in server.seen if "completions" in path] == [
        "Bearer sk-test-123", "Bearer sk-rotated"]


def test_many_threads_share_one_generator():
    with fake_openai_server() as server:
        server.gather = 8           # the first answers wait until 8 requests are in at once
        gen = HttpGenerator(server.url, timeout=60)
        with ThreadPoolExecutor(16) as pool:
            texts = list(pool.map(lambda i: gen.generate(
                [{"role": "user", "content": f"Context : [{i}] w{i} x y z"}],
                SamplingParams(max_tokens=4)).text, range(48)))
        listed = sum(path == "/v1/models" for path, _ in server.seen)
    assert texts == [f"w{i} x y z" for i in range(48)]
    assert server.peak >= 8                     # in flight together, not one at a time
    assert listed == 1                          # the lazy model lookup ran once


def test_failures_are_classified():
    with fake_openai_server() as server:
        gen = HttpGenerator(server.url, model="fake-model", timeout=5)
        server.faults = [429]
        with pytest.raises(HttpTransientStatusError) as caught:
            gen.generate(ASK)
        e = caught.value
        assert isinstance(e, TransientModelError) and isinstance(e, HttpStatusError)
        assert e.status == 429 and e.retry_after == 2.0
        assert "/v1/chat/completions: HTTP 429" in str(e) and "fake-model" in str(e)
        for status in (500, 502, 503):
            server.faults = [status]
            with pytest.raises(TransientModelError, match=f"HTTP {status}"):
                gen.generate(ASK)
        server.faults = [400]
        with pytest.raises(HttpStatusError) as caught:
            gen.generate(ASK)
        assert caught.value.status == 400 and not isinstance(caught.value, TransientModelError)
        assert gen.generate(ASK).text == "I don't know"       # the next one passes
        server.delay = 1.0
        slow = HttpGenerator(server.url, model="fake-model", timeout=0.2)
        with pytest.raises(TransientModelError, match=r"no answer within 0\.2 s"):
            slow.generate(ASK)
    refused = HttpGenerator(f"http://127.0.0.1:{_closed_port()}/v1", model="m", timeout=5)
    with pytest.raises(TransientModelError, match="connection refused"):
        refused.generate(ASK)
    unknown = HttpGenerator("http://no-such-host.invalid/v1", model="m", timeout=5)
    with pytest.raises(ModelError) as caught:
        unknown.generate(ASK)
    assert not isinstance(caught.value, TransientModelError)


# --------------------------------------------------------------------------- identity

def test_identity_hashes_what_the_server_reports():
    props = {"model_path": "/models/a.gguf", "build_info": "b1-abc",
             "default_generation_settings": {"n_ctx": 4096}, "chat_template": "{{x}}"}
    with fake_openai_server(["m"]) as server:
        weak = HttpGenerator(server.url)
        assert weak.endpoint["identity"] == WEAK and weak.identity.context_length == 0
        assert weak.n_ctx == 8192                     # assumed: the server reports none
        server.props = dict(props)
        first = HttpGenerator(server.url)
        assert first.endpoint["identity"] == "reported: props"
        assert first.identity.context_length == 4096 == first.n_ctx
        again = HttpGenerator(server.url)
        assert again.identity == first.identity != weak.identity
        server.props = {**props, "model_path": "/models/b.gguf"}   # another file, same id
        changed = HttpGenerator(server.url)
        assert changed.identity.name == first.identity.name == "m"
        assert changed.identity.key() != first.identity.key()
        server.props = {**props, "build_info": "b2-def"}
        assert HttpGenerator(server.url).identity.key() != first.identity.key()
        # the shortcut of another server kind does not probe llama.cpp's /props
        other = HttpGenerator(server.url, server="vllm")
        assert other.endpoint["identity"] == WEAK
