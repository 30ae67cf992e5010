"""The runs screen: the workspace's runs, one run's summary, two runs compared, an export.

The list is the run history's rows (``engine.results.comparison.run_rows``), its columns fit
to the width, following the store: this module. Its keys are mixed in, one idea each: Enter's
summary (then following the highlight), space to mark and ``c`` to compare
(:mod:`.runs_summary`); ``e`` export and ``u`` resume (:mod:`.runs_keys`); ``R`` rename, ``D``
delete and ``L`` the log (:mod:`.runs_manage`). The engine writes the text; this screen only
draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from engine.results.comparison import RunRow, run_rows
from engine.results.text import short_setting
from engine.store.runs import runs_fingerprint
from mirage_tui.commands import PaletteCommand
from mirage_tui.screens.base import BaseScreen, WorkerFailed
from mirage_tui.screens.runs_keys import RunExportResumeKeys
from mirage_tui.screens.runs_manage import RunManageKeys
from mirage_tui.screens.runs_summary import RunSummaryKeys
from mirage_tui.widgets.footer import Footer
from mirage_tui.widgets.safe_text import elided_cell, generator_names, generators_cell
from mirage_tui.widgets.tables import columns_that_fit, highlighted_key, title_naming

EMPTY = ("No runs yet in this workspace. Start one from the command line, e.g.\n"
         "  mirage-tui run --dataset demo --generator smollm2-135m-instruct --sample 20\n"
         "or from the app's New run screen; it appears here as soon as it starts.")
GENERATORS_WIDTH = 20
"""The generators column's width: the run's generators less the words all the runs' share."""
KEYS = ("Enter: the run's summary (then it follows the highlight) · space marks a run, c on "
        "another compares the two · u resume · R rename · D delete · L log")
"""The hint line: what the footer's one-word keys do not say."""

COLUMNS = ("run", "dataset", "status", "items", "generators", "settings", "seed", "device",
           "created", "updated")
PRIORITY = ("run", "status", "items", "generators", "settings", "dataset", "updated",
            "created", "device", "seed")
"""The columns kept when the terminal is narrow, most important first (80 columns: the
first six)."""


# --------------------------------------------------------------------------- the screen


