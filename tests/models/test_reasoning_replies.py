"""An endpoint's reasoning reply, whatever its shape, comes back as the answer (the
generation's text) with the reasoning and its tokens apart: against a tiny stdlib stand-in
server on loopback that answers with the body each test gives."""

from __future__ import annotations

import http.server
import json
import threading
from contextlib import contextmanager

import pytest

from models.base import Generation, ModelUnusable, ReplyError, SamplingParams
from models.http.generator import HttpGenerator
from models.replies import apart

REASONING = "The question asks for the capital of France, which is Paris."


@contextmanager
def _serving(message: dict | None, *, finish: str = "stop", usage: dict | None = None,
             text: str | None = None):
    """A server whose every completion is ``message`` (chat) or ``text`` (completions)."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status: int, body: dict) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self):
            if self.path == "/v1/models":
                return self._send(200, {"data": [{"id": "thinker"}]})
            self._send(404, {"error": "no"})

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path not in ("/v1/chat/completions", "/v1/completions"):
                return self._send(404, {"error": "no"})
            choice = ({"index": 0, "message": message} if self.path.endswith("chat/completions")
                      else {"index": 0, "text": text})
            choice["finish_reason"] = finish
            self._send(200, {"id": "x", "model": "thinker", "choices": [choice],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 40,
                                       **(usage or {})}})

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _ask(url: str, api: str = "chat") -> Generation:
    generator = HttpGenerator(url, api=api, timeout=10)
    try:
        return generator.generate([{"role": "user", "content": "Capital of France?"}]
                                  if api == "chat" else "Capital of France?",
                                  SamplingParams(max_tokens=64))
    finally:
        generator.close()


@pytest.mark.parametrize("message", [
    {"role": "assistant", "content": "Paris"},
    {"role": "assistant", "content": f"<think>\n{REASONING}\n</think>\n\nParis"},
    {"role": "assistant", "content": "Paris", "reasoning_content": REASONING},
    {"role": "assistant", "content": "Paris", "reasoning": REASONING},
    {"role": "assistant", "content": f"{REASONING}\n</think>\n\nParis"},
    {"role": "assistant", "content": f"[THINK]{REASONING}[/THINK]Paris"},
    {"role": "assistant", "content": f"<|channel|>analysis<|message|>{REASONING}<|end|>"
                                     "<|start|>assistant<|channel|>final<|message|>Paris"},
])
def test_every_shape_gives_the_same_answer(message):
    with _serving(message) as url:
        got = _ask(url)
    assert got.text == "Paris"
    thinks = message["content"] != "Paris" or len(message) > 2
    assert got.reasoning == (REASONING if thinks else "")
    assert got.thinking_cut is False
    # no tokenizer endpoint here: the documented estimate, UTF-8 bytes / 3 rounded up
    assert got.reasoning_tokens == (-(-len(REASONING.encode()) // 3) if thinks else 0)


def test_the_servers_own_reasoning_token_count_is_taken():
    message = {"role": "assistant", "content": "Paris", "reasoning_content": REASONING}
    with _serving(message, usage={"completion_tokens_details": {"reasoning_tokens": 13}}) as url:
        got = _ask(url)
    assert (got.text, got.reasoning_tokens) == ("Paris", 13)


@pytest.mark.parametrize("message", [
    {"role": "assistant", "content": "", "reasoning_content": REASONING},
    {"role": "assistant", "content": None, "reasoning_content": REASONING},
    {"role": "assistant", "content": None, "reasoning": REASONING},
    {"role": "assistant", "content": f"<think>\n{REASONING}"},
])
def test_a_reply_cut_while_thinking_has_an_empty_answer(message):
    with _serving(message, finish="length") as url:
        got = _ask(url)
    assert (got.text, got.reasoning, got.thinking_cut, got.finish_reason) == \
        ("", REASONING, True, "length")


def test_a_plain_reply_cut_at_the_limit_is_not_cut_while_thinking():
    with _serving({"role": "assistant", "content": "Par"}, finish="length") as url:
        got = _ask(url)
    assert (got.text, got.reasoning, got.thinking_cut) == ("Par", "", False)


def test_completions_api_replies_are_split_too():
    with _serving(None, text=f"<think>{REASONING}</think> Paris") as url:
        got = _ask(url, api="completions")
    assert (got.text, got.reasoning) == ("Paris", REASONING)


def test_null_content_without_reasoning_is_still_a_reply_error():
    with _serving({"role": "assistant", "content": None}) as url:
        with pytest.raises(ReplyError, match="no text"):
            _ask(url)


def test_a_reasoning_field_that_is_not_text_is_a_reply_error():
    with _serving({"role": "assistant", "content": "Paris", "reasoning_content": 5}) as url:
        with pytest.raises(ReplyError, match="its reasoning"):
            _ask(url)


def test_apart_counts_with_the_tokenizer_and_leaves_plain_replies_alone(monkeypatch):
    plain = Generation("Paris", 3, 1, 3, 0.1, "stop", "cpu")
    assert apart(plain, "m", count_tokens=len) is plain
    thought = apart(Generation("<think>abc</think>Paris", 3, 9, 3, 0.1, "stop", "cpu"), "m",
                    count_tokens=len)
    assert (thought.text, thought.reasoning, thought.reasoning_tokens) == ("Paris", "abc", 3)
    opened = apart(Generation("abc", 3, 9, 3, 0.1, "length", "cpu"), "m", opened=True,
                   count_tokens=len)
    assert (opened.text, opened.reasoning, opened.thinking_cut) == ("", "abc", True)
    monkeypatch.setenv("MIRAGE_THINK_TAGS", "nonsense")
    with pytest.raises(ModelUnusable, match="MIRAGE_THINK_TAGS"):
        apart(plain, "m")
