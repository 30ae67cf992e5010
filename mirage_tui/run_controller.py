"""The app's one evaluation run at a time: plan, execute, report progress, cancel, resume.

:class:`RunController` belongs to the app (``app.run_controller``). ``start`` plans and
executes a :class:`~engine.runs.RunConfig` in a thread worker
(``engine.runs.execute`` with a progress callback and a ``threading.Event`` to cancel); the
engine writes every finished item in one transaction, so a cancel, an error or a killed
process leaves only whole items and the run resumes from the store.

The worker never touches a widget. It keeps the newest :class:`~engine.runs.ProgressEvent`
in ``latest`` and posts small messages to the app: ``Progress`` (coalesced: at most one is
waiting to be handled, and the engine emits at most one event per ``MIN_INTERVAL``, so the
screens redraw a few times a second however fast items finish), ``Finished`` and ``Failed``.
Expected errors (a model that does not load, a configuration that does not fit the stored run)
end as a ``Failed`` or a failed summary, which the app shows as a notification.

``generators`` and ``retrievers`` map configured names to ready objects and are handed to
``execute`` as they are: the edge where tests put a scripted fake.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from textual.message import Message

from engine.runs import ProgressEvent, RunConfig, RunSummary

if TYPE_CHECKING:
    from textual.app import App
    from textual.worker import Worker

MIN_INTERVAL = 0.2
"""Seconds between the engine's progress events: at most 5 redraws a second."""

RESUMABLE = ("running", "cancelled")
"""Statuses a next launch offers to resume: killed while running, or cancelled."""


class RunController:
    """Starts, follows, cancels and resumes the app's evaluation run; see the module doc."""

    @dataclass
    class Started(Message):
        run: str

    @dataclass
    class Progress(Message):
        """Something changed; read ``app.run_controller.latest`` (this one may be stale)."""
        run: str

    @dataclass
    class Finished(Message):
        summary: RunSummary

    @dataclass
    class Failed(Message):
        run: str
        error: str

    def __init__(self, app: "App", *, generators: Mapping[str, object] | None = None,
                 retrievers: Mapping[str, object] | None = None,
                 threads: int | None = None) -> None:
        self.app = app
        self.generators = dict(generators or {})
        self.retrievers = dict(retrievers or {})
        self.threads = threads               # used when a config does not say
        self.run_name: str | None = None     # the current or last run of this session
        self.latest: ProgressEvent | None = None
        self.summary: RunSummary | None = None
        self.error: str | None = None
        self.worker: Worker | None = None
        self._cancel = threading.Event()
        self._active = False
        self._posted = threading.Event()     # a Progress message is waiting to be handled
        self.version = 0                     # grows with every change the screens may draw

    # ------------------------------------------------------------------ state

    @property
    def running(self) -> bool:
        return self._active

    @property
    def cancelling(self) -> bool:
        return self._active and self._cancel.is_set()

    # ------------------------------------------------------------------ commands

    def start(self, config: RunConfig, *, force_new: bool = False) -> bool:
        """Plan and run ``config`` in a worker; False (with a notification) when a run is
        already going or the workspace is not open."""
        if self._active:
            self.app.notify(f"Run {self.run_name} is still going; cancel it (c on Live run) "
                            "or wait for it to finish.", title="One run at a time",
                            severity="warning", markup=False)
            return False
        store = getattr(self.app, "store", None)
        if store is None:
            self.app.notify("The workspace is not open yet.", severity="warning")
            return False
        if config.threads is None and self.threads is not None:
            config.threads = self.threads
        self._cancel = threading.Event()
        self._active = True
        self.run_name = config.name
        self.latest = self.summary = self.error = None
        self.version += 1
        self.worker = self.app.run_worker(
            lambda: self._work(store, config, force_new), thread=True, exclusive=True,
            exit_on_error=False, group="run", name=f"run {config.name}")
        self.app.post_message(self.Started(config.name))
        return True

    def resume(self, run_name: str) -> bool:
        """Run a stored run again with its stored configuration: it continues where it
        stopped (finished items are skipped, stored generations reused)."""
        store = getattr(self.app, "store", None)
        if store is None:
            self.app.notify("The workspace is not open yet.", severity="warning")
            return False
        try:
            config = stored_config(store, run_name)
        except Exception as exc:  # noqa: BLE001 - RunNotFound, ConfigError: say why
            self.app.notify(f"Cannot resume {run_name}: {exc}", severity="error",
                            markup=False, timeout=10)
            return False
        return self.start(config)

    def cancel(self) -> bool:
        """Ask the run to stop after its current item (it stays resumable)."""
        if not self._active or self._cancel.is_set():
            return False
        self._cancel.set()
        self.version += 1
        self.app.post_message(self.Progress(self.run_name or ""))
        return True

    def cancel_quietly(self) -> None:
        """Cancel without telling the screens (the app is closing)."""
        if self._active:
            self._cancel.set()

    # ------------------------------------------------------------------ the worker

    def _work(self, store, config: RunConfig, force_new: bool) -> None:
        from engine.runs import execute, plan_run

        message: Message
        try:
            plan = plan_run(store, config, force_new=force_new,
                            check_models=not (set(config.generators) <= set(self.generators)))
            self.summary = execute(store, plan, progress=self._progress, cancel=self._cancel,
                                   generators=self.generators, retrievers=self.retrievers,
                                   min_interval=MIN_INTERVAL)
            message = self.Finished(self.summary)
        except Exception as exc:  # noqa: BLE001 - ConfigError, LookupError, database errors
            self.error = f"{type(exc).__name__}: {exc}"
            message = self.Failed(config.name or "", self.error)
        finally:
            store.close()       # this thread's connection
            self.version += 1
            self._active = False
        self.app.post_message(message)

    def _progress(self, event: ProgressEvent) -> None:
        self.latest = event
        self.version += 1
        if not self._posted.is_set():       # coalesce: one waiting message is enough
            self._posted.set()
            self.app.post_message(self.Progress(event.run))

    def progress_handled(self) -> None:
        """The app calls this when it handles a ``Progress``: the next event may post."""
        self._posted.clear()


def stored_config(store, run_name: str) -> RunConfig:
    """The configuration a stored run was started with."""
    from engine.results.records import load_run

    run = load_run(store, run_name)
    return RunConfig.from_dict(run.config)


def resumable_runs(store) -> list[dict]:
    """Runs that stopped before their end (status ``running``: the process was killed; or
    ``cancelled``), newest first, with their finished and planned item counts."""
    from engine.results.records import item_counts, known_runs, load_items, load_run

    out = []
    for name in reversed(known_runs(store)):
        run = load_run(store, name)
        if run.status not in RESUMABLE:
            continue
        counts = item_counts(run, load_items(store, run))
        if counts["pending"] <= 0:
            continue
        out.append({"name": run.name, "status": run.status, "done": counts["done"],
                    "total": counts["total"], "updated_at": run.updated_at})
    out.sort(key=lambda r: r["updated_at"], reverse=True)
    return out
