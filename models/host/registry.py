"""The shared registry of model hosts in the data dir, and the leases of their clients.

    <data dir>/hosts/registry.lock          fcntl lock around "find or start" (one host per key)
    <data dir>/hosts/<key>.json             a live host: model, url, pid, threads, log, token
    <data dir>/hosts/<key>.clients/<pid>    one lease per client process (its start time inside)
    <data dir>/hosts/<name>-<key8>.log      the host's log (llama.cpp's included)

The key is the identity of what is served: the model file's sha256, the context length and the
backend, so two processes asking for the same model find the same host. A lease names a client
process; a lease whose process is gone (exited, killed with -9, its pid reused by another
process) does not count, so the host can tell when its last client is gone.

Only the user who owns the data dir may use a host: the data dir and ``hosts/`` are mode 0700,
an entry is written 0600, and it holds the host's random ``token``, which the host requires
on every request (``Authorization: Bearer TOKEN``). Another local user, or a web page in the
user's browser, can reach the port but not the token.

Standard library only: the host process imports this module too.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from stat import S_ISDIR
from typing import Iterator

DATA_DIR_ENV = "MIRAGE_DATA_DIR"


def user_path(variable: str, kind: str, leaf: str = "") -> Path:
    """``$VARIABLE`` (``~`` expanded) when it is set and not empty, else ``leaf`` in
    mirage-tui's user folder of ``kind`` as platformdirs places it (``"data"``:
    ``user_data_dir``, ``"config"``: ``user_config_dir``); the folder itself without ``leaf``.
    The one rule of where the workspace, the model hosts and the config files live."""
    value = os.environ.get(variable)
    if value:
        return Path(value).expanduser()
    import platformdirs

    folder = Path(getattr(platformdirs, f"user_{kind}_dir")("mirage-tui"))
    return folder / leaf if leaf else folder


def data_dir() -> Path:
    """``$MIRAGE_DATA_DIR`` if set (refused when it is no folder), else platformdirs' user
    data dir for mirage-tui."""
    folder = user_path(DATA_DIR_ENV, "data")
    return check_folder(folder, DATA_DIR_ENV) if os.environ.get(DATA_DIR_ENV) else folder


class FolderSettingError(OSError, ValueError):
    """A folder the program keeps its files in cannot be made or used (one line naming the
    variable that chose it, when one did). An OSError for the host's own handlers, a
    ValueError for the CLI's one-line errors (like ``io.UnsupportedOperation``)."""


def _folder_error(folder: Path, variable: str | None, exc: OSError) -> FolderSettingError:
    reason = {errno.EEXIST: "it is a file, not a folder",
              errno.ENOTDIR: "a part of it is a file, not a folder"}.get(
                  exc.errno, exc.strerror or str(exc))
    value = os.environ.get(variable) if variable else None
    if value:
        what = "it" if folder == Path(value).expanduser() else str(folder)
        return FolderSettingError(f"${variable}={value!r}: cannot use {what} as a folder "
                                  f"({reason}); set it to a folder, or unset it")
    return FolderSettingError(f"{folder}: cannot make this folder ({reason})")


def check_folder(folder: Path, variable: str | None = None) -> Path:
    """``folder`` when it is a folder or not there yet (nothing made); a
    :class:`FolderSettingError` naming ``variable`` when something else is there or the
    system refuses the name (too long)."""
    try:
        info = folder.stat()
    except FileNotFoundError:
        return folder
    except OSError as exc:
        raise _folder_error(folder, variable, exc) from None
    if not S_ISDIR(info.st_mode):
        raise _folder_error(folder, variable, FileExistsError(errno.EEXIST, "")) from None
    return folder


def make_folder(folder: Path, variable: str | None = None, parents: bool = True) -> Path:
    """``folder``, made 0700 when missing; a :class:`FolderSettingError` naming ``variable``
    (``$MIRAGE_DATA_DIR``, ...) when it is set and the folder cannot be made: a file in its
    place, a name too long, no permission."""
    try:
        folder.mkdir(mode=0o700, parents=parents, exist_ok=True)
    except OSError as exc:
        raise _folder_error(folder, variable, exc) from None
    return folder


def hosts_dir() -> Path:
    """``<data dir>/hosts``, created 0700 (the data dir too, when it is created here); a
    ``hosts`` folder of ours with a looser mode is tightened."""
    base = make_folder(data_dir(), DATA_DIR_ENV)
    folder = make_folder(base / "hosts", DATA_DIR_ENV, parents=False)
    info = folder.stat()
    if info.st_mode & 0o077 and info.st_uid == os.getuid():
        folder.chmod(0o700)
    return folder


def host_key(sha256: str, n_ctx: int, backend: str) -> str:
    return hashlib.sha256(f"{sha256}|{n_ctx}|{backend}".encode()).hexdigest()[:32]


