"""The model host process: one loaded GGUF model behind HTTP on 127.0.0.1.

    python -m models.host serve --model PATH [--name N] [--n-ctx N] [--threads N]
                                [--backend llama.cpp|llama-server] [--grace S]

It loads the model (``models.llama.generator.LlamaGenerator``, or ``LlamaServerGenerator`` for the
llama-server backend), listens on a free loopback port chosen by the OS, writes its registry
entry (:mod:`models.host.registry`) and serves:

- ``GET /health``; ``GET /v1/models``; ``POST /v1/completions`` and ``/v1/chat/completions``
  (OpenAI-compatible, no streaming and no logprobs: chat renders with the model's template
  through the generator, exactly as in process);
- ``POST /mirage/generate`` (``prompt``: text or messages, ``params``: SamplingParams fields →
  the whole Generation), ``/mirage/label_probs``, ``/mirage/count_tokens``,
  ``/mirage/cancel`` (``requests``: the ids a client gave its generate and label_probs
  requests in ``request``; below),
  ``/mirage/render``, ``/mirage/threads`` (the threads it wants; it runs with its share of the
  budget, below); ``GET /mirage/identity``
  and ``GET /mirage/modules`` (what this process imported, for a test).

It serves only its owner: every request must carry the random token of its registry entry
(``Authorization: Bearer TOKEN``; the entry is readable by its user only): 401 without it,
403 with another. The rest of a request is checked at the edge (:mod:`models.host.edge`: the
media type, the size, each field); a client's mistake (threads beyond the cores included) is a
400 naming it.

A watchdog thread ends the host (removing its registry entry) when no client lease names a
live process for ``--grace`` seconds, aborting the request in flight (within a block of the
prompt or a token: a killed client's long generation does not keep the host alive); SIGTERM
ends it the same way; SIGINT is ignored (a Ctrl-C in the terminal of the process that started
it must not kill a host that process is still using: it runs in its own session anyway).

Cancel. ``/mirage/cancel`` sets the cancel flag of each named request: a running one ends
within a prompt block or a token (``LlamaGenerator`` checks the flag there; llama-server's
connection is shut) and answers 409 ``RequestCancelled`` with the tokens it had generated;
one still waiting for the model's lock ends as soon as it gets it, without evaluating
anything, and one not arrived yet (a cancel overtaking its request) is refused when it comes.
The model is free for the next request at once. Each cancel is a line in the host's log.

Threads: the host joins the user's thread budget (:mod:`models.host.budget`: every host of the
user on the machine, whatever the data dir) and its watchdog sets its threads to its share
every ``budget.POLL_S`` (shrinking when another host starts, growing back when one stops).

Imports: the standard library, numpy, llama_cpp and models.llama.generator only (no pandas, pyarrow,
sqlite_utils, torch or sklearn: a CUDA llama.cpp crashes beside them, llama-cpp-python
issue #1581).
"""

from __future__ import annotations

import argparse
import contextlib
import hmac
import os
import secrets
import signal
import sys
import threading
import time
from dataclasses import asdict
from http.server import ThreadingHTTPServer

from models.base import ModelError, RequestCancelled
from models.env_settings import env_seconds
from models.host import budget, registry
from models.host.edge import (Refused, checked_prompt, is_int, labels_of, make_handler,
                              request_id, request_ids, required_field, sampling_params,
                              thinking_mode)

GRACE_ENV = "MIRAGE_HOST_GRACE"         # models.env_settings: its range and default
EARLY_CANCELS = 1024                    # cancels kept for requests that have not come yet


