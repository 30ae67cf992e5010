"""The mirage-tui Textual app: opens the workspace store, seeds the demo pool, and moves
between its screens.

The app owns the :class:`engine.store.Store`. The store hands each thread its own sqlite
connection, so every worker may call engine functions with ``self.app.store`` directly; no
connection crosses a thread. Blocking engine calls run in thread workers
(``@work(thread=True, exclusive=True, exit_on_error=False)``) and report back with typed
messages, so an engine error becomes a notification, never a crash to the shell.

Screens are Textual *modes* (:mod:`mirage_tui.navigation`): ``1`` Datasets, ``2`` Models,
``3`` Runs, ``4`` Leaderboard, ``n`` New run, ``l`` Live run; Escape pops a pushed screen, or
goes back to the previous mode. The screens see the app through
:class:`mirage_tui.workbench.Workbench`, and never import this module. The app also owns the
:class:`~mirage_tui.run_controller.RunController` (one run at a time): quitting while it runs
asks first, and a run stopped by quitting (or whose process was killed) is offered for resuming
at the next launch (one cancelled on purpose resumes from Runs or Live run, unasked:
:mod:`engine.runs.stops`). The app's side of runs (start, quick comparison, cancel, resume,
the controller's messages) is :mod:`mirage_tui.app_runs`, mixed in.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from textual import work
from textual.binding import Binding
from textual.message import Message
from textual.theme import BUILTIN_THEMES
from textual.widgets import HelpPanel, Input, TextArea
from textual.worker import Worker

from engine.app_config import AppConfig
from engine.datasets.demo_pool import ensure_demo
from engine.datasets.importing import ImportResult
from engine.runs.stops import QUIT
from engine.store.runs import known_runs
from engine.store import Store, default_db_path
from engine.text_fit import fit_long_words
from mirage_tui.commands import MirageCommands, PaletteCommand
from mirage_tui.app_runs import AppRuns
from mirage_tui.dialogs.run_questions import quit_question
from mirage_tui.jobs import stop_jobs
from mirage_tui.keymap import checked, keymap
from mirage_tui.navigation import ScreenNavigation
from mirage_tui.quick_comparison import (QUICK_GENERATORS, QUICK_RETRIEVER, QUICK_SAMPLE,
                                         QuickJudging)
from mirage_tui.run_controller import RunController, launch_offers
from mirage_tui.screens.base import report_worker_error
from mirage_tui.screens.datasets import DatasetsScreen
from mirage_tui.worker_threads import detach_workers

SCREENS = Binding.Group("Screens", compact=True)

NOTE_SECONDS = {"information": 5.0, "warning": 6.0, "error": 10.0}
"""The longest a notification stays, by severity (none covers content for 30 s);
errors stay longest. What describes a screen's content goes on the screen, not in a toast."""
TOAST_WIDTH, TOAST_CHROME = 60, 4      # Textual's Toast: width 60, max 50%; padding, border


def in_text_field(widget) -> bool:
    """Whether ``widget`` takes typed text (an Input, a TextArea): ``?`` is text there."""
    return isinstance(widget, (Input, TextArea))


