"""The app's one evaluation run at a time: plan, execute, report progress, cancel, resume.

:class:`RunController` belongs to the app (``app.run_controller``): the
:class:`~mirage_tui.jobs.JobController` of runs. ``start`` plans and executes a
:class:`~engine.runs.RunConfig` in its thread worker (``engine.runs.execute`` with the
controller's progress callback and a ``threading.Event`` to cancel); the engine writes every
finished item in one transaction, so a cancel, an error or a killed process leaves only whole
items and the run resumes from the store (``resume`` starts it again with its stored
configuration).

Its messages are the job controller's (``Started``, coalesced ``Progress``, ``Finished``,
``Failed``), handled by the app as ``on_run_controller_*``; ``latest`` is the newest
:class:`~engine.jobs.JobEvent` of the run. Expected errors (a model that does not load, a
configuration that does not fit the stored run) end as a ``Failed`` or a failed summary, which
the app shows as a notification.

``generators`` and ``retrievers`` map configured names to ready objects and are handed to
``execute`` as they are: the edge where tests put a scripted fake.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping

from engine.runs import RunConfig
from engine.runs.stops import QUIT, USER
from mirage_tui.jobs import MIN_INTERVAL, JobController

if TYPE_CHECKING:
    from textual.app import App

    from engine.runs.plan import Plan
    from engine.runs.lookup import RunInfo

__all__ = ["MIN_INTERVAL", "RESUMABLE", "RunController", "launch_offers", "resumable_runs"]

RESUMABLE = ("interrupted", "cancelled")
"""Statuses that resume (``r`` on Live run, ``u`` on Runs, the palette's "runs: resume"):
interrupted (its process was killed: a stored ``running`` whose owner is gone,
:mod:`engine.runs.owner`), or cancelled. A run another live process is running is not one."""


class RunController(JobController):
    """Starts, follows, cancels and resumes the app's evaluation run; see the module doc."""

    class Started(JobController.Started):
        @property
        def run(self) -> str:
            return self.name

    class Progress(JobController.Progress):
        """Something changed; read ``app.run_controller.latest`` (this one may be stale)."""

        @property
        def run(self) -> str:
            return self.name

    class Finished(JobController.Finished):
        """``summary``: the run's :class:`~engine.runs.RunSummary`."""

    class Failed(JobController.Failed):
        @property
        def run(self) -> str:
            return self.name

    def __init__(self, app: "App", *, generators: Mapping[str, object] | None = None,
                 retrievers: Mapping[str, object] | None = None,
                 threads: int | None = None) -> None:
        super().__init__(app, group="run")
        self.generators = dict(generators or {})
        self.retrievers = dict(retrievers or {})
        self.threads = threads               # used when a config does not say
        self.stop_reason: str | None = None  # why the job was asked to stop (engine.runs.stops)

    @property
    def run_name(self) -> str | None:
        """The current or last run of this session."""
        return self.name

    def start(self, config: RunConfig, *, force_new: bool = False, plan: "Plan | None" = None,
              stored: "RunInfo | None" = None) -> bool:
        """Plan and run ``config`` in a worker; False (with a notification) when a run is
        already going or the workspace is not open. ``plan``: the plan of ``config`` made
        already (New run's preview), executed as it is; ``stored``: the stored run ``config``
        resumes, as looked up (a resume by name). Otherwise the run is looked up once, in the
        worker, and planned. Run again (:meth:`resume`), the work looks it up and plans anew:
        the run has changed since."""
        if not self.running and config.threads is None and self.threads is not None:
            config.threads = self.threads
        made = [plan] if plan is not None else []
        given = [stored] if stored is not None else []

        def work(store, progress, cancel):
            from engine.runs import execute, plan_run
            from engine.runs.lookup import find_run

            if made:
                planned = made.pop()
            else:
                run = given.pop() if given else find_run(store, config.name)
                planned = plan_run(store, config, run, force_new=force_new, check_models=not (
                    set(config.generators) <= set(self.generators)))
            summary = execute(store, planned, progress=progress, cancel=cancel,
                              generators=self.generators, retrievers=self.retrievers,
                              min_interval=MIN_INTERVAL)
            if summary.status == "cancelled":
                self._record_stop(store, summary.run)
            return summary

        return self.launch(config.name, work)

    def launch(self, name, work) -> bool:
        """The job controller's launch, with no stop reason yet (:meth:`cancel`)."""
        if not self.running:
            self.stop_reason = None
        return super().launch(name, work)

    def _record_stop(self, store, run_name: str) -> None:
        """Why the run stopped, for the next launch: stopped by quitting is offered, cancelled
        on purpose is not (:mod:`engine.runs.stops`)."""
        from engine.runs.stops import record_stop

        try:
            record_stop(store, run_name, self.stop_reason or USER)
        except Exception:  # noqa: BLE001 - a storage fault: the run is stored whole; only
            pass           # the next launch's offer is lost, and nothing is left to tell

    def cancel(self, reason: str = USER) -> bool:
        """Ask the run to stop after its current item (it stays resumable); ``reason``:
        :data:`~engine.runs.stops.USER` (cancelled on purpose: launches do not ask about it)
        or :data:`~engine.runs.stops.QUIT` (the app is quitting: the next launch offers it)."""
        if not self.running or self.cancelling:
            return False
        self.stop_reason = reason
        return super().cancel()

    def cancel_quietly(self) -> None:
        """The app is ending: the run stops as stopped by quitting, unless the user had
        cancelled it already."""
        if self.running and not self.cancelling:
            self.stop_reason = QUIT
        super().cancel_quietly()

    def resume(self, run_name: str | None = None) -> bool:
        """Run a stored run again with its stored configuration: it continues where it
        stopped (finished items are skipped, stored generations reused)."""
        if run_name is None:
            return super().resume()
        store = self.workspace_store()
        if store is None:
            return False
        from engine.runs.lookup import load_run

        try:
            run = load_run(store, run_name)
            config = RunConfig.from_dict(run.config, name=run.name)
        except Exception as exc:  # noqa: BLE001 - RunNotFound, ConfigError: say why
            self.app.notify(f"Cannot resume {run_name}: {exc}", severity="error",
                            markup=False, timeout=10)
            return False
        return self.start(config, stored=run)

    def busy(self) -> None:
        self.app.notify(f"Run {self.name} is still going; cancel it (c on Live run) "
                        "or wait for it to finish.", title="One run at a time",
                        severity="warning", markup=False)


def resumable_runs(store, statuses: tuple[str, ...] = RESUMABLE,
                   keep: Callable | None = None) -> list[dict]:
    """Runs that stopped before their end with one of ``statuses`` (by default
    :data:`RESUMABLE`: ``interrupted``, the process was killed, or ``cancelled``) and, when
    given, for which ``keep(RunInfo)`` is true, newest first, with their finished and planned
    item counts and why they stopped (``stopped_by``)."""
    from engine.results.records import stored_counts
    from engine.runs.lookup import load_run
    from engine.store.runs import known_runs

    out = []
    for name in reversed(known_runs(store)):
        run = load_run(store, name)
        if run.status not in statuses or (keep is not None and not keep(run)):
            continue
        counts = stored_counts(store, run)
        if counts.pending <= 0:
            continue
        out.append({"name": run.name, "status": run.status, "done": counts.done,
                    "total": counts.total, "updated_at": run.updated_at,
                    "stopped_by": run.stopped_by})
    out.sort(key=lambda r: r["updated_at"], reverse=True)
    return out


def launch_offers(store) -> list[dict]:
    """The stopped runs a launch offers to resume, newest first: killed, or stopped by
    quitting the app, and not "never ask"; not those cancelled on purpose
    (:func:`engine.runs.stops.offered_at_launch`)."""
    from engine.runs.stops import offered_at_launch

    return resumable_runs(store, RESUMABLE, offered_at_launch)
