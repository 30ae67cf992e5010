"""The spawning side: find or start the host of a model, and talk to it as a Generator.

``HostedGenerator.for_model(path_or_name, n_ctx=..., n_threads=...)`` looks the model up in the
registry (:mod:`models.host.registry`) under a file lock, so two processes racing start one
host; if none runs it starts ``python -m models.host serve`` with ``subprocess.Popen`` (its own
session, output to ``<data dir>/hosts/<name>-<key8>.log``, never to the terminal) and waits
for it to answer ``/health``. Each process using a host holds a lease on it; the host stops by
itself a few seconds after its last client process is gone, killed with -9 included.

Threads. The threads of all the user's live hosts on the machine, whatever their data dir,
stay within ``os.cpu_count()``: the user's thread budget (:mod:`models.host.budget`) shares the
cores fairly and each host's watchdog follows its share every half second: a new host starts
with its share and the others shrink to theirs (llama.cpp changes its thread count between
calls), and when a host stops the others grow back. When a new host would get less than it
asked, hosts of this data dir that no live process uses are stopped first. A host never gets
fewer than one thread, so with more live models than cores the total is the number of models
(documented in the README).

Death. When the host dies under a request, that request raises ``TransientModelError`` naming
the model and how the host ended (this process knows the exit status of a host it started;
for another process's host it says "host pid P exited"); the next request starts the host
again. A second death of the same generator's host raises ``ModelUnusable`` (raised outside
any ``except`` block, so no transport error in its context makes it look transient): the run
stops and can be resumed. Each death is kept for the run's log (``take_host_events``).

Every request carries the host's token from its registry entry (``Authorization: Bearer``).

Standard library only (http.client with one keep-alive connection per thread): this process
never imports llama_cpp.
"""

from __future__ import annotations

import atexit
import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from models import packaged
from models.base import (ContextOverflow, Generation, ModelError, ModelIdentity, ModelUnusable,
                         Prompt, ReplyError, SamplingParams, TransientModelError)
from models.host import budget, registry
from models.host.backend_choice import BACKEND_ENV, choose_backend  # noqa: F401 (re-exported)
from models.host.llama_server import DEFAULT_START_TIMEOUT_S, START_TIMEOUT_ENV

HOSTING_ENV = "MIRAGE_HOSTING"          # 'hosted' (default) or 'in-process'
REQUEST_TIMEOUT_S = 3600.0              # a long generation on a slow CPU; death is seen at once
LOG_ROTATE_BYTES = 8 << 20
_DEFAULT_MAX_CTX = 4096                 # models.llama.DEFAULT_MAX_CTX (not imported: llama_cpp)

_POPENS: dict[int, subprocess.Popen] = {}      # hosts this process started, by pid
_LEASED: dict[str, Path] = {}                  # this process's lease files, by key
_HOSTED: dict[tuple, "HostedGenerator"] = {}
_HOSTED_LOCK = threading.Lock()


def hosting_default() -> bool:
    """Whether ``load_generator`` hosts models by default ($MIRAGE_HOSTING)."""
    value = os.environ.get(HOSTING_ENV, "hosted").strip().lower()
    if value in ("", "hosted", "host"):
        return True
    if value in ("in-process", "inprocess", "local"):
        return False
    raise ModelError(f"${HOSTING_ENV}={value!r}: expected 'hosted' or 'in-process'")


@dataclass(frozen=True)
class HostSpec:
    path: Path
    name: str
    n_ctx: int
    threads: int | None       # as asked; the host gets what the budget allows
    backend: str
    key: str

    @classmethod
    def resolve(cls, name_or_path: str | os.PathLike, *, name: str | None = None,
                n_ctx: int | None = None, n_threads: int | None = None) -> "HostSpec":
        """The file, name and context of a packaged name or a GGUF path, as LlamaGenerator
        would load them, without importing llama_cpp."""
        from models.gguf import read_gguf

        path, packaged_name = packaged.resolve_model_path(name_or_path)
        if not path.exists():
            raise ModelError(f"{path}: no such file")
        name = name or packaged_name or path.stem
        trained = read_gguf(path).context_length
        if n_ctx is None:
            n_ctx = min(trained or _DEFAULT_MAX_CTX, _DEFAULT_MAX_CTX)
        backend = host_backend()
        key = registry.host_key(packaged.file_sha256(path), n_ctx, backend)
        return cls(path.resolve(), name, n_ctx, n_threads, backend, key)


