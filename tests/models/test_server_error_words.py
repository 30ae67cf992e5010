"""A server's refusal reaches the user in the server's own words (issue 36: llama-server's
refusals read as a bare "HTTP Error 400"): the message of a JSON error body (OpenAI's and
llama.cpp's ``{"error": {"message", "type"}}``, Ollama's ``{"error": "..."}``, FastAPI's
``{"detail": ...}``) or a plain body, on one line, control characters written out, bounded.
Through :class:`models.http.generator.HttpGenerator` against the fault server, and a run's stored errors
and ``runs log``, the Inspector (llama-server behind a model host:
tests/models/test_llama_server_host.py)."""

from __future__ import annotations

import json

import pytest
from testkit.fault_server import FaultServer
from testkit.runs import config, run

from mirage_tui import cli
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


def test_a_runs_errors_and_its_log_carry_the_servers_message(demo, capsys, tmp_path):
    said = "prompt contains a forbidden word \\x1b[31m (invalid_request_error)"
    body = {"error": {"message": "prompt contains a forbidden word \x1b[31m",
                      "type": "invalid_request_error"}}
    with FaultServer(refuse=0, error=0, stall=0) as server:
        server.refusal = ("application/json", json.dumps(body).encode())
        _, summary = run(demo, config(generators=["endpoint"], sample=2, settings=["base"],
                                      name="refused"),
                         {"endpoint": HttpGenerator(server.url, timeout=10)})
    assert summary.errors == 2
    errors = [r[0] for r in demo.query("SELECT error FROM run_items")]
    assert len(errors) == 2 and all(f"HTTP 400 Bad Request: {said}" in e for e in errors)
    code = cli.main(["runs", "log", "refused", "--db", str(demo.path)])
    out = capsys.readouterr().out
    logged = [line for line in out.splitlines() if "  error  " in line]
    assert code == 0 and len(logged) == 2 and all(said in line for line in logged), out


@pytest.mark.asyncio
async def test_the_inspector_shows_the_servers_message(demo):
    from textual.widgets import Static

    from mirage_tui.screens.inspector import InspectorScreen
    from testkit.tui import RecordingApp, open_screen, settle, text_of

    with FaultServer(refuse=0, error=0, stall=0) as server:
        server.refusal = ("text/plain", b"logit_bias is not supported by this server\n")
        run(demo, config(generators=["endpoint"], sample=1, settings=["base"], name="refused"),
            {"endpoint": HttpGenerator(server.url, timeout=10)})
    app = RecordingApp(demo.path)
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, InspectorScreen("refused"))
        await pilot.press("enter")
        await settle(pilot)
        panels = " ".join(text_of(p) for p in app.screen.query(".setting-panel").results(Static))
        assert "HTTP 400 Bad Request: logit_bias is not supported by this server" in panels, \
            panels