@dataclass
class HostEntry:
    key: str
    name: str
    model: str                 # the GGUF path
    url: str                   # http://127.0.0.1:PORT
    pid: int
    pid_started: float | None  # the host process's start time (pid reuse guard)
    threads: int
    n_ctx: int
    backend: str               # 'llama.cpp' or 'llama-server'
    started: float             # time.time() when it began serving
    log: str
    slots: int = 1
    extra: dict = field(default_factory=dict)
    token: str = ""            # required on every request (module docstring)

    @property
    def path(self) -> Path:
        return hosts_dir() / f"{self.key}.json"

    def alive(self) -> bool:
        return pid_alive(self.pid, self.pid_started)

    def clients(self) -> list[int]:
        return live_leases(self.key)


# ------------------------------------------------------------------ processes

def _stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` from the third on (the state first); an OSError where
    the file cannot be read (a gone process, no /proc)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read().decode("ascii", "replace")
    # the command name (field 2) may hold spaces and parentheses: split after its last ')'
    return stat[stat.rfind(")") + 2:].split()


def process_start_tick(pid: int) -> str | None:
    """The start tick of ``pid`` as ``/proc/PID/stat`` writes it (field 22, clock ticks since
    boot), None where it cannot be read (a gone process, no /proc). The run owners and
    claims of the workspace store it; the registry compares it as a number."""
    try:
        fields = _stat_fields(pid)
    except OSError:
        return None
    return fields[19] if len(fields) > 19 else None


def process_start_time(pid: int) -> float | None:
    """The start time of ``pid`` in clock ticks since boot (Linux /proc), or None."""
    tick = process_start_tick(pid)
    try:
        return None if tick is None else float(tick)
    except ValueError:
        return None


def pid_alive(pid: int, started: float | None = None) -> bool:
    """Whether ``pid`` runs (a zombie does not) and, when ``started`` is given, is still the
    process that had that start time."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        state = _stat_fields(pid)[:1]
    except FileNotFoundError:
        return False
    except OSError:
        return True                    # no /proc (macOS): os.kill is all we know
    if state in (["Z"], ["X"]):
        return False
    return started is None or process_start_time(pid) == started


# ------------------------------------------------------------------ entries

@contextlib.contextmanager
def registry_lock() -> Iterator[None]:
    """The one lock around reading and changing the registry across processes."""
    with open(hosts_dir() / "registry.lock", "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def write_entry(entry: HostEntry) -> None:
    """Write the entry, readable by this user only (it holds the token)."""
    tmp = entry.path.with_suffix(f".tmp{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(asdict(entry), indent=1))
    os.replace(tmp, entry.path)


def read_entry(key: str) -> HostEntry | None:
    try:
        return HostEntry(**json.loads((hosts_dir() / f"{key}.json").read_text()))
    except (OSError, ValueError, TypeError):
        return None


def remove_entry(key: str, pid: int | None = None) -> None:
    """Remove the entry of ``key`` (only if it still names ``pid``, when given)."""
    found = read_entry(key)
    if found is not None and (pid is None or found.pid == pid):
        with contextlib.suppress(OSError):
            found.path.unlink()


def live_entries() -> list[HostEntry]:
    """Entries whose host process runs; the entries of dead hosts are removed on the way."""
    out = []
    for path in sorted(hosts_dir().glob("*.json")):
        entry = read_entry(path.stem)
        if entry is None:
            continue
        if entry.alive():
            out.append(entry)
        else:
            remove_entry(entry.key, entry.pid)
    return out


def log_path(name: str, key: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]
    return hosts_dir() / f"{safe}-{key[:8]}.log"


# ------------------------------------------------------------------ leases

def _leases_dir(key: str) -> Path:
    return hosts_dir() / f"{key}.clients"


def add_lease(key: str, pid: int | None = None) -> Path:
    """Write the lease of ``pid`` (this process) on ``key``; returns its file."""
    pid = os.getpid() if pid is None else pid
    folder = _leases_dir(key)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / str(pid)
    path.write_text(json.dumps({"started": process_start_time(pid), "since": time.time()}))
    return path


def drop_lease(key: str, pid: int | None = None) -> None:
    with contextlib.suppress(OSError):
        (_leases_dir(key) / str(os.getpid() if pid is None else pid)).unlink()


def live_leases(key: str) -> list[int]:
    """The client pids of ``key`` that still run; the leases of the others are removed."""
    out = []
    folder = _leases_dir(key)
    if not folder.is_dir():
        return out
    for path in folder.iterdir():
        try:
            pid = int(path.name)
            started = json.loads(path.read_text()).get("started")
        except (ValueError, OSError, AttributeError):
            continue
        if pid_alive(pid, started):
            out.append(pid)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
    return sorted(out)


def remove_lease_folder(key: str) -> None:
    """Remove the lease folder of ``key`` if no lease is left in it."""
    with contextlib.suppress(OSError):
        _leases_dir(key).rmdir()
