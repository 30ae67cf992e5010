"""What the screens and the job controllers use of the app, as a Protocol.

:class:`Workbench` is implemented by :class:`mirage_tui.app.MirageApp`; the screens
(:mod:`mirage_tui.screens.base`) and the job controllers (:mod:`mirage_tui.jobs`) reach the app
through it and never import the app module. :func:`workbench_of` is the one way to get it: under
an app that is not a workbench (a bare ``App`` hosting one screen) it is None, and there is no
store and nothing to run.

This module imports nothing of the project at run time, so anything in ``mirage_tui`` may import
it without a cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from engine.app_config import AppConfig
    from engine.runs import RunConfig
    from engine.runs.plan import Plan
    from engine.store import Store
    from mirage_tui.run_controller import RunController


@runtime_checkable
class Workbench(Protocol):
    """What the screens need from the app."""

    store: Store | None
    """The workspace; None while it is opening (or when it failed to open)."""
    threads: int | None
    """llama.cpp threads asked for on the command line (None: auto)."""
    run_controller: RunController
    """The app's one run at a time."""
    settings: AppConfig
    """The app's settings (config.toml, :mod:`engine.app_config`; the defaults without one)."""

    def start_run(self, config: RunConfig, *, force_new: bool = False,
                  plan: Plan | None = None) -> bool:
        """Start ``config`` (``plan``: its plan, made already) and follow it on Live run;
        False when it cannot start now."""
        ...

    def go_to(self, mode: str) -> bool:
        """Show a mode's screen (datasets, models, runs, leaderboard, new_run, live)."""
        ...

    def show_run(self, run_name: str) -> None:
        """Open Live run on a stored run."""
        ...

    def action_go_back(self) -> None:
        """Pop a pushed screen, else return to the previous mode."""
        ...

    def action_cancel_run(self) -> None:
        """Ask, then cancel the current run (its item in progress cut)."""
        ...


def workbench_of(app: object) -> Workbench | None:
    """``app`` as a :class:`Workbench`; None when it is not one."""
    return app if isinstance(app, Workbench) else None