def host_backend() -> str:
    """The backend a new host would use (:mod:`models.host.backend_choice`: which and why;
    also the run estimates')."""
    return choose_backend().backend


# ------------------------------------------------------------------ starting and stopping

def describe_exit(returncode: int | None, pid: int) -> str:
    if returncode is None:
        return f"(host pid {pid}) exited"
    if returncode < 0:
        try:
            signame = signal.Signals(-returncode).name
        except ValueError:
            signame = "?"
        return f"(pid {pid}) was killed by signal {-returncode} ({signame})"
    return f"(pid {pid}) exited with status {returncode}"


def _last_error(log: Path) -> str:
    try:
        lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log"
    errors = [ln for ln in lines if ln.startswith("mirage host: error:")]
    if errors:
        return errors[-1][len("mirage host: error:"):].strip()
    return lines[-1][-300:] if lines else "the log is empty"


def _request_json(entry: registry.HostEntry, method: str, path: str, body: dict | None,
                  timeout: float) -> dict:
    host, port = entry.url.split("//", 1)[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers=_headers(entry))
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def _get_json(entry: registry.HostEntry, path: str, timeout: float = 2.0) -> dict:
    return _request_json(entry, "GET", path, None, timeout)


def _headers(entry: registry.HostEntry) -> dict:
    """A request's headers: JSON, and the host's token (its registry entry)."""
    return {"Content-Type": "application/json", "Authorization": f"Bearer {entry.token}"}


def _pick_threads(wanted: int) -> int:
    """Threads for a new host wanting ``wanted``: its share of the user's budget (module
    docstring). Call with the registry lock held."""
    share = budget.share_of_new(wanted)
    idle = [e for e in registry.live_entries() if not e.clients()] if share < wanted else []
    for e in idle:
        stop_host(e)
    return budget.share_of_new(wanted) if idle else share


def _spawn(spec: HostSpec, threads: int, wanted: int) -> tuple[subprocess.Popen, Path]:
    log = registry.log_path(spec.name, spec.key)
    root = str(Path(__file__).resolve().parents[2])      # so the host imports these models
    env = {**os.environ, registry.DATA_DIR_ENV: str(registry.data_dir()),
           "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    cmd = [sys.executable, "-m", "models.host", "serve", "--model", str(spec.path),
           "--name", spec.name, "--n-ctx", str(spec.n_ctx), "--threads", str(threads),
           "--wanted-threads", str(wanted),
           "--backend", spec.backend, "--key", spec.key, "--log", str(log)]
    if log.exists() and log.stat().st_size > LOG_ROTATE_BYTES:
        os.replace(log, log.with_suffix(".log.1"))      # one old log kept, for a past death
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)
    _POPENS[proc.pid] = proc
    return proc, log


def _wait_ready(spec: HostSpec, proc: subprocess.Popen, log: Path) -> registry.HostEntry:
    timeout = float(os.environ.get(START_TIMEOUT_ENV) or DEFAULT_START_TIMEOUT_S)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            how = describe_exit(proc.returncode, proc.pid)
            raise ModelError(f"{spec.name}: the model host {how} while loading {spec.path}: "
                             f"{_last_error(log)} (log: {log})")
        entry = registry.read_entry(spec.key)
        if entry is not None and entry.pid == proc.pid:
            try:
                if _get_json(entry, "/health").get("status") == "ok":
                    return entry
            except (OSError, http.client.HTTPException, ValueError):
                pass
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise ModelError(f"{spec.name}: the model host did not answer within {timeout:g} s "
                     f"(log: {log})")


def find_or_start(spec: HostSpec) -> registry.HostEntry:
    """The live host of ``spec`` (started if none runs), with this process's lease on it."""
    with registry.registry_lock():
        _LEASED[spec.key] = registry.add_lease(spec.key)
        entry = registry.read_entry(spec.key)
        if entry is not None and entry.alive():
            return entry
        registry.remove_entry(spec.key)
        cores = budget.cores()
        wanted = max(1, min(spec.threads or cores, cores))
        proc, log = _spawn(spec, _pick_threads(wanted), wanted)
        entry = _wait_ready(spec, proc, log)
        budget.settled(timeout=3 * budget.POLL_S)       # the others have shrunk to their share
        return entry


