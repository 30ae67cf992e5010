#!/usr/bin/env python3
"""A stand-in for llama.cpp's ``llama-server``: the part of its HTTP API that
:mod:`models.host.llama_server` uses, in the standard library only, so the backend's host can
be tested in CI without building the binary (~15 min on 2 cores).

    llama_server_standin.py -m MODEL --host 127.0.0.1 --port P -c N -np S -t T -ngl L

The shapes follow llama.cpp's server (the llama-cpp-python 0.3.36 sdist,
``vendor/llama.cpp/tools/server``): ``GET /health`` answers 503 ``{"error": {"code": 503,
"message": "Loading model", "type": "unavailable_error"}}`` while loading, then
``{"status": "ok"}`` (server-http.cpp, server-context.cpp); ``POST /completion`` takes a
prompt of token ids (used as they are, no BOS added: server-common.cpp
``tokenize_input_subprompt``) and answers ``content``, ``tokens_predicted``,
``tokens_evaluated``, ``stop_type`` (``eos`` | ``word`` | ``limit``), ``stopping_word``,
``tokens_cached``, ``timings`` (``cache_n``, ``prompt_n``, ``prompt_ms``,
``prompt_per_second``, ``predicted_n``, ``predicted_ms``, ``predicted_per_second``) and, with
``n_probs``, ``completion_probabilities``: one entry per generated token, ``{id, token, bytes,
logprob, top_logprobs: [{id, token, bytes, logprob}, ...]}`` (server-task.cpp). A prompt of
``-c / -np`` tokens or more is refused with 400 ``exceed_context_size_error``.

What it "generates" is a pure function of the prompt's ids. The next-token distribution
(``n_probs``) is over the prompt's distinct ids, each weighted by how often it occurs plus a
jitter hashed from the whole prompt; the reply's first token is its likeliest (greedy), token
k > 0 is ``ids[(sum(ids) + k) % len(ids)]``, each written ``" " + WORDS[id % len(WORDS)]``; a
reply ends with EOS after ``EOS_AFTER`` tokens, at ``n_predict`` (``limit``) or before a stop
string (``word``). With ``cache_prompt`` a slot keeps its last prompt and re-evaluates only
what differs (at least one token).

Faults come from the environment, so a model host passes them on to its child:
``STANDIN_LOAD_S`` (seconds of "Loading model", default 0.2), ``STANDIN_NEVER_READY=1``,
``STANDIN_LOAD_FAILS=1`` (exit 1 when the loading time is up, as on a model it cannot load),
``STANDIN_DIE_AFTER=N`` (after N answered completions the next one kills the process, exit 1,
without an answer), ``STANDIN_LOG=PATH`` (one JSON line per start and per completion body),
``STANDIN_CONTENT=JSON`` (every reply's ``content``, e.g. ``null``), ``STANDIN_REFUSE=TEXT``
(every completion refused with 400: ``TEXT`` as llama-server's JSON error message, or as a
plain-text body when it starts ``text:``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

WORDS = ["Paris", "is", "the", "answer", "A", "B", "yes", "no", "of", "capital", "France", "."]
EOS_AFTER = 24


def reply_ids(ids: list[int], n_predict: int) -> list[int]:
    """Greedy: the likeliest next token first (:func:`top_logprobs`), then the prompt's own."""
    first, start = top_logprobs(ids, 1)[0]["id"], sum(ids)
    out = [first] + [ids[(start + k) % len(ids)] for k in range(1, EOS_AFTER)]
    return out[:max(0, n_predict)]


def piece(token: int) -> str:
    return " " + WORDS[token % len(WORDS)]


def top_logprobs(ids: list[int], n: int) -> list[dict]:
    """The ``n`` likeliest next tokens: the prompt's distinct ids, by count plus a jitter."""
    salt = hashlib.sha256(json.dumps(ids).encode()).digest()
    score = {}
    for t in set(ids):
        jitter = int.from_bytes(hashlib.sha256(salt + str(t).encode()).digest()[:4], "big")
        score[t] = ids.count(t) + jitter / 2 ** 32
    top = max(score.values())
    norm = top + math.log(sum(math.exp(s - top) for s in score.values()))
    ranked = sorted(score, key=lambda t: (-score[t], t))[:n]
    return [{"id": t, "token": piece(t), "bytes": list(piece(t).encode()),
             "logprob": score[t] - norm} for t in ranked]


