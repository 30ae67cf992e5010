"""A tiny OpenAI-compatible server on loopback that misbehaves on purpose (and on a seed).

It speaks enough of the API for :class:`models.http.generator.HttpGenerator`: ``GET /v1/models``,
``POST /extras/tokenize/count`` and ``POST /v1/chat/completions``. Its answer is a pure
function of the prompt (the first words of the context, or "I don't know"), so a run against
it is deterministic whatever the order of requests.

Faults are decided per request by a hash of (seed, prompt, how many times this prompt was
asked): a share ``refuse`` of requests get their connection closed without an answer, ``error``
an HTTP 500, ``stall`` no answer for ``stall_s`` seconds (past the client's timeout). Setting
``faulty = False`` makes it behave; ``latency_s`` delays every good answer (to see requests
overlap); ``refusal = (content type, body)`` answers every chat request HTTP 400 with that body
(a server's own words on a bad request: tests/models/test_server_error_words.py). Used by
tests/engine/test_inflight_faults.py and benchmarks/bench_concurrency.py.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
import time
from collections import Counter


class FaultServer:
    def __init__(self, *, seed: int = 0, refuse: float = 0.10, error: float = 0.05,
                 stall: float = 0.05, stall_s: float = 2.0, latency_s: float = 0.0,
                 model: str = "fault-model"):
        self.seed, self.refuse, self.error, self.stall = seed, refuse, error, stall
        self.stall_s, self.latency_s, self.model = stall_s, latency_s, model
        self.faulty = True
        self.refusal: tuple[str, bytes] | None = None
        self.asked: Counter = Counter()       # prompt -> requests for it
        self.faults: Counter = Counter()      # 'refuse' | 'error' | 'stall' | 'ok'
        self.active = self.peak = 0           # chat requests being answered now, and the most
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "FaultServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def fault_for(self, prompt: str) -> str:
        with self._lock:
            self.asked[prompt] += 1
            nth = self.asked[prompt]
        if not self.faulty:
            return "ok"
        digest = hashlib.sha256(f"{self.seed}|{nth}|{prompt}".encode()).digest()
        roll = int.from_bytes(digest[:8], "big") / 2 ** 64
        for kind, share in (("refuse", self.refuse), ("error", self.error),
                            ("stall", self.stall)):
            if roll < share:
                return kind
            roll -= share
        return "ok"

    def count(self, kind: str) -> None:
        with self._lock:
            self.faults[kind] += 1

    def answering(self, delta: int) -> None:
        with self._lock:
            self.active += delta
            self.peak = max(self.peak, self.active)


def answer_for(messages: list[dict]) -> str:
    text = messages[-1]["content"] if messages else ""
    _, _, context = text.partition("Context : ")
    return context.lstrip("1. ")[:60] if context else "I don't know"


def _handler(server: FaultServer):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:      # quiet
            pass

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [
                    {"id": server.model, "object": "model", "meta": {"n_ctx": 8192}}]})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path == "/extras/tokenize/count":
                self._send(200, {"count": len(str(body.get("input", ""))) // 4})
                return
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": "not found"})
                return
            if server.refusal is not None:
                kind, data = server.refusal
                self.send_response(400)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            messages = body.get("messages") or []
            prompt = json.dumps(messages, sort_keys=True)
            kind = server.fault_for(prompt)
            server.count(kind)
            if kind == "refuse":
                self.close_connection = True
                return                      # the connection closes without an answer
            if kind == "error":
                self._send(500, {"error": "scripted server error"})
                return
            if kind == "stall":
                time.sleep(server.stall_s)
                self.close_connection = True
                return
            server.answering(1)
            try:
                if server.latency_s:
                    time.sleep(server.latency_s)
                text = answer_for(messages)
                tokens = len(prompt) // 4 + 1
                self._send(200, {
                    "id": "x", "object": "chat.completion", "model": server.model,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": tokens, "completion_tokens": 7,
                              "total_tokens": tokens + 7}})
            finally:
                server.answering(-1)

    return Handler
