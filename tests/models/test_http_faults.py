"""The HTTP generator's faults, each against a small loopback server: a refusal of an overlong
prompt read as the context it names, a wrong key that ends a run, a request in flight cut by
``abort``, and credentials written into the URL that are used but never shown (a slow identity
probe: tests/models/test_models_http.py)."""

from __future__ import annotations

import base64
import hashlib
import threading
import time

import pytest
from testkit.openai_server import fake_openai_server

from models.base import ContextOverflow, ModelError, ModelUnusable, SamplingParams
from models.endpoints import parse_spec, without_credentials
from models.http.generator import (HttpGenerator, HttpStatusError, HttpTransportError,
                                   context_refusal)

ASK = [{"role": "user", "content": "Is Paris in France?"}]


@pytest.mark.parametrize("body, said", [
    ("This model's maximum context length is 2048 tokens. However, you requested 2379 tokens "
     "(2315 in the messages, 64 in the completion). Please reduce the length of the messages "
     "or completion.", (2048, 2315)),                                   # OpenAI, vLLM
    ('{"error": {"message": "This model\'s maximum context length is 512 tokens, however you '
     'requested 700 tokens (684 in your prompt; 16 for the completion)."}}', (512, 684)),
    ('{"error": {"code": 400, "message": "request (2379 tokens) exceeds the available context '
     'size (2048 tokens), try increasing it", "type": "exceed_context_size_error", '
     '"n_prompt_tokens": 2379, "n_ctx": 2048}}', (2048, 2379)),        # llama.cpp
    ('{"error": {"code": 400, "message": "the request exceeds the available context size, try '
     'increasing it", "type": "invalid_request_error"}}', (0, 0)),       # older llama.cpp
])
def test_context_refusals_are_read_in_each_servers_words(body, said):
    assert context_refusal(body) == said


def test_other_answers_are_not_context_refusals():
    for body in ('{"error": {"message": "model \'m\' not found"}}', "", "Bad Request"):
        assert context_refusal(body) is None


def test_a_refusal_is_a_context_overflow_and_a_wrong_key_makes_the_model_unusable():
    with fake_openai_server(models=("m",)) as state:
        state.n_ctx = 40
        gen = HttpGenerator(state.url, model="m", timeout=10)
        long = [{"role": "user", "content": "word " * 200}]
        with pytest.raises(ContextOverflow, match="maximum context length is 40") as refused:
            gen.generate(long, SamplingParams(max_tokens=8))
        assert refused.value.context_length == 40 and refused.value.prompt_tokens > 200
        assert not isinstance(refused.value, ModelUnusable)
        state.n_ctx = 0
        for status in (401, 403):
            state.faults = [status]
            with pytest.raises(ModelUnusable, match=f"HTTP {status}"):
                gen.generate(ASK)
        state.faults = [404, 400]          # any other 4xx: that item's error, not the model's
        for status in (404, 400):
            with pytest.raises(HttpStatusError) as plain:
                gen.generate(ASK)
            assert plain.value.status == status and not isinstance(plain.value, ModelUnusable)


def test_a_context_learned_is_what_prompts_are_fitted_to():
    with fake_openai_server(models=("m",)) as state:
        gen = HttpGenerator(state.url, model="m", context_length=4096)
        assert gen.n_ctx == 4096
        gen.learn_context(2048)
        assert gen.n_ctx == 2048 and gen.endpoint["context_length"] == 2048
        assert gen.context_key == f"{state.url}#m"


def test_abort_cuts_a_request_waiting_on_a_slow_server():
    with fake_openai_server(models=("m",)) as state:
        gen = HttpGenerator(state.url, model="m", timeout=600)
        gen.generate(ASK)                         # a kept-alive connection
        state.hold, asked = threading.Event(), len(state.seen)   # no answer until it is set
        errors: list[BaseException] = []

        def ask():
            try:
                gen.generate(ASK)
            except ModelError as exc:
                errors.append(exc)

        thread = threading.Thread(target=ask)
        thread.start()
        while len(state.seen) == asked:           # the request is at the server
            time.sleep(0.01)
        gen.abort()
        thread.join(timeout=60)
        assert not thread.is_alive()              # the server still holds its answer: cut
        assert len(errors) == 1 and isinstance(errors[0], HttpTransportError)
        state.hold.set()
        assert gen.generate(ASK).text == "I don't know"      # a new connection afterwards


def test_credentials_in_the_url_are_sent_but_never_shown():
    with fake_openai_server(models=("m",)) as state:
        clean = state.url
        secret = clean.replace("http://", "http://u:sk-secret@")
        gen = HttpGenerator(secret, model="m")
        assert gen.generate(ASK).text
        expected = "Basic " + base64.b64encode(b"u:sk-secret").decode()
        assert state.seen[-1] == ("/v1/chat/completions", expected)
        assert gen.base_url == clean and "sk-secret" not in repr(gen.endpoint)
        assert gen.identity.sha256 == hashlib.sha256((clean + "m").encode()).hexdigest()
        # a spec: the clean spec is what is shown and stored, and still reaches the server
        endpoint = parse_spec(secret + "#m")
        assert endpoint.spec == clean + "#m" and "sk-secret" not in repr(endpoint)
        assert "sk-secret" not in str(endpoint.as_json())
        assert without_credentials(secret + "#m") == clean + "#m"
        again = parse_spec(clean + "#m").open()
        assert again.generate(ASK).text and state.seen[-1][1] == expected
