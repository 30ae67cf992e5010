"""The client side: a model's host process as a Generator (``HostedGenerator``).

``HostedGenerator.for_model(path_or_name, n_ctx=..., n_threads=...)`` finds or starts the
model's host (:mod:`models.host.supervisor`: processes, threads, leases) and talks to it over
``/mirage/*``.

Death. When the host dies under a request, that request raises ``TransientModelError`` naming
the model and how the host ended (``supervisor.how_host_ended``); the next request starts the
host again. A second death of the same generator's host raises ``ModelUnusable`` (raised
outside any ``except`` block, so no transport error in its context makes it look transient):
the run stops and can be resumed. Each death is kept for the run's log (``take_host_events``).
A host that native code crashed before it ever answered a request (llama.cpp built for a CPU
feature that crashes, such as AMX) says why and how to rebuild (``supervisor.crash_advice``).

Every request carries the host's token from its registry entry (``Authorization: Bearer``).

Cancel. Each ``generate`` and ``label_probs`` carries an id of its own; ``abort()`` (what the
engine calls when a job is cancelled or left early: :mod:`engine.inflight`) names every
request of this generator still out in one ``/mirage/cancel`` on a connection of its own. The
host sets their cancel flags, so each ends within a prompt block or a token and answers
``RequestCancelled`` (a transient error: the cancelling job drops it, another job sharing the
generator asks again), and the model is free for the next request at once.

Standard library only (http.client with one keep-alive connection per thread): this process
never imports llama_cpp.
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Sequence

from models.base import (ContextOverflow, Generation, ModelError, ModelIdentity, ModelUnusable,
                         Prompt, ReplyError, RequestCancelled, SamplingParams,
                         TransientModelError)
from models.host import registry
from models.reasoning import prompt_opens_thinking
from models.replies import apart
from models.host.supervisor import (HostSpec, crash_advice, drop_lease, find_or_start, get_json,
                                    host_headers, how_host_ended)

REQUEST_TIMEOUT_S = 3600.0              # a long generation on a slow CPU; death is seen at once
CANCEL_TIMEOUT_S = 5.0                  # a /mirage/cancel is answered at once by a live host

_HOSTED: dict[tuple, "HostedGenerator"] = {}
_ANSWERED: set[int] = set()             # host pids that answered a request of this process
_HOSTED_LOCK = threading.Lock()


@dataclass(frozen=True)
class HostedRender:
    text: str
    tokens: list[int]
    mode: str
    stop: tuple[str, ...]


class HostedGenerator:
    """A ``models.base.Generator`` whose model runs in a host process. Use ``for_model``."""

    @classmethod
    def for_model(cls, name_or_path: str | os.PathLike, *, name: str | None = None,
                  n_ctx: int | None = None, n_threads: int | None = None,
                  log_file=None) -> "HostedGenerator":
        """One instance per (file, n_ctx, backend, name) in this process, like
        ``LlamaGenerator.load``. ``log_file`` is ignored: a host logs to its own file."""
        spec = HostSpec.resolve(name_or_path, name=name, n_ctx=n_ctx, n_threads=n_threads)
        with _HOSTED_LOCK:
            cache_key = (str(registry.hosts_dir()), spec.key, spec.name)
            found = _HOSTED.get(cache_key)
            if found is None:
                found = _HOSTED[cache_key] = cls(spec)
                found._cache_key = cache_key
            return found

    def __init__(self, spec: HostSpec):
        self.spec = spec
        self.name = spec.name
        self.backend = spec.backend
        self._lock = threading.Lock()
        self._local = threading.local()
        self._entry: registry.HostEntry | None = None
        self._deaths = 0
        self._events: list[str] = []
        self._out: set[str] = set()         # ids of the requests out now (``abort``)
        self._connect()

    def _connect(self) -> registry.HostEntry:
        with self._lock:
            if self._entry is None:
                entry = find_or_start(self.spec)
                info = get_json(entry, "/mirage/identity", timeout=60)
                ident = dict(info["identity"], name=self.name)
                self._identity = ModelIdentity(**ident)
                self.chat = bool(info["chat"])
                self.supports_label_probs = bool(info["supports_label_probs"])
                self.n_ctx = int(info["n_ctx"])
                self.device = info["device"]
                self.n_threads = int(info["threads"])
                self._entry = entry
            return self._entry

    @property
    def host(self) -> registry.HostEntry:
        """The registry entry of the host serving this generator (url, pid, log, ...)."""
        return self._connect()

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    def take_host_events(self) -> list[str]:
        """What happened to the host since the last call (its deaths, one line each), for a
        run's log."""
        with self._lock:
            events, self._events = self._events, []
        return events

    @property
    def max_concurrency(self) -> int:
        """Requests worth having out at once (the engine's default ``--concurrency``): the
        host's parallel slots, 1 for our own host (it serves one request at a time), ``-np``
        for llama-server."""
        return max(1, int(getattr(self.host, "slots", 1) or 1))

    # ----------------------------------------------------------------- transport

    def _connection(self, entry: registry.HostEntry) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "url", None) != entry.url:
            if conn is not None:
                conn.close()
            host, port = entry.url.split("//", 1)[1].rsplit(":", 1)
            conn = http.client.HTTPConnection(host, int(port), timeout=REQUEST_TIMEOUT_S)
            self._local.conn, self._local.url = conn, entry.url
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def _died(self, entry: registry.HostEntry, how: str) -> ModelError:
        advice = "" if entry.pid in _ANSWERED else crash_advice(entry)
        message = f"{self.name}: the model host {how} (log: {entry.log})"
        if advice:
            message = f"{self.name}: the model host {how} before its first answer: {advice} " \
                      f"(log: {entry.log})"
        with self._lock:
            if self._entry is entry:
                self._entry = None
                self._deaths += 1
                self._events.append(message + ("; it is restarted" if self._deaths == 1 else
                                               "; a second death: the run stops"))
            deaths = self._deaths
        registry.remove_entry(entry.key, entry.pid)
        if deaths > 1:
            self._forget()
            return ModelUnusable(f"{message}; it died a second time, so this run stops "
                                 "(resume it to go on)")
        return TransientModelError(f"{message}; it is restarted for the next request")

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        entry = self._connect()
        data = None if body is None else json.dumps(body).encode("ascii")
        headers = host_headers(entry)
        for attempt in (0, 1):
            conn = self._connection(entry)
            try:
                conn.request(method, path, body=data, headers=headers)
                response = conn.getresponse()
                raw = response.read()
                break
            except (OSError, http.client.HTTPException) as exc:
                self._drop_connection()
                failure = f"{type(exc).__name__}: {exc}"
            # raised outside the except block: a death carries no transport error as its
            # context, so it is not taken for a transient failure (engine.inflight.is_transient
            # follows __context__) and a second death really stops the run
            how = how_host_ended(entry, wait=0 if attempt == 0 else 3.0)
            if how is not None:
                raise self._died(entry, how)
            if attempt == 1:
                raise TransientModelError(
                    f"{self.name}: the model host at {entry.url} did not answer "
                    f"({failure}) (log: {entry.log})")
        try:
            parsed = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ModelError(f"{self.name}: the model host at {entry.url} answered "
                             f"{path} with something that is not JSON: {raw[:200]!r}") from None
        if response.status != 200:
            raise _host_error(self.name, parsed, response.status)
        _ANSWERED.add(entry.pid)
        return parsed

    # ----------------------------------------------------------------- cancel

    @contextmanager
    def _request(self):
        """A new request id, known to :meth:`abort` while the request is out."""
        request = uuid.uuid4().hex
        with self._lock:
            self._out.add(request)
        try:
            yield request
        finally:
            with self._lock:
                self._out.discard(request)

    def abort(self) -> bool:
        """Cut every request of this generator still out (module docstring): one
        ``/mirage/cancel`` naming them. True when the host answered it; False with nothing
        out, or when the host did not answer (a dead host: its requests see the death)."""
        with self._lock:
            ids, entry = sorted(self._out), self._entry
        if not ids or entry is None:
            return False
        host, port = entry.url.split("//", 1)[1].rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=CANCEL_TIMEOUT_S)
        try:
            conn.request("POST", "/mirage/cancel", body=json.dumps({"requests": ids}).encode(
                "ascii"), headers=host_headers(entry))
            response = conn.getresponse()
            response.read()
            return response.status == 200
        except (OSError, http.client.HTTPException):
            return False
        finally:
            conn.close()

    # ----------------------------------------------------------------- Generator

    def generate(self, prompt: Prompt, params: SamplingParams = SamplingParams()) -> Generation:
        with self._request() as request:
            out = self._call("POST", "/mirage/generate", {
                "prompt": _wire(prompt), "params": params.key(), "request": request})
        return generation_from_host(out, self.name, self.count_tokens)

    def label_probs(self, prompt: Prompt, labels: Sequence[str]) -> dict[str, float]:
        with self._request() as request:
            return self._call("POST", "/mirage/label_probs", {
                "prompt": _wire(prompt), "labels": list(labels), "request": request})["probs"]

    def count_tokens(self, text: str) -> int:
        return int(self._call("POST", "/mirage/count_tokens", {"text": text})["tokens"])

    def render(self, prompt: Prompt, thinking: str = "auto") -> HostedRender:
        body = {"prompt": _wire(prompt)}
        if thinking != "auto":          # a request of no mode is the one it always was
            body["thinking"] = thinking
        out = self._call("POST", "/mirage/render", body)
        return HostedRender(out["text"], out["tokens"], out["mode"], tuple(out["stop"]))

    def close(self) -> None:
        """Forget this generator and drop this process's lease (the host stops after its grace
        period if no other process uses it)."""
        self._drop_connection()
        self._forget()
        with _HOSTED_LOCK:     # another generator of this host (same data dir, same key)?
            here = (str(registry.hosts_dir()), self.spec.key)
            if not any(k[:2] == here for k in _HOSTED):
                drop_lease(self.spec.key)

    def _forget(self) -> None:
        with _HOSTED_LOCK:
            key = getattr(self, "_cache_key", None)
            if key is not None and _HOSTED.get(key) is self:
                del _HOSTED[key]

    def __repr__(self) -> str:
        entry = self._entry
        where = f"{entry.url}, pid {entry.pid}" if entry else "no host"
        return f"HostedGenerator({self.name!r}, n_ctx={self.spec.n_ctx}, {where})"


