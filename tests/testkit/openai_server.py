"""A tiny OpenAI-compatible server on loopback (the fake at the edge of the endpoint tests).

``/v1/models`` lists ``models``; ``/v1/chat/completions`` and ``/v1/completions`` answer
deterministically (a judge prompt gets ``A``, a prompt with context the first words after
``Context :``, anything else ``I don't know``); ``/props`` answers ``props`` when set (as
llama.cpp's llama-server does), else 404. ``faults`` is a list of statuses the next requests
get (with ``Retry-After: 2`` on a 429); ``delay`` slows every answer. Every Authorization
header and path it received is kept in ``seen``.
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
    seen: list[tuple[str, str | None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def reply(self, text: str) -> str:
        if "Answer A" in text:                 # a pairwise judge prompt
            return "[[A]]"
        _, sep, context = text.partition("Context : ")
        if sep:
            return " ".join(context.split()[1:5])
        return "I don't know"


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
            with state.lock:
                state.seen.append((self.path, self.headers.get("Authorization")))
                fault = state.faults.pop(0) if state.faults else None
            if state.delay:
                time.sleep(state.delay)
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
            elif self.path in ("/v1/chat/completions", "/v1/completions"):
                chat = self.path.endswith("chat/completions")
                prompt = ("\n".join(str(m.get("content")) for m in body.get("messages") or [])
                          if chat else str(body.get("prompt")))
                text = state.reply(prompt)
                choice = ({"message": {"role": "assistant", "content": text}} if chat
                          else {"text": text})
                self._send(200, {"id": "x", "model": body.get("model"), "choices": [
                    {"index": 0, "finish_reason": "stop", **choice}],
                    "usage": {"prompt_tokens": len(prompt) // 4,
                              "completion_tokens": len(text.split())}})
            else:
                self._send(404, None)

        do_GET = do_POST = _answer

        def log_message(self, *args) -> None:
            pass

    return Handler


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128         # many requests in flight (the default backlog is 5)


@contextmanager
def fake_openai_server(models=("fake-model",), props: dict | None = None):
    state = FakeState(list(models), props)
    httpd = _Server(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
