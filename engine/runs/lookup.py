"""Finding a run by name: :func:`load_run` (the run read model, :class:`RunInfo`, with the
status a user should read: a dead owner's run shows as interrupted) and the one-line error
for a name the workspace does not know (:func:`run_not_found`). Load a run once per command
and pass the :class:`RunInfo` down."""

from __future__ import annotations

from engine.runs.header import RunHeader
from engine.runs.owner import shown_status
from engine.store import Store
from engine.store.runs import RunInfo, known_runs, run_by_name
from engine.suggest import did_you_mean

__all__ = ["RunNotFound", "load_run", "run_not_found"]


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


def load_run(store: Store, name: str) -> RunInfo:
    """The run called ``name``; :class:`RunNotFound` (listing the known runs) otherwise."""
    run = run_by_name(store, name)
    if run is None:
        raise run_not_found(store, name)
    run.status = shown_status(store, run.id, run.status)      # a dead owner: interrupted
    run.header = RunHeader.from_json(run.header)              # the stored JSON, read once
    return run
