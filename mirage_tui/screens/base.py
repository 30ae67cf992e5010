"""What every screen and dialog of the app stands on.

- :class:`~mirage_tui.workbench.Workbench` (in its own module): what the screens use of the
  app (the store, threads, the run controller, starting a run, moving between screens), as a
  Protocol that :class:`mirage_tui.app.MirageApp` implements. Screens never import the app
  module.
- :class:`BaseScreen` and :class:`BaseModal`: typed access to the workbench
  (``self.store``, ``self.run_controller``, ``self.go_back()`` …), the one worker-error
  safety net (:func:`report_worker_error`), and the screen's palette commands as class data
  (``PALETTE``, ``PALETTE_AFTER``; see :mod:`mirage_tui.commands`).
- :class:`WorkerFailed` and ``worker_errors``: what a screen's thread worker that reads the
  store does with an error it expects (a message the screen shows, notified with
  ``notify_failed``) and with its connection (closed at the end).

Under an app that is not a workbench (a bare ``App`` hosting one screen) ``workbench`` is
None and the screens behave as before the workspace opened: no store, nothing to run.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar, Iterator, Protocol

from textual.message import Message
from textual.screen import ModalScreen, Screen, ScreenResultType
from textual.worker import Worker, WorkerState

from mirage_tui.screens.hosts import NodeHost
from mirage_tui.workbench import Workbench, workbench_of

if TYPE_CHECKING:
    from textual.binding import ActiveBinding
    from textual.timer import Timer

    from engine.app_config import AppConfig
    from engine.runs import RunConfig
    from engine.runs.plan import Plan
    from engine.store import Store
    from mirage_tui.commands import PaletteCommand
    from mirage_tui.run_controller import RunController

STORE_RETRY = 0.25
"""Seconds before a screen asks again for the store while the workspace is opening."""

WATCH_INTERVAL = 1.0
"""Seconds between two looks at the store by a screen that follows it (:meth:`watch_store`)."""


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


class StoreWatch:
    """What a screen's store watch (:meth:`WorkbenchAccess.watch_store`) last saw of the store:
    the fingerprint its last look read, or its loader read before the rows it shows."""

    _UNSEEN = object()

    def __init__(self) -> None:
        self._value: object = self._UNSEEN

    def saw(self, value: object) -> None:
        """The store is known as it was when ``value`` was read (on the UI thread)."""
        self._value = value

    def differs(self, value: object) -> bool:
        """Whether ``value`` is news: nothing seen yet, or not what was seen last."""
        return self._value is self._UNSEEN or self._value != value


@dataclass
class WorkerFailed(Message):
    """A screen's worker could not do ``what`` (``"the runs"``); ``error``: ``Type: message``
    (an output file's fault: its own one line, which names the path)."""
    what: str
    error: str


class WorkbenchAccessHost(NodeHost, Protocol):
    """What :class:`WorkbenchAccess` uses of the Textual screen it is mixed into."""

    @property
    def is_current(self) -> bool: ...

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]: ...

    def set_interval(self, interval: float,
                     callback: Callable[[], object] | None = None) -> Timer: ...


if TYPE_CHECKING:
    _Host = WorkbenchAccessHost
else:
    _Host = object