class MirageApp(AppRuns, ScreenNavigation):
    """A local RAG-evaluation workbench."""

    TITLE = "mirage-tui"
    CSS_PATH = Path(__file__).with_name("styles.tcss")  # absolute: subclasses live elsewhere
    COMMANDS = ScreenNavigation.COMMANDS | {MirageCommands}
    MODES = ScreenNavigation.MODES | {"datasets": DatasetsScreen}
    DEFAULT_MODE = "datasets"
    BINDINGS = [
        # one footer item, "1234 Screens", so that the footer fits 80 columns
        Binding("1", "show_datasets", "Datasets", group=SCREENS),
        Binding("2", "show_models", "Models", group=SCREENS),
        Binding("3", "show_runs", "Runs", group=SCREENS),
        Binding("4", "show_leaderboard", "Leaderboard", group=SCREENS),
        Binding("n", "new_run", "New"),
        Binding("l", "live_run", "Live"),
        Binding("g", "quick_comparison", "Quick"),
        Binding("g", "quick_run", "Quick", show=False),   # the same, once runs exist
        Binding("escape", "go_back", "Back", show=False),
        Binding("ctrl+t", "toggle_dark", "Theme", show=False),
        # ? and q are text in a text field (Textual leaves them out of its footer there): the
        # footer offers F1 and ctrl+q instead (check_action); both act everywhere
        Binding("question_mark", "toggle_help", "Keys", key_display="?"),
        Binding("f1", "toggle_help('field')", "Keys", key_display="F1"),
        Binding("f1", "toggle_help", "Keys", show=False),
        Binding("q", "quit", "Quit"),
        Binding("ctrl+q", "quit('field')", "Quit", key_display="^q", priority=True),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),   # Textual's own
    ]

    # the palette's global commands; the screens declare their own (mirage_tui.commands)
    PALETTE = (
        PaletteCommand("datasets: show", "Go to the datasets screen (1)", "show_datasets"),
        PaletteCommand("models: show", "Go to the models screen (2)", "show_models"),
        PaletteCommand("runs: show history", "Go to the run history (3)", "show_runs"),
        PaletteCommand("runs: new run…", "Configure and start an evaluation run (n)",
                       "new_run"),
        PaletteCommand("runs: quick comparison",
                       "SmolLM2 vs Gemma 3 on 10 demo queries, with retrieval (g)",
                       "quick_comparison"),
        PaletteCommand("runs: live view", "Follow the current or last run (l)", "live_run"),
        PaletteCommand("runs: cancel the current run",
                       "Stop it now; it stays resumable", "cancel_run"),
        PaletteCommand("runs: resume", "Continue the shown (or the last stopped) run",
                       "resume_run"),
        PaletteCommand("quick comparison: stop judging",
                       "Stop judging the quick comparison's arena (j on the Leaderboard "
                       "resumes it)", "stop_quick_judging"),
        PaletteCommand("leaderboard: show", "Go to the leaderboard (4)", "show_leaderboard"),
        PaletteCommand("help: show key bindings",
                       "Show the keys of the focused widget and screen", "toggle_help"),
        PaletteCommand("app: toggle dark/light theme",
                       "Switch between the dark and light themes (ctrl+t)", "toggle_dark"),
        PaletteCommand("app: quit", "Quit mirage-tui", "quit"),
    )

    @dataclass
    class StoreOpened(Message):
        """The workspace is open; ``demo`` is the demo import's result when it ran now;
        ``runs`` counts the stored runs and ``resumable`` lists the stopped ones."""
        store: Store
        demo: ImportResult | None
        runs: int = 0
        resumable: list[dict] = field(default_factory=list)

    @dataclass
    class StoreFailed(Message):
        error: str

    @dataclass
    class QuickChecked(Message):
        """The quick comparison's models were looked for; ``missing`` says what is not there."""
        missing: list[str]

    def __init__(self, db_path: Path | str | None = None, *, threads: int | None = None,
                 generators: Mapping[str, object] | None = None,
                 retrievers: Mapping[str, object] | None = None,
                 settings: AppConfig | None = None, **kwargs) -> None:
        # config.toml (engine/app_config.py): checked against this app's themes and actions;
        # binding ids first, before any screen copies its bindings (mirage_tui/keymap.py)
        self.settings = settings if settings is not None else AppConfig()
        actions = checked(self.settings, type(self), BUILTIN_THEMES)
        super().__init__(**kwargs)
        if self.settings.keys:
            self.set_keymap(keymap(self.settings, actions))
        self.db_path = Path(db_path).expanduser() if db_path is not None else default_db_path()
        self.store: Store | None = None
        self.sub_title = str(self.db_path)
        self.threads = threads
        self.run_controller = RunController(self, generators=generators, retrievers=retrievers,
                                            threads=threads)
        self.quick_judging = QuickJudging(self)
        self.has_runs = False
        self.quit_when_idle = False
        self.hosts_left: list[str] = []     # run_app prints them after the app ends

    def on_mount(self) -> None:
        if self.settings.theme:
            self.theme = self.settings.theme
        for problem in self.settings.problems:
            self.notify(f"{problem}. The app starts with the default for it.",
                        title="Settings", severity="warning", markup=False, timeout=15)
        self.open_store()
        # the language detectors load meanwhile: a run's first score (and so a cancel right
        # after its first item) does not wait for them
        from engine.metrics.language import warm_up

        warm_up()

    def notify(self, message: str, *, title: str = "", severity="information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification of the app, its time on screen capped by :data:`NOTE_SECONDS`."""
        cap = NOTE_SECONDS.get(severity, NOTE_SECONDS["warning"])
        # a toast is min(60, half the screen) wide, less its padding and border: a path wider
        # than that would fold mid-word, so its middle is elided (the file name kept)
        width = max(12, min(TOAST_WIDTH, self.size.width // 2) - TOAST_CHROME)
        message = fit_long_words(str(message), width,
                                 keep=(lambda word: "[" in word) if markup else lambda w: False)
        super().notify(message, title=title, severity=severity, markup=markup,
                       timeout=cap if timeout is None else min(timeout, cap))

    @property
    def datasets_screen(self) -> DatasetsScreen | None:
        return self.mode_screen("datasets", DatasetsScreen)

    # ------------------------------------------------------------------ the workspace

    @work(thread=True, exclusive=True, exit_on_error=False, group="store", name="open workspace")
    def open_store(self) -> None:
        try:
            store = Store(self.db_path)
        except Exception as exc:  # StoreError, OSError: the app stays up and says why
            self.post_message(self.StoreFailed(str(exc)))
            return
        demo, runs, resumable = None, 0, []
        if store.read_only:         # said once; each refused write says so in one line too
            self.notify(f"{self.db_path} cannot be written here: opened for reading only "
                        "(browsing works; a run, an import or a verdict is refused)",
                        title="Read-only workspace", severity="warning", markup=False,
                        timeout=10)
        try:
            demo = None if store.read_only else ensure_demo(store)
        except Exception as exc:  # a missing or broken demo must not keep the user out
            self.notify(f"Demo pool not imported: {exc}", severity="warning", markup=False,
                        timeout=10)
        try:
            runs = len(known_runs(store))
            resumable = launch_offers(store)     # not the ones cancelled on purpose
        except Exception as exc:  # noqa: BLE001 - an old or odd store: no offers, no crash
            self.notify(f"Could not read the stored runs: {exc}", severity="warning",
                        markup=False, timeout=10)
        finally:
            store.close()
        self.post_message(self.StoreOpened(store, demo, runs, resumable))

    def on_mirage_app_store_opened(self, message: StoreOpened) -> None:
        self.store = message.store
        self.has_runs = message.runs > 0
        demo = message.demo
        # the welcome goes on the Datasets screen, above what it describes, not over it
        lines = []
        if demo is not None and demo.outcome == "imported":
            counts = demo.counts
            lines.append(f"Welcome: the demo pool is imported ({counts.get('queries', 0)} "
                         f"queries, {counts.get('chunks', 0)} chunks). Enter on a dataset "
                         "browses it, i imports your own.")
        if not message.resumable and not self.has_runs:
            lines.append(f"No runs yet: g runs a quick comparison ({' vs '.join(QUICK_GENERATORS)}"
                         f" on {QUICK_SAMPLE} demo queries: base, oracle, mixed, "
                         f"{QUICK_RETRIEVER} retrieval @1/3/5, then a leaderboard; a few "
                         "minutes on two cores), n configures a run.")
        screen = self.datasets_screen
        if screen is not None:
            screen.show_welcome("\n".join(lines))
            screen.action_refresh_datasets()
        elif lines:
            self.notify(" ".join(lines), title="Welcome", markup=False)
        if message.resumable:
            self.offer_resume(message.resumable[0], len(message.resumable))
        self.refresh_bindings()

    def on_mirage_app_store_failed(self, message: StoreFailed) -> None:
        self.notify(message.error, title="Cannot open the workspace", severity="error",
                    markup=False, timeout=30)
        screen = self.datasets_screen
        if screen is not None:
            screen.show_store_error(message.error)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(event)

    # ------------------------------------------------------------------ navigation

    def show_run(self, run_name: str) -> None:
        """Open the Live run screen on a stored run (for the other screens to call)."""
        if self.go_to("live"):
            screen = self.live_screen
            if screen is not None:
                screen.show_run(run_name)

    @property
    def live_screen(self):
        from mirage_tui.screens.live_run import LiveRunScreen

        return self.mode_screen("live", LiveRunScreen)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """F1 and ctrl+q in the footer only while a text field has the focus, where ``?``
        and ``q`` are typed; their hidden twins act outside one (and the palette's)."""
        if action in ("toggle_help", "quit") and parameters == ("field",):
            return in_text_field(self.focused)
        return super().check_action(action, parameters)

    def action_toggle_help(self, where: str = "") -> None:
        if self.screen.query(HelpPanel):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def action_toggle_dark(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    # ------------------------------------------------------------------ quitting

    async def action_quit(self, where: str = "") -> None:
        controller = self.run_controller
        if not controller.running:
            self.exit()
            return
        if self.quit_when_idle:
            self.notify("Quitting when the run stops.", timeout=3)
            return

        def answered(answer: str | None) -> None:
            if answer == "stop":
                self.quit_when_idle = True
                controller.cancel(QUIT)     # the next launch offers it (engine.runs.stops)
                self.notify("Stopping the run, then quitting. It stays resumable: the next "
                            "launch offers it." + "".join(
                                f" The {line[0].lower()}{line[1:]}."
                                for line in hosts_after_quitting()), markup=False)
            elif answer == "wait":
                self.quit_when_idle = True
                self.notify("mirage-tui quits when the run is done.", markup=False)

        self.push_screen(quit_question(controller.run_name), answered)

    def on_load(self) -> None:
        # quitting waits for no worker thread, only for jobs to finish their step (below)
        detach_workers()

    async def on_unmount(self) -> None:
        # however the app ends, a running run (or any other job) stops (its item cut) and
        # stays resumable
        await stop_jobs()
        # what becomes of the model hosts this process leased, said once the screen is gone
        self.hosts_left = hosts_after_quitting()


def hosts_after_quitting() -> list[str]:
    """What becomes of the model hosts this process leased once it ends, a line each
    (:func:`models.host.supervisor.hosts_after_quitting`); none when it never reached a host
    (the supervisor not even imported: nothing to import while quitting)."""
    supervisor = sys.modules.get("models.host.supervisor")
    return supervisor.hosts_after_quitting() if supervisor is not None else []


def run_app(db_path: Path | str | None = None, settings: AppConfig | None = None) -> None:
    """Start the TUI on the workspace at ``db_path`` (created when absent; ``None``: the
    default workspace, ``$MIRAGE_DB`` or the user data directory) with the app's settings
    (``settings``: config.toml, :mod:`engine.app_config`)."""
    app = MirageApp(db_path, settings=settings)
    app.run()
    for line in app.hosts_left:      # on the terminal, after the screen is gone
        print(f"mirage-tui: {line}", flush=True)
