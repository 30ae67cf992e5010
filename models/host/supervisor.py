"""Host supervision: find or start the host process of a model, watch it, stop it; leases.

``find_or_start(HostSpec.resolve(path_or_name, n_ctx=..., n_threads=...))`` looks the model up
in the registry (:mod:`models.host.registry`) under a file lock, so two processes racing start
one host; if none runs it starts ``python -m models.host serve`` with ``subprocess.Popen`` (its
own session, output to ``<data dir>/hosts/<name>-<key8>.log``, never to the terminal) and waits
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

Death. This process knows the exit status of a host it started (``how_host_ended``); for
another process's host it says "host pid P exited". A host that native code crashed (SIGSEGV,
SIGILL, ...) while loading, or before its first answer, gets ``crash_advice``: the log line
that shows the cause and the command that rebuilds llama.cpp with safe flags
(:mod:`models.llama.build`). What a death means for a request is the client's
(:mod:`models.host.client`).

Every request carries the host's token from its registry entry (``Authorization: Bearer``).
Standard library only: this process never imports llama_cpp.
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
import time
from dataclasses import dataclass
from pathlib import Path

from models import packaged
from models.base import ModelError
from models.host import budget, registry
from models.host.backend_choice import choose_backend
from models.env_settings import env_choice, env_seconds
from models.host.llama_server import START_TIMEOUT_ENV
from models.host.server import GRACE_ENV

HOSTING_ENV = "MIRAGE_HOSTING"          # 'hosted' (default) or 'in-process'
LOG_ROTATE_BYTES = 8 << 20
_DEFAULT_MAX_CTX = 4096                 # models.llama.generator.DEFAULT_MAX_CTX (not imported: llama_cpp)

_POPENS: dict[int, subprocess.Popen] = {}      # hosts this process started, by pid
_LEASED: dict[str, Path] = {}                  # this process's lease files, by key


def hosting_default() -> bool:
    """Whether ``load_generator`` hosts models by default ($MIRAGE_HOSTING)."""
    return env_choice(HOSTING_ENV) in ("hosted", "host")


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


def crash_advice(entry_or_pid: "registry.HostEntry | int", log: Path | None = None,
                 returncode: int | None = None) -> str:
    """For a host this process started that native code crashed: the log's cause line and the
    command that rebuilds llama.cpp safely ("" when it was not such a crash)."""
    from models.llama.build import crash_advice as advice

    if returncode is None:
        pid = entry_or_pid if isinstance(entry_or_pid, int) else entry_or_pid.pid
        proc = _POPENS.get(pid)
        returncode = proc.returncode if proc is not None else None
    if log is None and not isinstance(entry_or_pid, int):
        log = Path(entry_or_pid.log)
    try:
        text = log.read_text(errors="replace")[-200_000:] if log else ""
    except OSError:
        text = ""
    return advice(returncode, text)


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
                     headers=host_headers(entry))
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def get_json(entry: registry.HostEntry, path: str, timeout: float = 2.0) -> dict:
    return _request_json(entry, "GET", path, None, timeout)


def host_headers(entry: registry.HostEntry) -> dict:
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


def _spawn(spec: HostSpec, threads: int, wanted: int, grace: float
           ) -> tuple[subprocess.Popen, Path]:
    log = registry.log_path(spec.name, spec.key)
    root = str(Path(__file__).resolve().parents[2])      # so the host imports these models
    env = {**os.environ, registry.DATA_DIR_ENV: str(registry.data_dir()),
           "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    cmd = [sys.executable, "-m", "models.host", "serve", "--model", str(spec.path),
           "--name", spec.name, "--n-ctx", str(spec.n_ctx), "--threads", str(threads),
           "--wanted-threads", str(wanted),
           "--backend", spec.backend, "--key", spec.key, "--log", str(log),
           "--grace", repr(grace)]
    if log.exists() and log.stat().st_size > LOG_ROTATE_BYTES:
        os.replace(log, log.with_suffix(".log.1"))      # one old log kept, for a past death
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)
    _POPENS[proc.pid] = proc
    return proc, log


def _wait_ready(spec: HostSpec, proc: subprocess.Popen, log: Path) -> registry.HostEntry:
    timeout = env_seconds(START_TIMEOUT_ENV)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            how = describe_exit(proc.returncode, proc.pid)
            advice = crash_advice(proc.pid, log, proc.returncode)
            raise ModelError(f"{spec.name}: the model host {how} while loading {spec.path}: "
                             f"{advice or _last_error(log)} (log: {log})")
        entry = registry.read_entry(spec.key)
        if entry is not None and entry.pid == proc.pid:
            try:
                if get_json(entry, "/health").get("status") == "ok":
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
    grace = env_seconds(GRACE_ENV)          # a bad value is refused before any host starts
    env_seconds(START_TIMEOUT_ENV)
    with registry.registry_lock():
        _LEASED[spec.key] = registry.add_lease(spec.key)
        entry = registry.read_entry(spec.key)
        if entry is not None and entry.alive():
            return entry
        registry.remove_entry(spec.key)
        cores = budget.cores()
        wanted = max(1, min(spec.threads or cores, cores))
        proc, log = _spawn(spec, _pick_threads(wanted), wanted, grace)
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
    """The live hosts: model, url, pid, threads, clients (pids), log, ... (not the token);
    ``grace_s``, the seconds it lives on once no client holds it, and ``grace_left_s``,
    what is left of them now (None: a client holds it, or a host that does not say)."""
    from dataclasses import asdict

    out = []
    for e in registry.live_entries():
        clients = e.clients()
        out.append({**{k: v for k, v in asdict(e).items() if k != "token"},
                    "clients": clients, "grace_s": host_grace(e),
                    "grace_left_s": None if clients else grace_left(e)})
    return out


def host_grace(entry: registry.HostEntry) -> float | None:
    """Seconds the host of ``entry`` lives on without a live client (its ``--grace``, kept
    in its entry; None for a host that does not say)."""
    grace = entry.extra.get("grace") if isinstance(entry.extra, dict) else None
    return float(grace) if isinstance(grace, (int, float)) else None


def grace_left(entry: registry.HostEntry, now: float | None = None) -> float | None:
    """Seconds the host of ``entry`` has left before it stops for want of a client: its grace
    from when it saw its last client go (``idle_since`` in its entry), the whole grace when
    it has not noticed yet; None when it does not say."""
    grace = host_grace(entry)
    if grace is None:
        return None
    since = entry.extra.get("idle_since")
    if not isinstance(since, (int, float)):
        return grace
    return max(0.0, grace - ((time.time() if now is None else now) - since))


def hosts_after_quitting() -> list[str]:
    """What becomes of the hosts this process holds once it ends, a line each: ``model host
    smollm2-135m-instruct stays up 10 s for other runs (pid 4242; mirage-tui models hosts
    --stop ends it now)``, or that other processes go on using it."""
    lines = []
    for key in list(_LEASED):
        entry = registry.read_entry(key)
        if entry is None or not entry.alive():
            continue
        others = [pid for pid in entry.clients() if pid != os.getpid()]
        if others:
            lines.append(f"model host {entry.name} goes on serving {len(others)} other "
                         f"process{'es' if len(others) > 1 else ''} (pid {entry.pid})")
            continue
        grace = host_grace(entry)
        grace = env_seconds(GRACE_ENV) if grace is None else grace   # an older host's: ours
        stays = f"stays up {grace:g} s"
        lines.append(f"model host {entry.name} {stays} for other runs (pid {entry.pid}; "
                     "mirage-tui models hosts --stop ends it now)")
    return lines


def stop_hosts(name: str | None = None) -> list[registry.HostEntry]:
    """Stop every live host, or those whose name or model path contains ``name``."""
    with registry.registry_lock():
        chosen = [e for e in registry.live_entries()
                  if name is None or name.lower() in e.name.lower() or name == e.model]
        for e in chosen:
            stop_host(e)
    return chosen


def how_host_ended(entry: registry.HostEntry, wait: float) -> str | None:
    """How the host of ``entry`` ended, if it did (waiting up to ``wait`` s for a dying one):
    its exit status when this process started it, else only that its pid is gone."""
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


def drop_lease(key: str) -> None:
    """Drop this process's lease on the host of ``key`` (it stops after its grace period if no
    other process holds one)."""
    lease = _LEASED.pop(key, None)
    if lease is not None:
        with contextlib.suppress(OSError):
            lease.unlink()


@atexit.register
def _drop_leases() -> None:
    for path in _LEASED.values():
        with contextlib.suppress(OSError):
            path.unlink()
    _LEASED.clear()
