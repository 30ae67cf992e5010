"""What every screen and dialog of the app stands on.

- :class:`Workbench`: what the screens use of the app (the store, threads, the run
  controller, starting a run, moving between screens), as a Protocol that
  :class:`mirage_tui.app.MirageApp` implements. Screens never import the app module.
- :class:`BaseScreen` and :class:`BaseModal`: typed access to the workbench
  (``self.store``, ``self.run_controller``, ``self.go_back()`` …), the one worker-error
  safety net (:func:`report_worker_error`), and the screen's palette commands as class data
  (``PALETTE``, ``PALETTE_AFTER``; see :mod:`mirage_tui.commands`).

Under an app that is not a workbench (a bare ``App`` hosting one screen) ``workbench`` is
None and the screens behave as before the workspace opened: no store, nothing to run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

from textual.screen import ModalScreen, Screen, ScreenResultType
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from engine.runs import RunConfig
    from engine.store import Store
    from mirage_tui.commands import PaletteCommand
    from mirage_tui.run_controller import RunController


def report_worker_error(event: Worker.StateChanged) -> None:
    """The safety net: a worker that raised anyway becomes an error notification.

    Workers catch the errors they expect themselves; this catches the rest, so that
    ``exit_on_error=False`` never means an error vanishes silently.
    """
    if event.state is WorkerState.ERROR and event.worker.error is not None:
        error = event.worker.error
        event.worker.node.app.notify(f"{type(error).__name__}: {error}",
                                     title=event.worker.name or "background task",
                                     severity="error", markup=False, timeout=10)


@runtime_checkable
class Workbench(Protocol):
    """What the screens need from the app."""

    store: Store | None
    """The workspace; None while it is opening (or when it failed to open)."""
    threads: int | None
    """llama.cpp threads asked for on the command line (None: auto)."""
    run_controller: RunController
    """The app's one run at a time."""

    def start_run(self, config: RunConfig, *, force_new: bool = False) -> bool:
        """Start ``config`` and follow it on Live run; False when it cannot start now."""
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
        """Ask, then cancel the current run after its item."""
        ...


class WorkbenchAccess:
    """The part :class:`BaseScreen` and :class:`BaseModal` share (mixed into a Screen)."""

    PALETTE: ClassVar[tuple[PaletteCommand, ...]] = ()
    """The palette commands that make sense only on this screen."""
    PALETTE_AFTER: ClassVar[str] = ""
    """The action of the app's palette command after which ``PALETTE`` is listed."""

    @property
    def workbench(self) -> Workbench | None:
        app = self.app  # type: ignore[attr-defined]
        return app if isinstance(app, Workbench) else None

    @property
    def store(self) -> Store | None:
        workbench = self.workbench
        return workbench.store if workbench is not None else None

    @property
    def threads(self) -> int | None:
        workbench = self.workbench
        return workbench.threads if workbench is not None else None

    @property
    def run_controller(self) -> RunController | None:
        workbench = self.workbench
        return workbench.run_controller if workbench is not None else None

    def start_run(self, config: RunConfig) -> bool:
        workbench = self.workbench
        return workbench.start_run(config) if workbench is not None else False

    def go_back(self) -> None:
        """Escape: the app's go back (pop a pushed screen, else the previous mode); under
        another app, pop this screen when it was pushed."""
        workbench = self.workbench
        if workbench is not None:
            workbench.action_go_back()
        elif len(self.app.screen_stack) > 1:  # type: ignore[attr-defined]
            self.app.pop_screen()  # type: ignore[attr-defined]

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Textual calls this after a subclass's own handler of the message, never instead
        report_worker_error(event)


class BaseScreen(WorkbenchAccess, Screen):
    """A full screen of the app."""


class BaseModal(WorkbenchAccess, ModalScreen[ScreenResultType]):
    """A dialog of the app: a modal screen that answers with a ``ScreenResultType``."""
