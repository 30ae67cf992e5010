"""A tiny OpenAI-compatible server on loopback (the fake at the edge of the endpoint tests).

``/v1/models`` lists ``models``; ``/v1/chat/completions`` and ``/v1/completions`` answer
deterministically (a judge prompt gets ``A``, a prompt with context the first words after
``Context :``, anything else ``I don't know``); ``/props`` answers ``props`` when set (as
llama.cpp's llama-server does), else 404. ``faults`` is a list of what the next completions get:
a status (with ``Retry-After: 2`` on a 429), ``"garbage"`` (a 200 whose body is not JSON) or
``"empty"`` (a 200 with no ``choices``); ``delay`` slows every answer, or only the chat answers
after the first ``quick`` ones when ``quick`` is set; ``hold`` (an Event) holds those answers
until it is set (a client that ends meanwhile cut its request: no time is measured). ``peak``
is the most chat requests the server held at once; ``gather`` holds each chat answer until
``peak`` reaches it (30 s at most, then ``gather`` is 0). With ``n_ctx`` it is a server with that
context that reports none: a chat prompt of more tokens than that (``len(JSON of the
messages) // 4 + template_tokens``, with ``max_tokens``) is refused with HTTP 400 in OpenAI's
words (``refusal="openai"``) or llama.cpp's (``"llamacpp"``), counted in ``refused``.
``/extras/tokenize/count`` counts ``len(input) // 4``. Every Authorization header and path it
received is kept in ``seen``.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class FakeState:
    models: list[str]
    props: dict | None = None
    faults: list[int] = field(default_factory=list)
    delay: float = 0.0
    quick: int | None = None
    n_ctx: int = 0
    template_tokens: int = 0
    refusal: str = "openai"
    refused: int = 0
    chats: int = 0
    hold: threading.Event | None = None
    gather: int = 0
    inside: int = 0
    peak: int = 0
    seen: list[tuple[str, str | None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    gathered: threading.Condition = field(default_factory=threading.Condition)
    url: str = ""

    def reply(self, text: str) -> str:
        if "Answer A" in text:                 # a pairwise judge prompt
            return "[[A]]"
        _, sep, context = text.partition("Context : ")
        if sep:
            return " ".join(context.split()[1:5])
        return "I don't know"

    def completion(self, body: dict, prompt: str, chat: bool) -> dict:
        """The 200 body of a chat or text completion for ``prompt`` (a subclass shapes it)."""
        text = self.reply(prompt)
        choice = ({"message": {"role": "assistant", "content": text}} if chat
                  else {"text": text})
        return {"id": "x", "model": body.get("model"), "choices": [
            {"index": 0, "finish_reason": "stop", **choice}],
            "usage": {"prompt_tokens": len(prompt) // 4,
                      "completion_tokens": len(text.split())}}


def _refusal(state: FakeState, prompt_tokens: int, max_tokens: int) -> dict:
    if state.refusal == "llamacpp":
        return {"error": {"code": 400, "type": "exceed_context_size_error",
                          "message": f"request ({prompt_tokens} tokens) exceeds the available "
                                     f"context size ({state.n_ctx} tokens), try increasing it",
                          "n_prompt_tokens": prompt_tokens, "n_ctx": state.n_ctx}}
    return {"error": {"type": "invalid_request_error", "code": "context_length_exceeded",
                      "message": f"This model's maximum context length is {state.n_ctx} "
                                 f"tokens. However, you requested {prompt_tokens + max_tokens} "
                                 f"tokens ({prompt_tokens} in the messages, {max_tokens} in "
                                 "the completion). Please reduce the length of the messages "
                                 "or completion."}}


def _handler(state: FakeState):
    class Handler(http.server.BaseHTTPRequestHandler):
        def _send(self, status: int, body: dict | None, headers: dict | None = None) -> None:
            raw = json.dumps(body or {"error": {"message": "not here"}}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}") if length else {}
            chat = self.path in ("/v1/chat/completions", "/v1/completions")
            with state.lock:
                state.seen.append((self.path, self.headers.get("Authorization")))
                fault = state.faults.pop(0) if state.faults and chat else None
                state.chats += chat
                slow = state.quick is None or (chat and state.chats > state.quick)
            with state.gathered:
                state.inside += chat
                state.peak = max(state.peak, state.inside)
                state.gathered.notify_all()
                if chat and state.gather and state.peak < state.gather:
                    # a client that never has that many out gets its answers after 30 s
                    if not state.gathered.wait_for(lambda: state.peak >= state.gather, 30):
                        state.gather = 0
            try:
                self._reply(body, chat, fault, slow)
            finally:
                with state.gathered:
                    state.inside -= chat

        def _reply(self, body: dict, chat: bool, fault, slow: bool) -> None:
            if state.hold is not None and slow:
                state.hold.wait(600)
            elif state.delay and slow:
                time.sleep(state.delay)
            if fault in ("garbage", "empty"):
                raw = (b"<html>not json</html>" if fault == "garbage" else
                       json.dumps({"id": "x", "object": "chat.completion", "choices": []})
                       .encode())
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
                return
            if fault is not None:
                self._send(fault, {"error": {"message": f"fault {fault}"}},
                           {"Retry-After": "2"} if fault == 429 else None)
                return
            if self.path == "/v1/models":
                self._send(200, {"object": "list", "data": [
                    {"id": m, "object": "model", "owned_by": "fake",
                     "created": int(time.time())} for m in state.models]})
            elif self.path == "/props" and state.props is not None:
                self._send(200, state.props)
            elif self.path == "/extras/tokenize/count":
                self._send(200, {"count": len(str(body.get("input", ""))) // 4})
            elif self.path in ("/v1/chat/completions", "/v1/completions"):
                chat = self.path.endswith("chat/completions")
                if chat and state.n_ctx:
                    tokens = len(json.dumps(body.get("messages"), ensure_ascii=False,
                                            sort_keys=True)) // 4 + state.template_tokens
                    if tokens + int(body.get("max_tokens") or 0) > state.n_ctx:
                        with state.lock:
                            state.refused += 1
                        self._send(400, _refusal(state, tokens, int(body["max_tokens"])))
                        return
                prompt = ("\n".join(str(m.get("content")) for m in body.get("messages") or [])
                          if chat else str(body.get("prompt")))
                self._send(200, state.completion(body, prompt, chat))
            else:
                self._send(404, None)

        do_GET = do_POST = _answer

        def log_message(self, *args) -> None:
            pass

        def handle(self) -> None:
            try:
                super().handle()
            except OSError:
                pass                # the client went away (a cancelled run cut it)

    return Handler


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128         # many requests in flight (the default backlog is 5)


@contextmanager
def fake_openai_server(models=("fake-model",), props: dict | None = None,
                       state: FakeState | None = None):
    """The server on a free loopback port, answering as ``state`` (a FakeState of ``models``
    and ``props`` unless given)."""
    state = FakeState(list(models), props) if state is None else state
    httpd = _Server(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        if state.hold is not None:
            state.hold.set()            # the held answers go (to clients long gone)
        httpd.shutdown()
        httpd.server_close()