class Host:
    """The served generator, its registry entry, and the watchdog."""

    def __init__(self, generator, entry: registry.HostEntry, grace: float):
        self.generator = generator
        self.entry = entry
        self.grace = grace
        self.server: ThreadingHTTPServer | None = None
        self.stopping = threading.Event()
        self.budget: budget.BudgetEntry | None = None       # set once it serves
        self._threads_lock = threading.Lock()       # the watchdog and /mirage/threads
        self._requests: dict[str, threading.Event] = {}     # request id -> its cancel flag
        self._early: dict[str, None] = {}                   # cancelled before they came
        self._requests_lock = threading.Lock()

    # ----------------------------------------------------------------- API bodies

    def identity(self) -> dict:
        g = self.generator
        return {"identity": asdict(g.identity), "name": g.name, "chat": g.chat,
                "supports_label_probs": g.supports_label_probs, "n_ctx": g.n_ctx,
                "device": g.device, "threads": g.n_threads, "pid": os.getpid(),
                "backend": self.entry.backend, "slots": self.entry.slots}

    def set_threads(self, n) -> dict:
        """``/mirage/threads``: the threads this host wants; it runs with its share of the
        budget (at most that)."""
        cores = os.cpu_count() or 1
        if not is_int(n) or not 1 <= n <= cores:
            raise ValueError(f"'threads' must be an integer from 1 to {cores}, the cores of "
                             f"this machine (got {n!r:.40})")
        with self._threads_lock:
            if self.budget is not None:
                self.budget = budget.with_threads(self.budget, self.budget.threads, wanted=n)
                n = budget.share_of(self.budget) if self.budget.adjustable else n
            self._apply_threads(n)
        return {"threads": n}

    def _apply_threads(self, n: int) -> None:
        if n != self.generator.n_threads:
            self.generator.set_threads(n) if hasattr(self.generator, "set_threads") \
                else _set_llama_threads(self.generator, n)
        self.entry.threads = n
        current = registry.read_entry(self.entry.key)
        if current is not None and current.pid == os.getpid():   # never another host's
            registry.write_entry(self.entry)
        if self.budget is not None:
            self.budget = budget.with_threads(self.budget, n)
            budget.join(self.budget)

    def follow_budget(self) -> None:
        """Run with this host's share of the user's thread budget."""
        with self._threads_lock:
            if self.budget is not None and not self.stopping.is_set():
                share = budget.current_share(self.budget)
                if share != self.generator.n_threads:
                    _log(f"threads {self.generator.n_threads} -> {share} (the thread budget)")
                    self._apply_threads(share)

    # ----------------------------------------------------------------- cancel

    @contextlib.contextmanager
    def cancellable(self, request: str | None):
        """The cancel flag of one request (None without an id: not cancellable), set already
        when its cancel came first."""
        if request is None:
            yield None
            return
        flag = threading.Event()
        with self._requests_lock:
            if request in self._early:
                del self._early[request]
                flag.set()
            self._requests[request] = flag
        try:
            yield flag
        finally:
            with self._requests_lock:
                if self._requests.get(request) is flag:
                    del self._requests[request]

    def cancel(self, ids: list[str]) -> dict:
        """``/mirage/cancel``: set the flag of each named request; one not here yet is
        remembered (the newest :data:`EARLY_CANCELS`), so it is refused when it comes."""
        running, early = [], []
        with self._requests_lock:
            for request in ids:
                flag = self._requests.get(request)
                if flag is not None:
                    flag.set()
                    running.append(request)
                else:
                    self._early[request] = None
                    early.append(request)
            while len(self._early) > EARLY_CANCELS:
                del self._early[next(iter(self._early))]
        _log(f"cancel: {len(running)} request(s) running or waiting, {len(early)} not here "
             "yet")
        return {"cancelled": running, "early": early}

    def cut(self, method, body: dict, **args):
        """``method`` (generate or label_probs) of the request in ``body``, cancellable by its
        id; a cancelled one is logged with the tokens it had generated."""
        request = request_id(body)
        with self.cancellable(request) as flag:
            try:
                return method(**args) if flag is None else method(**args, cancel=flag)
            except RequestCancelled as exc:
                _log(f"request {request} cancelled after {exc.completion_tokens} token(s)")
                raise

    def openai_completion(self, body: dict, chat: bool) -> dict:
        if body.get("stream"):
            raise ValueError("streaming is not supported by this host")
        params = sampling_params({
            "max_tokens": body.get("max_tokens") or 16,
            "temperature": body.get("temperature", 1.0), "top_p": body.get("top_p", 1.0),
            "top_k": body.get("top_k", 40), "seed": body.get("seed") or 0,
            "stop": body.get("stop") or ()})
        if chat and not isinstance(body.get("messages"), list):
            raise ValueError("'messages' must be a list of {role, content}")
        if not chat and not isinstance(body.get("prompt"), str):
            raise ValueError("'prompt' must be a string")
        prompt = checked_prompt(body["messages"] if chat else body["prompt"],
                                "messages" if chat else "prompt")
        g = self.generator.generate(prompt, params)
        message = {"role": "assistant", "content": g.text}
        if g.reasoning:                 # the thinking apart, as llama-server's deepseek format
            message["reasoning_content"] = g.reasoning
        choice = ({"index": 0, "message": message, "finish_reason": g.finish_reason} if chat
                  else {"index": 0, "text": g.text, "finish_reason": g.finish_reason,
                        "logprobs": None})
        usage = {"prompt_tokens": g.prompt_tokens, "completion_tokens": g.completion_tokens,
                 "total_tokens": g.prompt_tokens + g.completion_tokens}
        if g.reasoning_tokens:
            usage["completion_tokens_details"] = {"reasoning_tokens": g.reasoning_tokens}
        return {"id": f"mirage-{time.time_ns()}",
                "object": "chat.completion" if chat else "text_completion",
                "created": int(time.time()), "model": self.generator.name,
                "choices": [choice], "usage": usage}

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
        if not isinstance(body, dict):
            raise ValueError("the body must be a JSON object")
        posts = {
            "/v1/completions": lambda: self.openai_completion(body, chat=False),
            "/v1/chat/completions": lambda: self.openai_completion(body, chat=True),
            "/mirage/generate": lambda: asdict(self.cut(
                g.generate, body, prompt=checked_prompt(body.get("prompt")),
                params=sampling_params(body.get("params")))),
            "/mirage/label_probs": lambda: {"probs": self.cut(
                g.label_probs, body, prompt=checked_prompt(body.get("prompt")),
                labels=labels_of(body))},
            "/mirage/cancel": lambda: self.cancel(request_ids(body)),
            "/mirage/count_tokens": lambda: {"tokens": g.count_tokens(
                required_field(body, "text", str, "a string"))},
            "/mirage/render": lambda: _render_json(g.render(checked_prompt(body.get("prompt")),
                                                            thinking_mode(body))),
            "/mirage/threads": lambda: self.set_threads(body.get("threads")),
        }
        return posts.get(path)

    def check_token(self, header: str | None) -> None:
        """Refused (401, 403) unless ``header`` is ``Bearer <this host's token>``."""
        if not header:
            raise Refused(401, "Unauthorized", "this model host needs its token "
                          "(Authorization: Bearer …, from its registry entry)")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
                given.strip().encode("utf-8", "replace"), self.entry.token.encode()):
            raise Refused(403, "Forbidden", "wrong token for this model host")

    # ----------------------------------------------------------------- lifetime

    def _say_idle_since(self, since: float | None) -> None:
        """Keep in the registry entry since when no client holds a lease (``idle_since``,
        None: in use), beside the grace period: ``models hosts`` and a quitting app say how
        long the host stays up."""
        if self.entry.extra.get("idle_since") == since:
            return
        self.entry.extra = {**self.entry.extra, "idle_since": since}
        with contextlib.suppress(OSError):
            current = registry.read_entry(self.entry.key)
            if current is not None and current.pid == os.getpid():   # never another host's
                registry.write_entry(self.entry)

    def watch(self, poll: float = 0.25) -> None:
        """End the host when no live client has held a lease for ``grace`` seconds."""
        last_client = last_budget = time.monotonic()
        while not self.stopping.wait(poll):
            if time.monotonic() - last_budget >= budget.POLL_S:
                last_budget = time.monotonic()
                try:
                    self.follow_budget()
                except OSError as exc:        # a budget folder gone bad: keep serving
                    _log(f"thread budget: {exc}")
            if registry.live_leases(self.entry.key):
                last_client = time.monotonic()
                self._say_idle_since(None)
            elif self.entry.extra.get("idle_since") is None and not self.stopping.is_set():
                self._say_idle_since(time.time() - (time.monotonic() - last_client))
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
        """Stop serving; the request in flight is aborted (it answers a ModelError)."""
        if self.stopping.is_set() and self.server is None:
            return
        self.stopping.set()
        if hasattr(self.generator, "stop_serving"):
            self.generator.stop_serving()
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