def completion(body: dict, state: "State") -> tuple[int, dict]:
    ids = body.get("prompt")
    if not (isinstance(ids, list) and ids and all(isinstance(t, int) and t >= 0 for t in ids)):
        return 400, _error(400, "this stand-in takes a non-empty list of token ids",
                           "invalid_request_error")
    if len(ids) >= state.slot_ctx:
        return 400, _error(400, f"request ({len(ids)} tokens) exceeds the available context "
                                f"size ({state.slot_ctx} tokens), try increasing it",
                           "exceed_context_size_error")
    n_predict = body.get("n_predict", -1)
    n_predict = state.slot_ctx - len(ids) if n_predict < 0 else n_predict
    out, text, stop_type, stopping = [], "", "limit", ""
    for t in reply_ids(ids, n_predict):
        text += piece(t)
        out.append(t)
        hit = [s for s in body.get("stop") or [] if s and s in text]
        if hit:
            text, stop_type, stopping = text[:text.index(hit[0])], "word", hit[0]
            break
    else:
        stop_type = "limit" if len(out) == n_predict else "eos"
    cached = state.reuse(ids) if body.get("cache_prompt", True) else 0
    evaluated = len(ids) - cached
    timings = {"cache_n": cached, "prompt_n": evaluated, "prompt_ms": evaluated * 0.5,
               "prompt_per_token_ms": 0.5, "prompt_per_second": 2000.0,
               "predicted_n": len(out), "predicted_ms": len(out) * 2.0,
               "predicted_per_token_ms": 2.0, "predicted_per_second": 500.0}
    answer = {"index": 0, "content": text, "tokens": [], "id_slot": 0, "stop": True,
              "model": state.model, "tokens_predicted": len(out), "tokens_evaluated": len(ids),
              "prompt": "", "has_new_line": False, "truncated": False, "stop_type": stop_type,
              "stopping_word": stopping, "tokens_cached": len(ids) + len(out) - 1,
              "timings": timings}
    n_probs = int(body.get("n_probs") or 0)
    if n_probs > 0 and out:
        first = top_logprobs(ids, n_probs)
        answer["completion_probabilities"] = [dict(first[0], top_logprobs=first)]
    if "STANDIN_CONTENT" in os.environ:            # a broken reply, as JSON ("null", ...)
        answer["content"] = json.loads(os.environ["STANDIN_CONTENT"])
    return 200, answer


def _error(code: int, message: str, kind: str) -> dict:
    return {"error": {"code": code, "message": message, "type": kind}}