class WorkbenchAccess(_Host):
    """The part :class:`BaseScreen` and :class:`BaseModal` share (mixed into a Screen; what it
    uses of the screen: :class:`WorkbenchAccessHost`)."""

    PALETTE: ClassVar[tuple[PaletteCommand, ...]] = ()
    """The palette commands that make sense only on this screen."""
    PALETTE_AFTER: ClassVar[str] = ""
    """The action of the app's palette command after which ``PALETTE`` is listed."""

    @property
    def workbench(self) -> Workbench | None:
        return workbench_of(self.app)

    @property
    def store(self) -> Store | None:
        workbench = self.workbench
        return workbench.store if workbench is not None else None

    @property
    def threads(self) -> int | None:
        workbench = self.workbench
        return workbench.threads if workbench is not None else None

    @property
    def app_settings(self) -> AppConfig:
        """The app's settings (config.toml, :mod:`engine.app_config`); the defaults under an
        app that has none."""
        from engine.app_config import AppConfig

        workbench = self.workbench
        return workbench.settings if workbench is not None else AppConfig()

    @property
    def run_controller(self) -> RunController | None:
        workbench = self.workbench
        return workbench.run_controller if workbench is not None else None

    def store_or_retry(self, retry: Callable[[], object]) -> Store | None:
        """The store; while the workspace is still opening, None, and ``retry`` is called
        again in a moment."""
        store = self.store
        if store is None:
            self.set_timer(STORE_RETRY, retry)
        return store

    def watch_store(self, fingerprint: Callable[[Store], object], changed: Callable[[], object],
                    interval: float = WATCH_INTERVAL) -> StoreWatch:
        """Keep the screen live: every ``interval`` seconds while it is shown, read
        ``fingerprint(store)`` (an engine function: one small aggregate query, cheaper than a
        worker) and call ``changed()`` when it differs from the last one seen, so that what
        another process or the app's own run wrote appears without a key. The screen's loader
        reads the fingerprint before what it shows and hands it to the returned
        :class:`StoreWatch` (``saw``): a look that finds the store as it was loaded then reloads
        nothing, and one that finds a write made meanwhile reloads. Until a load was seen, the
        first look counts as a change; a screen shown again after a while catches up at its
        next look."""
        watch = StoreWatch()

        def look() -> None:
            store = self.store
            if store is None or not self.is_current:
                return
            try:
                value = fingerprint(store)
            except Exception:  # noqa: BLE001 - a busy or odd store: look again next time
                return
            if watch.differs(value):
                changed()
            watch.saw(value)

        self.set_interval(interval, look)
        return watch

    def start_run(self, config: RunConfig, plan: Plan | None = None) -> bool:
        workbench = self.workbench
        return workbench.start_run(config, plan=plan) if workbench is not None else False

    def go_back(self) -> None:
        """Escape: the app's go back (pop a pushed screen, else the previous mode); under
        another app, pop this screen when it was pushed."""
        workbench = self.workbench
        if workbench is not None:
            workbench.action_go_back()
        elif len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    @contextmanager
    def worker_errors(self, what: str, store: Store, *, prefix: str = "") -> Iterator[None]:
        """In a thread worker that reads ``store``: an error becomes a :class:`WorkerFailed`
        ``(what, prefix + "Type: message")`` posted to this screen, and this thread's
        connection is closed at the end, whatever happened (:func:`.features.failures_as`)."""
        from mirage_tui.screens.features import failures_as

        with failures_as(self, lambda error: WorkerFailed(what, error), store, prefix):
            yield

    def notify_failed(self, failed: WorkerFailed, doing: str = "load", *,
                      timeout: float = 10) -> None:
        """An error notification that a worker could not ``doing`` its ``what`` (titled
        "Could not load the runs"), holding its one line: what each screen's
        :class:`WorkerFailed` handler does besides showing the line in place."""
        self.app.notify(failed.error, title=f"Could not {doing} {failed.what}",
                        severity="error", markup=False, timeout=timeout)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Textual calls this after a subclass's own handler of the message, never instead
        report_worker_error(event)

    _footer_shown: tuple | None = None

    def refresh_bindings(self) -> None:
        """Tell the footer only when what it shows has changed. Textual's Footer recomposes on
        every call, and each recompose leaves its new keys' watchers on the Footer for good
        (their ``compact`` reactive never changes, so the list is never pruned, and each add
        scans it): Live, redrawn a few times a second, slowed to a freeze within a long run."""
        shown = self._footer_state()
        if shown is not None and shown == self._footer_shown:
            return
        self._footer_shown = shown
        super().refresh_bindings()

    def _footer_state(self) -> tuple | None:
        """Everything the footer draws from: the keys shown, enabled or not, their words and
        tooltips, the key map, whether the app has focus; None before there is an app."""
        try:
            app = self.app
            active = self.active_bindings
        except Exception:       # not attached yet: always pass the call on
            return None
        keys = tuple((key, b.binding.action, b.binding.description, b.binding.show,
                      b.binding.key_display, b.enabled, b.tooltip) for key, b in active.items())
        return (app.app_focus, tuple(sorted(getattr(app, "_keymap", {}).items())), keys)


class BaseScreen(WorkbenchAccess, Screen):
    """A full screen of the app."""


class BaseModal(WorkbenchAccess, ModalScreen[ScreenResultType]):
    """A dialog of the app: a modal screen that answers with a ``ScreenResultType``."""
