"""Why a run stopped, and whether the app's next launch offers to resume it.

A run stops before its end in one of three ways, and a launch treats them apart:

- **killed** (its process died: ``running`` with a dead owner, shown ``interrupted`` by
  :mod:`engine.runs.owner`): offered at the next launch;
- **stopped by quitting** (:data:`QUIT`: "Stop and quit" in the app's quit question, or the
  app ending while the run goes): ``cancelled``, and offered at the next launch, since the
  user meant to come back to it;
- **cancelled on purpose** (:data:`USER`: ``c`` on Live run, the palette's cancel): ``cancelled``
  and quiet; it resumes from Runs (``u``) or Live run (``r``), unasked.

A run cancelled before this was recorded (``stopped_by`` NULL), or by the command line's Ctrl-C,
counts as cancelled on purpose. The user may answer an offer with "never ask" (:func:`never_ask`):
that run is not offered again, however it stops later. Starting a run again clears its reason
(:func:`engine.store.runs.set_owner`).
"""

from __future__ import annotations

from engine.runs.lookup import RunInfo
from engine.store import Store
from engine.store.runs import set_ask_at_launch, set_stopped_by

__all__ = ["QUIT", "USER", "never_ask", "offered_at_launch", "record_stop"]

QUIT = "quit"
"""The app's end stopped the run."""

USER = "user"
"""The user cancelled the run on purpose."""


def record_stop(store: Store, run_name: str, by: str) -> None:
    """Record why the run called ``run_name`` stopped: :data:`QUIT` or :data:`USER`."""
    if by not in (QUIT, USER):
        raise ValueError(f"unknown stop reason {by!r} (one of {QUIT!r}, {USER!r})")
    set_stopped_by(store, run_name, by)


def never_ask(store: Store, run_name: str) -> None:
    """The app's launches never offer the run called ``run_name`` again."""
    set_ask_at_launch(store, run_name, False)


def offered_at_launch(run: RunInfo) -> bool:
    """Whether a launch offers ``run`` (as :func:`engine.runs.lookup.load_run` shows it) for
    resuming: interrupted, or cancelled by quitting, and not "never ask" (module docstring).
    Whether it has items left is the caller's to check."""
    if not run.ask_at_launch:
        return False
    return run.status == "interrupted" or (run.status == "cancelled" and run.stopped_by == QUIT)
