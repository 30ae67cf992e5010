"""The run read model, :class:`RunInfo` (a run as stored, its header typed), and finding a run
by name: :func:`load_run` (the run, with the status a user should read: a dead owner's run
shows as interrupted), :func:`find_run` (the same, or None for a name no run has yet: what
``run`` plans a new run with) and the one-line error for a name the workspace does not know
(:func:`run_not_found`). Look a run up once per command and pass the :class:`RunInfo` down
(``plan_run`` takes it; it never looks it up; :func:`plan_named` looks it up by the
configuration's name and plans it)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from engine.runs.config import RunConfig
from engine.runs.header import RunHeader
from engine.runs.owner import shown_status
from engine.runs.plan import Plan, plan_run
from engine.store import Store
from engine.store.runs import RunRow, StoredRun, known_runs, run_by_id, run_by_name
from engine.suggest import did_you_mean

__all__ = ["RunInfo", "RunNotFound", "find_run", "load_run", "plan_named", "run_not_found",
           "run_now"]


@dataclass(frozen=True, kw_only=True)
class RunInfo(RunRow):
    """A run as read (:func:`load_run`, :func:`find_run`, :func:`run_now`): its row, the status
    a user should read, and its header typed. Never changed in place: a changed status or
    header is a new RunInfo (:func:`dataclasses.replace`)."""

    header: RunHeader


class RunNotFound(LookupError):
    """No run of that name in the workspace."""


def run_not_found(store: Store, name: str) -> RunNotFound:
    """The one-line error for a run name the workspace does not know: the nearest name
    ("did you mean"), else the known ones."""
    known = known_runs(store)
    if not known:
        return RunNotFound(f"no run named {name!r} (the workspace has no runs yet)")
    near = did_you_mean(name, known)
    return RunNotFound(f"no run named {name!r}{near or ' (known: ' + ', '.join(known) + ')'}")


def find_run(store: Store, name: str) -> RunInfo | None:
    """The run called ``name`` as :func:`load_run` gives it; None when there is none."""
    stored = run_by_name(store, name)
    return None if stored is None else _shown(store, stored)


def _shown(store: Store, stored: StoredRun) -> RunInfo:
    """The stored run as read: the shown status (a dead owner's run: interrupted) and its
    header's stored JSON read as a :class:`RunHeader`, here and nowhere else
    (``tests/unit/test_run_header_access.py``)."""
    row = {field.name: getattr(stored, field.name) for field in fields(RunRow)}
    return RunInfo(**{**row, "status": shown_status(store, stored.id, stored.status)},
                   header=RunHeader.from_json(stored.header_json))


def run_now(store: Store, run: RunInfo) -> RunInfo:
    """``run`` as it is stored now (its status, header, update time), read by its id: for a
    caller that holds a run looked up earlier and writes what it is now (an export from a
    screen opened while the run went on). :class:`RunNotFound` once it is deleted."""
    now = run_by_id(store, run.id)
    if now is None:
        raise RunNotFound(f"run {run.name!r} was deleted")
    return _shown(store, now)


def load_run(store: Store, name: str) -> RunInfo:
    """The run called ``name``; :class:`RunNotFound` (listing the known runs) otherwise."""
    run = find_run(store, name)
    if run is None:
        raise run_not_found(store, name)
    return run


def plan_named(store: Store, config: RunConfig, **options) -> Plan:
    """:func:`~engine.runs.plan.plan_run` with the stored run of ``config.name`` looked up
    here, once (:func:`find_run`): for a caller that holds no run yet (a new run, or the same
    configuration again to resume it; ``options`` are ``plan_run``'s)."""
    return plan_run(store, config, find_run(store, config.name), **options)
