"""One owner per run: the process that works on a run says so, and a dead owner is seen.

When a run is opened (:func:`engine.runs.rows.save_plan`), :func:`claim` records this process
(pid, host, the process's start tick, the time) in ``run_owners`` and marks the run
``running``, inside the same ``BEGIN IMMEDIATE`` transaction as the check, so two processes
cannot both take it. A run held by another live process on this host is refused with
:class:`RunBusy` ("run NAME is running (pid P)"); one held from another host is refused too,
naming the host (its liveness cannot be checked from here).

A process that dies (``kill -9``, a crash, a power cut) leaves the run ``running``. Reading it
back, :func:`shown_status` calls that run ``interrupted``: its owner is gone, and running it
again resumes it. Liveness is ``os.kill(pid, 0)`` on the same host, with the process's start
tick (``/proc/PID/stat``, Linux) compared against a pid reused by another process.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime, timezone

from engine.store import runs as run_table

INTERRUPTED = "interrupted"


class RunBusy(RuntimeError):
    """The run is being worked on by another live process."""


def _host() -> str:
    return socket.gethostname()


def process_start(pid: int) -> str | None:
    """The start tick of process ``pid`` (field 22 of ``/proc/PID/stat``), None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after its last ')'
    return stat.rsplit(")", 1)[-1].split()[19]


def is_alive(pid: int, host: str, started: str | None) -> bool:
    """Whether the owner ``pid`` on ``host`` still runs (another host: assumed alive)."""
    if host != _host():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass                        # alive, another user's
    now = process_start(pid)
    return started is None or now is None or now == started


def claim(db, run_id: int, name: str) -> None:
    """Make this process the run's owner and mark it running; call inside a write
    transaction (``BEGIN IMMEDIATE``: ``db`` is its handle), so the check and the take are
    one step."""
    row = run_table.owner_with_status(db, run_id)
    if row is not None:
        pid, host, started, status = row[0], row[1], row[2], row[3]
        mine = pid == os.getpid() and host == _host()
        if status == "running" and not mine and is_alive(pid, host, started):
            where = "" if host == _host() else f" on {host}"
            raise RunBusy(f"run {name} is running (pid {pid}{where}); wait for it to end, "
                          "or stop that process first")
    run_table.set_owner(db, run_id, os.getpid(), _host(), process_start(os.getpid()),
                        datetime.now(timezone.utc).isoformat(timespec="seconds"))


def shown_status(store, run_id: int, status: str) -> str:
    """``status`` as the user should read it: ``interrupted`` for a run stored as running
    whose owner is gone (or unknown: a run from before owners were recorded)."""
    if status != "running":
        return status
    row = run_table.owner_of(store, run_id)
    if row is not None and is_alive(row[0], row[1], row[2]):
        return status
    return INTERRUPTED