def stop_host(entry: registry.HostEntry, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` s; the entry is removed either way."""
    try:
        os.kill(entry.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + timeout
    while entry.alive() and time.monotonic() < deadline:
        proc = _POPENS.get(entry.pid)
        if proc is not None:
            proc.poll()
        time.sleep(0.05)
    if entry.alive():
        os.kill(entry.pid, signal.SIGKILL)
    registry.remove_entry(entry.key, entry.pid)


def list_hosts() -> list[dict]:
    """The live hosts: model, url, pid, threads, clients (pids), log, ... (not the token)."""
    from dataclasses import asdict

    return [{**{k: v for k, v in asdict(e).items() if k != "token"}, "clients": e.clients()}
            for e in registry.live_entries()]


def stop_hosts(name: str | None = None) -> list[registry.HostEntry]:
    """Stop every live host, or those whose name or model path contains ``name``."""
    with registry.registry_lock():
        chosen = [e for e in registry.live_entries()
                  if name is None or name.lower() in e.name.lower() or name == e.model]
        for e in chosen:
            stop_host(e)
    return chosen


@atexit.register
def _drop_leases() -> None:
    for path in _LEASED.values():
        with contextlib.suppress(OSError):
            path.unlink()
    _LEASED.clear()


# ------------------------------------------------------------------ the generator

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
        self._connect()

    def _connect(self) -> registry.HostEntry:
        with self._lock:
            if self._entry is None:
                entry = find_or_start(self.spec)
                info = _get_json(entry, "/mirage/identity", timeout=60)
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

    def _gone(self, entry: registry.HostEntry, wait: float) -> str | None:
        """How the host ended, if it did (waiting up to ``wait`` s for a dying one)."""
        deadline = time.monotonic() + wait
        while True:
            proc = _POPENS.get(entry.pid)
            if proc is not None and proc.poll() is not None:
                return describe_exit(proc.returncode, entry.pid)
            if proc is None and not entry.alive():
                return describe_exit(None, entry.pid)
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    def _died(self, entry: registry.HostEntry, how: str) -> ModelError:
        message = f"{self.name}: the model host {how} (log: {entry.log})"
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
        headers = _headers(entry)
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
            how = self._gone(entry, wait=0 if attempt == 0 else 3.0)
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
        return parsed

    # ----------------------------------------------------------------- Generator

    def generate(self, prompt: Prompt, params: SamplingParams = SamplingParams()) -> Generation:
        out = self._call("POST", "/mirage/generate",
                         {"prompt": _wire(prompt), "params": params.key()})
        return Generation(**out)

    def label_probs(self, prompt: Prompt, labels: Sequence[str]) -> dict[str, float]:
        return self._call("POST", "/mirage/label_probs",
                          {"prompt": _wire(prompt), "labels": list(labels)})["probs"]

    def count_tokens(self, text: str) -> int:
        return int(self._call("POST", "/mirage/count_tokens", {"text": text})["tokens"])

    def render(self, prompt: Prompt) -> HostedRender:
        out = self._call("POST", "/mirage/render", {"prompt": _wire(prompt)})
        return HostedRender(out["text"], out["tokens"], out["mode"], tuple(out["stop"]))

    def close(self) -> None:
        """Forget this generator and drop this process's lease (the host stops after its grace
        period if no other process uses it)."""
        self._drop_connection()
        self._forget()
        with _HOSTED_LOCK:     # another generator of this host (same data dir, same key)?
            here = (str(registry.hosts_dir()), self.spec.key)
            if not any(k[:2] == here for k in _HOSTED):
                lease = _LEASED.pop(self.spec.key, None)
                if lease is not None:
                    with contextlib.suppress(OSError):
                        lease.unlink()

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
    if kind == "ValueError":
        return ValueError(message)
    if kind == "ReplyError":
        return ReplyError(message)
    return ModelError(message)