def _wire(prompt: Prompt):
    return prompt if isinstance(prompt, str) else [dict(m) for m in prompt]


def _host_error(name: str, body: dict, status: int) -> Exception:
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ModelError(f"{name}: the model host answered HTTP {status}: {str(body)[:300]}")
    kind, message = error.get("type"), str(error.get("message"))
    if kind == "ContextOverflow":
        return ContextOverflow(message, prompt_tokens=int(error.get("prompt_tokens") or 0),
                               context_length=int(error.get("context_length") or 0))
    if kind == "RequestCancelled":
        return RequestCancelled(message, int(error.get("completion_tokens") or 0))
    if kind == "ValueError":
        return ValueError(message)
    if kind == "ReplyError":
        return ReplyError(message)
    return ModelError(message)


def generation_from_host(out: dict, model: str, count_tokens) -> Generation:
    """A host's ``/mirage/generate`` answer as a :class:`Generation`: the fields this version
    knows (a newer host's others are left out). A host started by an earlier version, still
    serving, sent its reply unsplit: it is split here (:func:`models.replies.apart`), so a
    reasoning model's thinking never reaches the answer whichever host served it."""
    known = {f.name for f in fields(Generation)}
    generation = Generation(**{k: v for k, v in out.items() if k in known})
    if "reasoning" in out:
        return generation
    return apart(generation, model, opened=prompt_opens_thinking(generation.prompt_text),
                 count_tokens=count_tokens)
