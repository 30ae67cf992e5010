"""One engine job at a time, off the UI thread: start it, follow it, cancel it, resume it.

A :class:`JobController` belongs to what shows the job: the app for runs
(:class:`~mirage_tui.run_controller.RunController`), the Leaderboard for judging. ``launch(name,
work)`` calls ``work(store, progress, cancel)`` in a thread worker, where ``work`` is an engine
job's entry point (``engine.runs.execute``, ``engine.arena.judging.job.judge_arena``, ...) given the
store of the app's :class:`~mirage_tui.workbench.Workbench`, the controller's progress callback
and a ``threading.Event`` to cancel. The engine stores every step of a job in its own
transaction, so a cancel, an error or a killed process leaves only whole steps, and ``resume``
(the same work again) continues where the job stopped.

The worker never touches a widget. It keeps the newest :class:`~engine.jobs.JobEvent` in
``latest`` and posts small messages to the controller's owner: ``Started``, ``Progress``
(coalesced: at most one waits to be handled, and its handler calls ``progress_handled``; the
engine sends at most one event per ``MIN_INTERVAL``, so the screens redraw a few times a
second however fast steps finish), ``Finished`` (the job's summary, whatever its status) and
``Failed`` (the job raised before it could end: a model that does not load, a configuration
that does not fit the stored job, a file that cannot be imported; ``describe`` words it).

When the app ends, :func:`stop_jobs` cancels every job still going and waits until each has
stopped after its step (the app's other worker threads are not waited for:
:mod:`mirage_tui.worker_threads`).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from textual.app import App
from textual.message import Message

from engine.jobs import JobEvent
from mirage_tui.workbench import Workbench, workbench_of

if TYPE_CHECKING:
    from textual.message_pump import MessagePump
    from textual.worker import Worker

    from engine.store import Store

MIN_INTERVAL = 0.2
"""Seconds between a job's progress events: at most 5 redraws a second."""

Work = Callable[["Store", Callable[[JobEvent], None], threading.Event], object]
"""``work(store, progress, cancel) -> summary``: one engine job, run in the worker."""

_GOING: "weakref.WeakSet[JobController]" = weakref.WeakSet()
"""The controllers whose job's thread has not ended yet."""


async def stop_jobs(poll: float = 0.02) -> int:
    """Cancel every job still going and wait (without blocking the event loop: a job's thread
    may still post to it) until each has stopped after its current step; returns how many
    were going."""
    going = list(_GOING)
    for job in going:
        job.cancel_quietly()
    while any(not job._stopped.is_set() for job in going):
        await asyncio.sleep(poll)
    return len(going)


def _described(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


class JobController:
    """Starts, follows, cancels and resumes one engine job at a time; see the module doc."""

    @dataclass
    class Started(Message):
        name: str

    @dataclass
    class Progress(Message):
        """Something changed; read the controller's ``latest`` (this one may be stale)."""
        name: str

    @dataclass
    class Finished(Message):
        summary: object

    @dataclass
    class Failed(Message):
        name: str
        error: str

    def __init__(self, owner: "MessagePump", *, group: str = "job",
                 describe: Callable[[Exception], str] | None = None) -> None:
        self.owner = owner                   # gets the messages and runs the worker
        self.group = group                   # the worker group (one job of a group at a time)
        self.describe = describe or _described    # an error as the Failed message says it
        self.name: str | None = None         # the current or last job of this session
        self.latest: JobEvent | None = None
        self.summary = None
        self.error: str | None = None
        self.worker: Worker | None = None
        self.version = 0                     # grows with every change the screens may draw
        self._work: Work | None = None
        self._cancel = threading.Event()
        self._active = False
        self._stopped = threading.Event()    # the job's thread has ended
        self._posted = threading.Event()     # a Progress message is waiting to be handled

    @property
    def app(self) -> App:
        return self.owner if isinstance(self.owner, App) else self.owner.app

    @property
    def workbench(self) -> Workbench | None:
        """The app as a workbench; None under an app that is not one (nothing to run)."""
        return workbench_of(self.app)

    def workspace_store(self) -> Store | None:
        """The workspace, or None (with a notification) while it is not open."""
        workbench = self.workbench
        store = workbench.store if workbench is not None else None
        if store is None:
            self.app.notify("The workspace is not open yet.", severity="warning")
        return store

    # ------------------------------------------------------------------ state

    @property
    def running(self) -> bool:
        return self._active

    @property
    def cancelling(self) -> bool:
        return self._active and self._cancel.is_set()

    # ------------------------------------------------------------------ commands

    def launch(self, name: str, work: Work) -> bool:
        """Run ``work`` in a worker; False (with a notification) when a job is already going
        or the workspace is not open."""
        if self._active:
            self.busy()
            return False
        store = self.workspace_store()
        if store is None:
            return False
        self._cancel = threading.Event()
        self._stopped = threading.Event()
        self._active = True
        _GOING.add(self)
        self.name, self._work = name, work
        self.latest = self.summary = self.error = None
        self.version += 1
        self.worker = self.owner.run_worker(
            lambda: self._run(store, name, work), thread=True, exclusive=True,
            exit_on_error=False, group=self.group, name=f"{self.group} {name}")
        self.owner.post_message(self.Started(name))
        return True

    def resume(self) -> bool:
        """Run the last job again: it continues where it stopped."""
        if self._work is None or self.name is None:
            return False
        return self.launch(self.name, self._work)

    def cancel(self) -> bool:
        """Ask the job to stop after its current step (it stays resumable)."""
        if not self._active or self._cancel.is_set():
            return False
        self._cancel.set()
        self.version += 1
        self.owner.post_message(self.Progress(self.name or ""))
        return True

    def cancel_key(self, idle: str, cancelling: str) -> None:
        """A screen's cancel key: ask the job to stop (saying ``cancelling``), or say ``idle``
        when no job runs."""
        if not self._active:
            self.app.notify(idle, timeout=2, markup=False)
        elif self.cancel():
            self.app.notify(cancelling, timeout=4, markup=False)

    def cancel_quietly(self) -> None:
        """Cancel without telling the screens (the app or the screen is closing)."""
        if self._active:
            self._cancel.set()

    def busy(self) -> None:
        """Say that a job is going already (``launch`` was refused)."""
        self.app.notify(f"{self.name} is still going; cancel it or wait for it to finish.",
                        severity="warning", markup=False)

    def progress_handled(self) -> None:
        """The owner calls this when it handles a ``Progress``: the next event may post."""
        self._posted.clear()

    # ------------------------------------------------------------------ the worker

    def _run(self, store: Store, name: str, work: Work) -> None:
        message: Message
        try:
            self.summary = work(store, self._progress, self._cancel)
            message = self.Finished(self.summary)
        except Exception as exc:  # noqa: BLE001 - ConfigError, LookupError, database errors
            self.error = self.describe(exc)
            message = self.Failed(name or "", self.error)
        finally:
            store.close()       # this thread's connection
            self.version += 1
            self._active = False
            self._stopped.set()
            _GOING.discard(self)
        self.owner.post_message(message)

    def _progress(self, event: JobEvent) -> None:
        self.latest = event
        self.version += 1
        if not self._posted.is_set():       # coalesce: one waiting message is enough
            self._posted.set()
            self.owner.post_message(self.Progress(event.name))
