"""The mirage-tui Textual app: opens the workspace store, seeds the demo pool, shows datasets.

The app owns the :class:`engine.store.Store`. The store hands each thread its own sqlite
connection, so every worker may call engine functions with ``self.app.store`` directly; no
connection crosses a thread. Blocking engine calls run in thread workers
(``@work(thread=True, exclusive=True, exit_on_error=False)``) and report back with typed
messages, so an engine error becomes a notification, never a crash to the shell.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.message import Message
from textual.widgets import HelpPanel
from textual.worker import Worker, WorkerState

from engine.demo_pool import ensure_demo
from engine.importing import ImportResult
from engine.store import Store, default_db_path
from mirage_tui.screens.datasets import DatasetsScreen


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


# --------------------------------------------------------------------------- commands

# (title, help, action on the screen that holds it, or on the app when the screen lacks it)
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("datasets: import file…", "Import a dataset file or folder into the workspace",
     "import_dataset"),
    ("datasets: refresh", "Reload the dataset list from the workspace", "refresh_datasets"),
    ("datasets: open selected", "Show the queries of the highlighted dataset", "open_dataset"),
    ("queries: search", "Focus the query search box", "focus_search"),
    ("queries: load more", "Load the next page of queries", "load_more_queries"),
    ("query: jump to oracle", "Scroll the query's pool to its oracle chunk", "jump_to_oracle"),
    ("query: next", "Show the next query of the list", "next_query"),
    ("query: previous", "Show the previous query of the list", "previous_query"),
    ("help: show key bindings", "Show the keys of the focused widget and screen", "toggle_help"),
    ("app: toggle dark/light theme", "Switch between the dark and light themes",
     "toggle_dark"),
    ("app: quit", "Quit mirage-tui", "quit"),
)


class MirageCommands(Provider):
    """Verb-first commands (``noun: verb``) for everything the keys do, after posting's."""

    def _available(self):
        screen = self.screen
        for title, help_text, action in COMMANDS:
            if hasattr(screen, f"action_{action}"):
                yield title, help_text, partial(screen.run_action, action)
            elif hasattr(self.app, f"action_{action}") and not title.startswith(
                    ("datasets:", "queries:", "query:")):
                yield title, help_text, partial(self.app.run_action, action)

    async def discover(self) -> Hits:
        for title, help_text, callback in self._available():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._available():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


# --------------------------------------------------------------------------- the app


class MirageApp(App):
    """A local RAG-evaluation workbench."""

    TITLE = "mirage-tui"
    CSS_PATH = Path(__file__).with_name("styles.tcss")  # absolute: subclasses live elsewhere
    COMMANDS = App.COMMANDS | {MirageCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "toggle_help", "Keys", key_display="?"),
    ]

    @dataclass
    class StoreOpened(Message):
        """The workspace is open; ``demo`` is the demo import's result when it ran now."""
        store: Store
        demo: ImportResult | None

    @dataclass
    class StoreFailed(Message):
        error: str

    def __init__(self, db_path: Path | str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.db_path = Path(db_path).expanduser() if db_path is not None else default_db_path()
        self.store: Store | None = None
        self.sub_title = str(self.db_path)

    def on_mount(self) -> None:
        self.push_screen(DatasetsScreen())
        self.open_store()

    @property
    def datasets_screen(self) -> DatasetsScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, DatasetsScreen):
                return screen
        return None

    @work(thread=True, exclusive=True, exit_on_error=False, group="store", name="open workspace")
    def open_store(self) -> None:
        try:
            store = Store(self.db_path)
        except Exception as exc:  # StoreError, OSError: the app stays up and says why
            self.post_message(self.StoreFailed(str(exc)))
            return
        demo = None
        try:
            demo = ensure_demo(store)
        except Exception as exc:  # a missing or broken demo must not keep the user out
            self.notify(f"Demo pool not imported: {exc}", severity="warning", markup=False,
                        timeout=10)
        finally:
            store.close()
        self.post_message(self.StoreOpened(store, demo))

    def on_mirage_app_store_opened(self, message: StoreOpened) -> None:
        self.store = message.store
        demo = message.demo
        if demo is not None and demo.outcome == "imported":
            counts = demo.counts
            self.notify(f"Imported demo pool: {counts.get('queries', 0)} queries, "
                        f"{counts.get('chunks', 0)} chunks. Press Enter on a dataset to "
                        "browse it, i to import your own.", title="Welcome", timeout=8)
        screen = self.datasets_screen
        if screen is not None:
            screen.action_refresh_datasets()

    def on_mirage_app_store_failed(self, message: StoreFailed) -> None:
        self.notify(message.error, title="Cannot open the workspace", severity="error",
                    markup=False, timeout=30)
        screen = self.datasets_screen
        if screen is not None:
            screen.show_store_error(message.error)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(event)

    def action_toggle_help(self) -> None:
        if self.screen.query(HelpPanel):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def action_toggle_dark(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"


def run_app(db_path: Path | str | None = None) -> None:
    """Start the TUI on the workspace at ``db_path`` (created when absent; ``None``: the
    default workspace, ``$MIRAGE_DB`` or the user data directory)."""
    MirageApp(db_path).run()