class RunsScreen(RunSummaryKeys, RunManageKeys, RunExportResumeKeys, BaseScreen):
    """The workspace's runs. Escape goes back."""

    AUTO_FOCUS = "#runs"

    BINDINGS = [
        Binding("escape", "back", "Back", show=False),   # as on every screen
        Binding("enter", "summary", "Summary", show=False),
        Binding("i", "inspect", "Inspector"),
        Binding("b", "leaderboard", "Leaderboard"),
        Binding("space", "mark", "Mark"),
        Binding("c", "compare", "Compare"),
        Binding("e", "export", "Export"),
        Binding("r", "refresh", "Refresh"),
        Binding("u", "resume", "Resume"),
        Binding("u", "resume_why", "Resume", show=False),   # says why it cannot
        Binding("R", "rename", "Rename", show=False),
        Binding("D", "delete", "Delete", show=False),
        Binding("L", "log", "Log", show=False),
    ]

    PALETTE = (
        PaletteCommand("runs: summary of selected", "The highlighted run's report summary "
                       "(Enter)", "summary"),
        PaletteCommand("runs: inspect selected", "The Inspector on the highlighted run (i)",
                       "inspect"),
        PaletteCommand("runs: leaderboard of selected",
                       "The arena leaderboard of the highlighted run (b)", "leaderboard"),
        PaletteCommand("runs: mark selected", "Mark the highlighted run to compare (space)",
                       "mark"),
        PaletteCommand("runs: compare with the mark",
                       "Compare the highlighted run with the marked one (c)", "compare"),
        PaletteCommand("runs: export selected…",
                       "Write the highlighted run's items as JSONL or CSV (e)", "export"),
        PaletteCommand("runs: refresh", "Read the run list again (r)", "refresh"),
        PaletteCommand("runs: resume the highlighted run",
                       "Continue a cancelled or interrupted run where it stopped (u)",
                       "resume"),
        PaletteCommand("runs: rename the highlighted run…", "Give it a new name (R)", "rename"),
        PaletteCommand("runs: delete the highlighted run…",
                       "Asked first; cached generations stay unless purged (D)", "delete"),
        PaletteCommand("runs: show the highlighted run's log",
                       "Sessions, model loads, retries, errors (L)", "log"),
    )
    PALETTE_AFTER = "show_runs"

    DEFAULT_CSS = """
    RunsScreen #runs { height: auto; max-height: 40%; border-top: round $primary 50%; }
    RunsScreen #runs:focus { border-top: round $accent; }
    RunsScreen #runs-hint { height: auto; padding: 0 1; color: $text-muted; }
    RunsScreen #summary-pane { height: 1fr; border: round $primary 30%; padding: 0 1; }
    """

    @dataclass
    class RunsLoaded(Message):
        rows: list[RunRow]

    @dataclass
    class SummaryReady(Message):
        generation: int
        text: Text

    @dataclass
    class SidesPaired(Message):
        """A and B, and the side still to choose (``system_choice``), if any."""
        a: str
        b: str
        choice: tuple[str, str, list[str]] | None

    @dataclass
    class Managed(Message):
        """Run ``old`` was renamed to ``new`` or deleted (``new`` None); ``note`` says so."""
        note: str
        old: str
        new: str | None = None

    @dataclass
    class LogLoaded(Message):
        run: str
        lines: list

    def __init__(self) -> None:
        super().__init__()
        self.runs: dict[str, RunRow] = {}
        self.marked: str | None = None
        self.generation = 0
        self.rows: list[RunRow] = []
        self.shown_columns: list[str] = []
        self._keep: str | None = None     # the run to highlight after the next load
        self.summary_of: str | None = None  # the run the summary pane shows (or computes)

    def compose(self) -> ComposeResult:
        yield Header()
        runs = DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        runs.border_title = "Runs"
        yield runs
        yield Static(KEYS, id="runs-hint", markup=False)
        with VerticalScroll(id="summary-pane"):
            yield Static("Loading the runs…", id="run-summary", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "runs"
        table = self.query_one("#runs", DataTable)
        table.focus()
        self.action_refresh()
        # live: a run going here or in another process, a run added from the CLI
        self.watch_store(runs_fingerprint, self.action_refresh)

    def action_refresh(self) -> None:
        store = self.store_or_retry(self.action_refresh)
        if store is not None:
            self.load_runs(store)

    @work(thread=True, exclusive=True, exit_on_error=False, group="runs", name="load runs")
    def load_runs(self, store) -> None:
        with self.worker_errors("the runs", store):
            self.post_message(self.RunsLoaded(run_rows(store)))

    @on(RunsLoaded)
    def _runs_loaded(self, message: RunsLoaded) -> None:
        table = self.query_one("#runs", DataTable)
        keep, self._keep = self._keep or self.highlighted_run(), None
        self.runs = {r.name: r for r in message.rows}
        self.rows = message.rows
        if self.marked not in self.runs:
            self.marked = None
        self._fill(force=True)
        table.border_subtitle = Text(f"{len(message.rows)} runs")
        if not message.rows:
            self.show_summary_text(Text(EMPTY))
            return
        if keep in self.runs:
            table.move_cursor(row=table.get_row_index(keep))
        if self.generation == 0:     # no summary asked for yet (the keys are on the line above)
            self.show_summary_text(Text("Enter shows the highlighted run's summary."))
        self.refresh_bindings()

    def on_resize(self) -> None:
        self._fill()

    def _fill(self, force: bool = False) -> None:
        """The rows in the columns that fit the table's width (:data:`PRIORITY`); the
        columns are rebuilt only when another set fits (or ``force``: new rows)."""
        table = self.query_one("#runs", DataTable)
        self._names, caption = generator_names(self.rows, GENERATORS_WIDTH)
        self.query_one("#runs-hint", Static).update(
            f"generators {caption}\n{KEYS}" if caption else KEYS)
        cells = [dict(zip(COLUMNS, self._cells(r))) for r in self.rows]
        widths = {c: max([len(c)] + [row[c].cell_len for row in cells]) for c in COLUMNS}
        available = (table.size.width or self.size.width) - 2   # the scrollbar's cells
        fit = set(columns_that_fit(widths, list(PRIORITY), available))
        shown = [c for c in COLUMNS if c in fit]
        # the generators take the cells the shown columns leave, up to their whole names
        room = available - sum(widths[c] + 2 for c in shown)
        wide = min(max([0] + [cell_len(", ".join(self._names.get(g, g) for g in r.generators))
                              for r in self.rows]),
                   widths["generators"] + max(0, room)) if "generators" in fit else 0
        if wide > widths["generators"]:
            for r, row in zip(self.rows, cells):
                row["generators"] = generators_cell(r.generators, self._names, wide)
        if (shown, wide) == (self.shown_columns, self._generators_width) and not force:
            return
        keep = self.highlighted_run()
        self.shown_columns, self._generators_width = shown, wide
        # the table has no bottom border: the columns left out are named in its title
        table.border_title = title_naming("Runs", [c for c in COLUMNS if c not in fit], "Enter")
        table.clear(columns=True)
        for c in shown:
            table.add_column(c, key=c)
        for r, row in zip(self.rows, cells):
            table.add_row(*(row[c] for c in shown), key=r.name)
        if keep in self.runs:
            table.move_cursor(row=table.get_row_index(keep))

    def _cells(self, r: RunRow) -> list[Text]:
        # tight: ten columns must fit 100 cells; the summary repeats everything in full
        same_day = r.updated[:10] == r.created[:10]
        return [self.name_cell(r.name), elided_cell(r.dataset, 16), Text(r.status),
                Text(f"{r.done}/{r.total}", justify="right"),
                generators_cell(r.generators, self._names, GENERATORS_WIDTH),
                elided_cell(" ".join(short_setting(s) for s in r.settings), 22),
                Text(r.seeds), Text(", ".join(r.devices) or "—"), Text(r.created[:10]),
                Text(r.updated[11:16] if same_day else r.updated[:10])]

    _names: dict[str, str] = {}
    _generators_width = 0

    def name_cell(self, name: str) -> Text:
        # long names elided (tail kept), so that the generators fit at 80 columns too
        return elided_cell(f"● {name}" if name == self.marked else name, 26)

    def highlighted_run(self) -> str | None:
        return highlighted_key(self.query_one("#runs", DataTable))

    def show_summary_text(self, text: Text) -> None:
        self.query_one("#run-summary", Static).update(text)
        self.query_one("#summary-pane", VerticalScroll).scroll_home(animate=False)

    def need_run(self) -> str | None:
        name = self.highlighted_run()
        if name is None:
            self.notify("No run here yet.", timeout=3)
        return name

    # ------------------------------------------------------------------ other screens

    def action_inspect(self) -> None:
        from mirage_tui.screens.inspector import InspectorScreen

        name = self.need_run()
        if name is not None:
            self.app.push_screen(InspectorScreen(name))

    def action_leaderboard(self) -> None:
        from mirage_tui.screens.leaderboard import LeaderboardScreen

        name = self.need_run()
        if name is not None:
            self.app.push_screen(LeaderboardScreen(name))

    # ------------------------------------------------------------------ the rest

    def action_back(self) -> None:
        self.go_back()      # pop a pushed screen, else the previous mode

    @on(WorkerFailed)
    def _failed(self, message: WorkerFailed) -> None:
        if message.what in ("the runs", "the report", "the comparison"):
            self.show_summary_text(Text(f"Could not load {message.what}: {message.error}"))
        self.notify_failed(message, "do" if message.what in ("the export", "the change")
                           else "load")
