"""The model host process: one loaded GGUF model behind HTTP on 127.0.0.1.

    python -m models.host serve --model PATH [--name N] [--n-ctx N] [--threads N]
                                [--backend llama.cpp|llama-server] [--grace S]

It loads the model (``models.llama.LlamaGenerator``, or ``LlamaServerGenerator`` for the
llama-server backend), listens on a free loopback port chosen by the OS, writes its registry
entry (:mod:`models.host.registry`) and serves:

- ``GET /health``; ``GET /v1/models``; ``POST /v1/completions`` and ``/v1/chat/completions``
  (OpenAI-compatible, no streaming and no logprobs: chat renders with the model's template
  through the generator, exactly as in process);
- ``POST /mirage/generate`` (``prompt``: text or messages, ``params``: SamplingParams fields →
  the whole Generation), ``/mirage/label_probs``, ``/mirage/count_tokens``,
  ``/mirage/render``, ``/mirage/threads`` (change the thread count); ``GET /mirage/identity``
  and ``GET /mirage/modules`` (what this process imported, for a test).

A watchdog thread ends the host (removing its registry entry) when no client lease names a
live process for ``--grace`` seconds; SIGTERM ends it the same way; SIGINT is ignored (a
Ctrl-C in the terminal of the process that started it must not kill a host that process is
still using: it runs in its own session anyway).

Imports: the standard library, numpy, llama_cpp and models.llama only (no pandas, pyarrow,
sqlite_utils, torch or sklearn: a CUDA llama.cpp crashes beside them, llama-cpp-python
issue #1581).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from dataclasses import asdict, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from models.base import ContextOverflow, ModelError, ReplyError, SamplingParams
from models.host import registry

_PARAM_FIELDS = {f.name for f in fields(SamplingParams)}
DEFAULT_GRACE_S = 10.0
GRACE_ENV = "MIRAGE_HOST_GRACE"


def sampling_params(raw: dict | None) -> SamplingParams:
    raw = dict(raw or {})
    unknown = set(raw) - _PARAM_FIELDS
    if unknown:
        raise ValueError(f"unknown sampling parameters: {', '.join(sorted(unknown))}")
    if "stop" in raw:
        stop = raw["stop"]
        raw["stop"] = (stop,) if isinstance(stop, str) else tuple(stop or ())
    return SamplingParams(**raw)


class Host:
    """The served generator, its registry entry, and the watchdog."""

    def __init__(self, generator, entry: registry.HostEntry, grace: float):
        self.generator = generator
        self.entry = entry
        self.grace = grace
        self.server: ThreadingHTTPServer | None = None
        self.stopping = threading.Event()

    # ----------------------------------------------------------------- API bodies

    def identity(self) -> dict:
        g = self.generator
        return {"identity": asdict(g.identity), "name": g.name, "chat": g.chat,
                "supports_label_probs": g.supports_label_probs, "n_ctx": g.n_ctx,
                "device": g.device, "threads": g.n_threads, "pid": os.getpid(),
                "backend": self.entry.backend, "slots": self.entry.slots}

    def set_threads(self, n: int) -> dict:
        n = int(n)
        if n < 1:
            raise ValueError(f"threads must be at least 1 (got {n})")
        self.generator.set_threads(n) if hasattr(self.generator, "set_threads") \
            else _set_llama_threads(self.generator, n)
        self.entry.threads = n
        registry.write_entry(self.entry)
        return {"threads": n}

    def openai_completion(self, body: dict, chat: bool) -> dict:
        if body.get("stream"):
            raise ValueError("streaming is not supported by this host")
        params = sampling_params({
            "max_tokens": int(body.get("max_tokens") or 16),
            "temperature": float(body.get("temperature", 1.0)),
            "top_p": float(body.get("top_p", 1.0)), "top_k": int(body.get("top_k", 40)),
            "seed": int(body.get("seed") or 0), "stop": body.get("stop") or ()})
        prompt = body.get("messages") if chat else body.get("prompt")
        if chat and not isinstance(prompt, list):
            raise ValueError("'messages' must be a list of {role, content}")
        if not chat and not isinstance(prompt, str):
            raise ValueError("'prompt' must be a string")
        g = self.generator.generate(prompt, params)
        choice = ({"index": 0, "message": {"role": "assistant", "content": g.text},
                   "finish_reason": g.finish_reason} if chat else
                  {"index": 0, "text": g.text, "finish_reason": g.finish_reason,
                   "logprobs": None})
        return {"id": f"mirage-{time.time_ns()}",
                "object": "chat.completion" if chat else "text_completion",
                "created": int(time.time()), "model": self.generator.name,
                "choices": [choice],
                "usage": {"prompt_tokens": g.prompt_tokens,
                          "completion_tokens": g.completion_tokens,
                          "total_tokens": g.prompt_tokens + g.completion_tokens}}

    def models(self) -> dict:
        ident = self.generator.identity
        return {"object": "list", "data": [{
            "id": self.generator.name, "object": "model", "owned_by": "mirage-tui",
            "meta": {"sha256": ident.sha256, "n_ctx": ident.context_length,
                     "quantization": ident.quantization, "backend": ident.backend}}]}

    def route(self, method: str, path: str, body: dict):
        g = self.generator
        if method == "GET":
            gets = {"/health": lambda: {"status": "ok", "pid": os.getpid(), "model": g.name},
                    "/v1/models": self.models, "/mirage/identity": self.identity,
                    "/mirage/modules": lambda: {"modules": sorted(sys.modules)}}
            return gets.get(path)
        posts = {
            "/v1/completions": lambda: self.openai_completion(body, chat=False),
            "/v1/chat/completions": lambda: self.openai_completion(body, chat=True),
            "/mirage/generate": lambda: asdict(g.generate(body["prompt"],
                                                          sampling_params(body.get("params")))),
            "/mirage/label_probs": lambda: {"probs": g.label_probs(body["prompt"],
                                                                   body["labels"])},
            "/mirage/count_tokens": lambda: {"tokens": g.count_tokens(body["text"])},
            "/mirage/render": lambda: _render_json(g.render(body["prompt"])),
            "/mirage/threads": lambda: self.set_threads(body["threads"]),
        }
        return posts.get(path)

    # ----------------------------------------------------------------- lifetime

    def watch(self, poll: float = 0.25) -> None:
        """End the host when no live client has held a lease for ``grace`` seconds."""
        last_client = time.monotonic()
        while not self.stopping.wait(poll):
            if registry.live_leases(self.entry.key):
                last_client = time.monotonic()
            elif time.monotonic() - last_client > self.grace:
                # under the registry lock, so a client that finds this entry has its lease
                # seen here first, and one that comes later finds no entry and starts a host
                with registry.registry_lock():
                    if registry.live_leases(self.entry.key):
                        continue
                    registry.remove_entry(self.entry.key, os.getpid())
                _log(f"no live client for {self.grace:g} s: stopping")
                self.stop()
                return
            current = registry.read_entry(self.entry.key)
            if current is not None and current.pid != os.getpid():
                _log(f"the registry names another host (pid {current.pid}): stopping")
                self.stop()
                return

    def stop(self) -> None:
        if self.stopping.is_set() and self.server is None:
            return
        self.stopping.set()
        server, self.server = self.server, None
        if server is not None:
            threading.Thread(target=server.shutdown, daemon=True).start()


def _render_json(rendered) -> dict:
    return {"text": rendered.text, "tokens": list(rendered.tokens), "mode": rendered.mode,
            "stop": list(rendered.stop)}


def _set_llama_threads(generator, n: int) -> None:
    import llama_cpp

    llama_cpp.llama_set_n_threads(generator._llm.ctx, n, n)
    generator.n_threads = n


def _error_body(exc: Exception) -> tuple[int, dict]:
    kind = type(exc).__name__
    body = {"type": kind, "message": str(exc)}
    if isinstance(exc, ContextOverflow):
        body.update(prompt_tokens=exc.prompt_tokens, context_length=exc.context_length)
        return 400, {"error": body}
    if isinstance(exc, (ValueError, KeyError, TypeError, ReplyError)):
        if isinstance(exc, (KeyError, TypeError)):
            body.update(type="ValueError", message=f"bad request: {kind}: {exc}")
        return 400, {"error": body}
    if not isinstance(exc, ModelError):
        body.update(type="ModelError", message=f"{kind}: {exc}")
    return 500, {"error": body}


def make_handler(host: Host):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"        # keep-alive: one connection per client thread

        def _answer(self, method: str) -> None:
            try:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else {}
                action = host.route(method, self.path.split("?", 1)[0], body)
                if action is None:
                    status, out = 404, {"error": {"type": "NotFound",
                                                  "message": f"no route {method} {self.path}"}}
                else:
                    status, out = 200, action()
            except Exception as exc:  # noqa: BLE001 - every failure goes back as JSON
                status, out = _error_body(exc)
                if status >= 500:
                    _log(f"{method} {self.path}: {out['error']['message']}")
            data = json.dumps(out).encode("ascii")   # escaped ASCII: a lone surrogate survives
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802 - http.server's names
            self._answer("GET")

        def do_POST(self):  # noqa: N802
            self._answer("POST")

        def log_message(self, format, *args):  # noqa: A002 - one line per request is noise
            pass

    return Handler


def _log(message: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} mirage host {os.getpid()}: {message}",
          file=sys.stderr, flush=True)


def load(args):
    if args.backend == "llama-server":
        from models.host.llama_server import LlamaServerGenerator

        return LlamaServerGenerator.start(args.model, n_ctx=args.n_ctx, n_threads=args.threads,
                                          slots=args.slots, name=args.name, log_file=args.log)
    from models.llama import LlamaGenerator

    return LlamaGenerator(args.model, n_ctx=args.n_ctx, n_threads=args.threads,
                          name=args.name, log_file=args.log)


def serve(args) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _log(f"loading {args.model} (n_ctx {args.n_ctx}, {args.threads} threads, "
         f"backend {args.backend})")
    try:
        generator = load(args)
        identity = generator.identity
    except ModelError as exc:
        print(f"mirage host: error: {exc}", file=sys.stderr, flush=True)
        return 3
    key = registry.host_key(identity.sha256, identity.context_length, identity.backend)
    if args.key and args.key != key:
        print(f"mirage host: error: {args.model}: served identity {key} differs from the "
              f"requested {args.key}", file=sys.stderr, flush=True)
        return 3
    server = ThreadingHTTPServer(("127.0.0.1", 0), None)
    server.daemon_threads = True
    entry = registry.HostEntry(
        key=key, name=generator.name, model=str(args.model),
        url=f"http://127.0.0.1:{server.server_address[1]}", pid=os.getpid(),
        pid_started=registry.process_start_time(os.getpid()), threads=generator.n_threads,
        n_ctx=identity.context_length, backend=identity.backend, started=time.time(),
        log=str(args.log or ""), slots=getattr(generator, "slots", 1))
    host = Host(generator, entry, args.grace)
    server.RequestHandlerClass = make_handler(host)
    host.server = server
    signal.signal(signal.SIGTERM, lambda *_: host.stop())
    registry.write_entry(entry)
    _log(f"serving {generator.name} at {entry.url}")
    threading.Thread(target=host.watch, name="watchdog", daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        registry.remove_entry(key, os.getpid())
        registry.remove_lease_folder(key)
        if hasattr(generator, "close"):
            generator.close()
        _log("stopped")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.host")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="serve one GGUF model on a free loopback port")
    p.add_argument("--model", required=True, help="the GGUF file")
    p.add_argument("--name", help="the model's name (default: the packaged name or file stem)")
    p.add_argument("--n-ctx", type=int, help="context length (default: as llama.py decides)")
    p.add_argument("--threads", type=int, help="llama.cpp threads (default: all cores)")
    p.add_argument("--backend", choices=("llama.cpp", "llama-server"), default="llama.cpp")
    p.add_argument("--slots", type=int, default=4, help="llama-server parallel slots (-np)")
    p.add_argument("--key", help="the registry key the caller expects (checked)")
    p.add_argument("--log", help="the log file (llama.cpp's log goes there too)")
    p.add_argument("--grace", type=float,
                   default=float(os.environ.get(GRACE_ENV) or DEFAULT_GRACE_S),
                   help="seconds without a live client before the host stops")
    return serve(parser.parse_args(argv))
