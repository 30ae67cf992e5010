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
tick (``/proc/PID/stat``, Linux: :func:`models.host.registry.process_start_tick`, the
model hosts' rule too) compared against a pid reused by another process.

A fit, a calibration and an arena are claimed the same way (:func:`claim_named`, :func:`held`;
their rows are in ``claims``): a second process is refused with :class:`Busy` naming the
owner's pid, and an arena stored as running whose owner is gone reads ``interrupted``
(:func:`claimed_status`).
"""

from __future__ import annotations

import os
import socket
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Iterator

from engine.store import claims as claim_table
from engine.store import runs as run_table
from models.host.registry import process_start_tick

INTERRUPTED = "interrupted"
FIT, CALIBRATION, ARENA = "fit", "calibration", "arena"
"""The kinds of claims besides a run's (an arena's name there is its id)."""


class Busy(RuntimeError):
    """A stored thing (a run, a fit, a calibration, an arena) is being worked on by another
    live process."""


class RunBusy(Busy):
    """The run is being worked on by another live process."""


def _host() -> str:
    return socket.gethostname()


def _this_process() -> tuple[int, str, str | None]:
    """``pid, host, start tick`` of this process, as an owner or a claim records them."""
    return os.getpid(), _host(), process_start_tick(os.getpid())


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
    now = process_start_tick(pid)
    return started is None or now is None or now == started


def claim(db, run_id: int, name: str) -> None:
    """Make this process the run's owner and mark it running; call inside a write
    transaction (``BEGIN IMMEDIATE``: ``db`` is its handle), so the check and the take are
    one step."""
    row = run_table.owner_with_status(db, run_id)
    if row is not None and row[3] == "running":
        _refuse_other(row, f"run {name} is running", RunBusy)
    run_table.set_owner(db, run_id, *_this_process(), _now())


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _refuse_other(row, doing: str, error: type[Busy] = Busy) -> None:
    """Raise ``error`` ("DOING (pid P); wait ...") when ``row`` (``pid, host,
    process_start``) is another process that is alive."""
    pid, host, started = row[0], row[1], row[2]
    mine = pid == os.getpid() and host == _host()
    if not mine and is_alive(pid, host, started):
        where = "" if host == _host() else f" on {host}"
        raise error(f"{doing} (pid {pid}{where}); wait for it to end, or stop that process "
                    "first")


def claim_named(db, kind: str, name: str, doing: str) -> None:
    """Make this process the owner of ``kind``/``name`` (a fit, a calibration, an arena's
    id), refusing with :class:`Busy` ("DOING (pid P) ...") while another live process holds
    it; call inside a write transaction, as :func:`claim`."""
    row = claim_table.claim_row(db, kind, name)
    if row is not None:
        _refuse_other(row, doing)
    claim_table.set_claim(db, kind, name, *_this_process(), _now())


def release(store, kind: str, name: str) -> None:
    """Let go of this process's claim on ``kind``/``name`` (its work ended)."""
    claim_table.drop_claim(store, kind, name, os.getpid(), _host())


@contextmanager
def held(store, kind: str, name: str, doing: str) -> Iterator[None]:
    """Claim ``kind``/``name`` for the block (:func:`claim_named` in its own transaction)
    and release it after, however the block ends."""
    with store.write() as db:
        claim_named(db, kind, name, doing)
    try:
        yield
    finally:
        release(store, kind, name)


def live_holder(row) -> bool:
    """Whether a claim row (``pid, host, process_start``; None: no claim) is a live process
    (this one too: its job would lose what it works on)."""
    return row is not None and is_alive(row[0], row[1], row[2])


def claimed_status(store, kind: str, name: str, status: str) -> str:
    """:func:`shown_status` for a claimed thing: ``interrupted`` for one stored as running
    whose claim's owner is gone (or that has no claim)."""
    if status != "running" or live_holder(claim_table.claim_of(store, kind, name)):
        return status
    return INTERRUPTED


def shown_status(store, run_id: int, status: str) -> str:
    """``status`` as the user should read it: ``interrupted`` for a run stored as running
    whose owner is gone (or unknown: a run from before owners were recorded)."""
    if status != "running" or live_holder(run_table.owner_of(store, run_id)):
        return status
    return INTERRUPTED
