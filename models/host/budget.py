"""The thread budget of the user's model hosts: one per user and machine, across data dirs.

    /tmp/mirage-tui-<uid>-threads/<pid>.json

Each live host (whatever its data dir: two workspaces with their own ``$MIRAGE_DATA_DIR``
share one machine) keeps one file there: its pid and start time, the threads it wants, the
threads it runs with, whether it can change them, its url, name and data dir. The folder is
0700 and each file 0600; a file whose process is gone (exited, killed with -9, its pid reused)
does not count and is removed by the next reader.

The rule (:func:`shares`, a pure function of the live entries, so every host computes the same
split): the machine's cores are shared out fairly, oldest host first: a host that wants less
than an equal share gets what it wants and the rest is shared among the others; the cores
left over after an even split go to the oldest hosts; a host never gets fewer than one
thread, so with more hosts than cores the total is the number of hosts. A llama-server host
keeps its ``-t`` and counts with it. Each host's watchdog reads the budget every
``POLL_S`` and sets its own thread count to its share: when a host starts the others shrink,
and when one stops the others grow back, within about a second. A client that
starts a host waits (:func:`settled`, a second or so) until the others have shrunk.

The place is fixed (``/tmp``, not ``$TMPDIR`` or ``$XDG_RUNTIME_DIR``, which differ between a
login shell, cron and su) so that every process of the user finds the same budget.
``$MIRAGE_THREAD_BUDGET_DIR`` names another folder (the test suite gives itself one). A folder
at the default place that is not this user's own (a symlink, another owner) is not used: the
budget then falls back to ``<data dir>/hosts/threads`` (per data dir, as before).

Standard library only: the host process imports this module too.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from models.host import registry

BUDGET_DIR_ENV = "MIRAGE_THREAD_BUDGET_DIR"
DEFAULT_PARENT = Path("/tmp") if Path("/tmp").is_dir() else Path(tempfile.gettempdir())
POLL_S = 0.5


@dataclass(frozen=True)
class BudgetEntry:
    pid: int
    pid_started: float | None     # the host process's start time (pid reuse guard)
    since: float                  # time.time() when it joined the budget: the order of shares
    wanted: int
    threads: int
    adjustable: bool = True       # False: it keeps ``threads`` (llama-server's -t)
    url: str = ""
    name: str = ""
    data_dir: str = ""

    def alive(self) -> bool:
        return registry.pid_alive(self.pid, self.pid_started)


def cores() -> int:
    """The cores the budget shares: ``os.cpu_count()``."""
    return os.cpu_count() or 1


def _own_folder(path: Path) -> bool:
    """``path`` is a real folder (no symlink) of this user's, 0700 (tightened if it is ours);
    created when missing."""
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        info = path.lstat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    if info.st_mode & 0o077:
        with contextlib.suppress(OSError):
            path.chmod(0o700)
    return True


def budget_dir() -> Path:
    """The folder of the budget (module docstring), created 0700."""
    env = os.environ.get(BUDGET_DIR_ENV)
    if env:
        return registry.make_folder(Path(env).expanduser(), BUDGET_DIR_ENV)
    folder = DEFAULT_PARENT / f"mirage-tui-{os.getuid()}-threads"
    if _own_folder(folder):
        return folder
    return registry.make_folder(registry.hosts_dir() / "threads", registry.DATA_DIR_ENV,
                                parents=False)


def join(entry: BudgetEntry) -> None:
    """Write (or rewrite) the entry of ``entry.pid``, readable by this user only."""
    folder = budget_dir()
    path = folder / f"{entry.pid}.json"
    tmp = folder / f".{entry.pid}.tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(asdict(entry)))
    os.replace(tmp, path)


def leave(pid: int) -> None:
    with contextlib.suppress(OSError):
        (budget_dir() / f"{pid}.json").unlink()


def live() -> list[BudgetEntry]:
    """The entries of hosts that still run, oldest first; dead ones are removed on the way."""
    out = []
    for path in budget_dir().glob("*.json"):
        try:
            entry = BudgetEntry(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            continue
        if entry.alive():
            out.append(entry)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
    return sorted(out, key=lambda e: (e.since, e.pid))


def shares(entries: list[BudgetEntry], total: int) -> dict[int, int]:
    """The threads of each host (by pid) under the rule of the module docstring. ``entries``
    oldest first."""
    out = {e.pid: max(1, e.threads) for e in entries if not e.adjustable}
    left = total - sum(out.values())
    flexible = [e for e in entries if e.adjustable]
    while flexible:                       # water-filling: the modest ones get what they want
        fair = left // len(flexible)
        modest = [e for e in flexible if max(1, e.wanted) <= fair]
        if not modest:
            break
        for e in modest:
            out[e.pid] = max(1, e.wanted)
            left -= out[e.pid]
        flexible = [e for e in flexible if e not in modest]
    if flexible:
        even, extra = divmod(max(0, left), len(flexible))
        for i, e in enumerate(flexible):
            out[e.pid] = max(1, even + (1 if i < extra else 0))
    return out


def share_of_new(wanted: int) -> int:
    """The threads a host about to start (wanting ``wanted``) gets beside the live ones."""
    newcomer = BudgetEntry(pid=-1, pid_started=None, since=time.time(), wanted=wanted,
                           threads=wanted)
    return shares([*live(), newcomer], cores())[-1]


def share_of(entry: BudgetEntry, entries: list[BudgetEntry] | None = None) -> int:
    """The threads ``entry``'s host should run with now (counted even when its file is
    missing)."""
    others = [e for e in (live() if entries is None else entries) if e.pid != entry.pid]
    return shares(sorted([*others, entry], key=lambda e: (e.since, e.pid)), cores())[entry.pid]


def current_share(entry: BudgetEntry) -> int:
    """What a host's watchdog calls every ``POLL_S``: its share now (its own ``threads`` if it
    cannot change them); its file is written again if someone removed it."""
    entries = live()
    if not any(e.pid == entry.pid for e in entries):
        join(entry)
    return share_of(entry, entries) if entry.adjustable else entry.threads


def settled(timeout: float) -> bool:
    """Wait up to ``timeout`` s until every live host runs with its share; whether they do."""
    deadline = time.monotonic() + timeout
    while True:
        entries = live()
        due = shares(entries, cores())
        if all(e.threads == due[e.pid] for e in entries):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def with_threads(entry: BudgetEntry, threads: int, wanted: int | None = None) -> BudgetEntry:
    return replace(entry, threads=threads, wanted=entry.wanted if wanted is None else wanted)
