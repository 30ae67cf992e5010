"""A server's refusal reaches the user in the server's own words (issue 36: llama-server's
refusals read as a bare "HTTP Error 400"): the message of a JSON error body (OpenAI's and
llama.cpp's ``{"error": {"message", "type"}}``, Ollama's ``{"error": "..."}``, FastAPI's
``{"detail": ...}``) or a plain body, on one line, control characters written out, bounded.
Through :class:`models.http.generator.HttpGenerator` against the fault server (llama-server behind a
model host: tests/models/test_llama_server_host.py; a run's stored errors and ``runs log``:
tests/cli/test_endpoints_cli.py; the Inspector: tests/tui/test_app_endpoints.py)."""

from __future__ import annotations

import json

import pytest
from testkit.fault_server import FaultServer
from testkit.runs import config, run

from models.http.generator import HttpGenerator, HttpStatusError
from models.http.errors import MESSAGE_LIMIT, server_message

ASK = [{"role": "user", "content": "Is Paris in France?"}]
LLAMA = {"error": {"code": 400, "message": "\"logit_bias\" must be an array or an object",
                   "type": "invalid_request_error"}}


@pytest.mark.parametrize("body, said", [
    (json.dumps(LLAMA), '"logit_bias" must be an array or an object (invalid_request_error)'),
    ('{"error": {"message": "Invalid value for temperature", "type": "invalid_request_error",'
     ' "param": "temperature"}}', "Invalid value for temperature (invalid_request_error)"),
    ('{"error": {"message": "bad_response_status_code: 400", "type": "bad_response_status_code"}}',
     "bad_response_status_code: 400"),                                 # the type says nothing new
    ('{"error": "model \\"qwen\\" not found, try pulling it first"}',
     'model "qwen" not found, try pulling it first'),                 # Ollama
    ('{"detail": "Not authenticated"}', "Not authenticated"),          # FastAPI
    ('{"object": "error", "message": "max_tokens must be at least 1"}',
     "max_tokens must be at least 1"),                                 # vLLM
    ("Bad request:\n  the prompt is empty\r\n", "Bad request: the prompt is empty"),
    ("<html><body><h1>400 Bad Request</h1>\n<p>nginx</p></body></html>",
     "400 Bad Request nginx"),
    ("", ""),
])
def test_the_servers_message_in_each_servers_format(body, said):
    assert server_message(body) == said
    assert server_message(body.encode()) == said


def test_the_message_is_shown_not_obeyed_and_bounded():
    said = server_message('{"error": {"message": "wipe\\u001b[2J \\u202eevil\\u0007 done"}}')
    assert said == "wipe\\x1b[2J \\u202eevil\\x07 done"
    assert not any(ord(ch) < 32 or 0x7f <= ord(ch) <= 0x9f for ch in said)
    long = server_message("word " * 1000)
    assert len(long) == MESSAGE_LIMIT and long.endswith("…")
    assert server_message(b"\xff\xfe bytes that are not UTF-8") == "�� bytes that are not UTF-8"


@pytest.mark.parametrize("kind, body, said", [
    ("application/json", json.dumps(LLAMA).encode(),
     '"logit_bias" must be an array or an object (invalid_request_error)'),
    ("text/plain", b"unsupported parameter: logit_bias\n", "unsupported parameter: logit_bias"),
])
def test_an_endpoints_400_carries_its_message(kind, body, said):
    with FaultServer(refuse=0, error=0, stall=0) as server:
        server.refusal = (kind, body)
        gen = HttpGenerator(server.url, timeout=10)
        with pytest.raises(HttpStatusError) as refused:
            gen.generate(ASK)
    message = str(refused.value)
    assert refused.value.status == 400
    assert f"HTTP 400 Bad Request: {said} (model fault-model)" in message, message
    assert '{"error"' not in message and "\n" not in message