class State:
    def __init__(self, args):
        self.model, self.slot_ctx = args.model, max(1, args.ctx // max(1, args.parallel))
        self.slots: list[list[int]] = [[] for _ in range(max(1, args.parallel))]
        self.ready_at = time.monotonic() + float(os.environ.get("STANDIN_LOAD_S", "0.2"))
        self.never_ready = os.environ.get("STANDIN_NEVER_READY") == "1"
        self.load_fails = os.environ.get("STANDIN_LOAD_FAILS") == "1"
        die = os.environ.get("STANDIN_DIE_AFTER")
        self.die_after = int(die) if die else None
        self.log = os.environ.get("STANDIN_LOG")
        self.answered = 0
        self.lock = threading.Lock()

    def ready(self) -> bool:
        if self.never_ready or time.monotonic() < self.ready_at:
            return False
        if self.load_fails:
            print(f"llama-server stand-in: error: failed to load model '{self.model}'",
                  file=sys.stderr, flush=True)
            os._exit(1)
        return True

    def reuse(self, ids: list[int]) -> int:
        """The prompt tokens a slot already holds (llama-server re-evaluates at least one)."""
        def common(a, b):
            n = 0
            while n < min(len(a), len(b)) and a[n] == b[n]:
                n += 1
            return n
        with self.lock:
            best = max(range(len(self.slots)), key=lambda i: common(self.slots[i], ids))
            shared = common(self.slots[best], ids)
            self.slots[best] = list(ids)
        return min(shared, len(ids) - 1)

    def record(self, entry: dict) -> None:
        if self.log:
            with self.lock, open(self.log, "a") as f:
                f.write(json.dumps(entry) + "\n")


def make_handler(state: State):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _refuse(self, said: str) -> None:
            if not said.startswith("text:"):
                self._send(400, _error(400, said, "invalid_request_error"))
                return
            data = said[len("text:"):].encode()
            self.send_response(400)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's names
            if not state.ready():
                self._send(503, _error(503, "Loading model", "unavailable_error"))
            elif self.path in ("/health", "/v1/health"):
                self._send(200, {"status": "ok"})
            else:
                self._send(404, _error(404, "File Not Found", "not_found_error"))

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            if not state.ready():
                self._send(503, _error(503, "Loading model", "unavailable_error"))
                return
            if self.path != "/completion":
                self._send(404, _error(404, "File Not Found", "not_found_error"))
                return
            state.record({"completion": body})
            refuse = os.environ.get("STANDIN_REFUSE")
            if refuse is not None:
                self._refuse(refuse)
                return
            with state.lock:
                if state.die_after is not None and state.answered >= state.die_after:
                    print("llama-server stand-in: dying as asked (STANDIN_DIE_AFTER)",
                          file=sys.stderr, flush=True)
                    os._exit(1)
            status, answer = completion(body, state)
            with state.lock:
                state.answered += status == 200
            self._send(status, answer)

    return Handler


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="llama-server")
    p.add_argument("-m", "--model", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("-c", "--ctx-size", dest="ctx", type=int, default=4096)
    p.add_argument("-np", "--parallel", type=int, default=1)
    p.add_argument("-t", "--threads", type=int, default=1)
    p.add_argument("-ngl", "--n-gpu-layers", type=int, default=0)
    args = p.parse_args(argv)
    if not Path(args.model).is_file():
        print(f"llama-server stand-in: error: failed to load model '{args.model}'",
              file=sys.stderr, flush=True)
        return 1
    state = State(args)
    if state.load_fails:          # it exits when loading ends, asked for its health or not
        threading.Timer(max(0.0, state.ready_at - time.monotonic()), state.ready).start()
    state.record({"start": {"argv": sys.argv[1:], "pid": os.getpid()}})
    server = ThreadingHTTPServer((args.host, args.port), make_handler(state))
    server.daemon_threads = True
    server.serve_forever(poll_interval=0.1)
    return 0


def install(folder: Path, **env: str | int | float) -> Path:
    """An executable ``folder/llama-server`` running this stand-in with the environment
    ``env`` (``STANDIN_*`` faults), for ``$MIRAGE_LLAMA_SERVER``."""
    folder.mkdir(parents=True, exist_ok=True)
    binary = folder / "llama-server"
    exports = "".join(f"export {k}='{v}'\n" for k, v in env.items())
    binary.write_text(f"#!/bin/sh\n{exports}exec '{sys.executable}' '{__file__}' \"$@\"\n")
    binary.chmod(0o755)
    return binary


def host_on_standin(monkeypatch, folder: Path, **faults) -> Path:
    """Model hosts in a fresh data dir under ``folder`` on the llama-server backend, whose
    binary is this stand-in with ``faults``; a one-second grace. Returns the stand-in's log."""
    log = folder / "standin.jsonl"
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(folder / "data"))
    monkeypatch.setenv("MIRAGE_HOSTING", "hosted")
    monkeypatch.setenv("MIRAGE_HOST_GRACE", "1")
    monkeypatch.setenv("MIRAGE_HOST_BACKEND", "llama-server")
    monkeypatch.setenv("MIRAGE_LLAMA_SERVER", str(install(folder / "bin", STANDIN_LOG=log,
                                                          **faults)))
    return log


def stop_everything(log: Path, seconds: float = 15.0) -> list[int]:
    """Stop every host; the hosts and stand-ins (of ``log``) still alive ``seconds`` later."""
    from models.host import registry, stop_hosts
    from testkit.hosts import dead_within

    pids = [e.pid for e in registry.live_entries()]
    stop_hosts()
    pids += [start["pid"] for start in logged(log, "start")]
    dead_within(pids, seconds)
    return [p for p in pids if registry.pid_alive(p)]


def logged(path: Path, kind: str = "completion") -> list:
    """What stand-ins wrote to a ``STANDIN_LOG``: the completion bodies, or each start's
    ``{argv, pid}``."""
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text().splitlines() if line]
    return [entry[kind] for entry in lines if kind in entry]


if __name__ == "__main__":
    sys.exit(main())