def _log(message: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} mirage host {os.getpid()}: {message}",
          file=sys.stderr, flush=True)


def load(args):
    if args.backend == "llama-server":
        from models.host.llama_server import LlamaServerGenerator

        return LlamaServerGenerator.start(args.model, n_ctx=args.n_ctx, n_threads=args.threads,
                                          slots=args.slots, name=args.name, log_file=args.log)
    from models.llama.generator import LlamaGenerator

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
        log=str(args.log or ""), slots=getattr(generator, "slots", 1),
        extra={"grace": args.grace, "idle_since": None}, token=secrets.token_urlsafe(32))
    host = Host(generator, entry, args.grace)
    server.RequestHandlerClass = make_handler(host, _log)
    host.server = server
    signal.signal(signal.SIGTERM, lambda *_: host.stop())
    registry.write_entry(entry)
    host.budget = budget.BudgetEntry(
        pid=os.getpid(), pid_started=entry.pid_started, since=time.time(),
        wanted=args.wanted_threads or generator.n_threads, threads=generator.n_threads,
        adjustable=args.backend != "llama-server",      # llama-server keeps its -t
        url=entry.url, name=generator.name, data_dir=str(registry.data_dir()))
    budget.join(host.budget)
    _log(f"serving {generator.name} at {entry.url}")
    threading.Thread(target=host.watch, name="watchdog", daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        registry.remove_entry(key, os.getpid())
        registry.remove_lease_folder(key)
        budget.leave(os.getpid())
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
    p.add_argument("--n-ctx", type=int, help="context length (default: as models/llama/generator.py decides)")
    p.add_argument("--threads", type=int, help="llama.cpp threads (default: all cores)")
    p.add_argument("--wanted-threads", type=int,
                   help="the threads it wants when the budget allows (default: --threads)")
    p.add_argument("--backend", choices=("llama.cpp", "llama-server"), default="llama.cpp")
    p.add_argument("--slots", type=int, default=4, help="llama-server parallel slots (-np)")
    p.add_argument("--key", help="the registry key the caller expects (checked)")
    p.add_argument("--log", help="the log file (llama.cpp's log goes there too)")
    p.add_argument("--grace", type=float,
                   default=env_seconds(GRACE_ENV),
                   help="seconds without a live client before the host stops")
    return serve(parser.parse_args(argv))
