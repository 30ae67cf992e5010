"""The runs screen: the workspace's runs, one run's summary, two runs compared, an export.

The list is the run history's rows (``engine.results.comparison.run_rows``), its columns fit
to the width, following the store: this module. The rest are its parts, widgets that each
hold their own state and workers and say what happened by messages: the summary pane, Enter's
summary then following the highlight (:class:`~.runs_summary.RunSummary`); space to mark and
``c`` to compare (:class:`~.runs_summary.RunCompare`); ``e`` export and ``u`` resume
(:class:`~.runs_keys.RunExportResume`); ``R`` rename, ``D`` delete and ``L`` the log
(:class:`~.runs_manage.RunManage`). Their keys are bound here, in the footer's order, so that
each acts wherever the focus is; the screen tells them which run is highlighted. The engine
writes the text; this screen only draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from engine.results.comparison import RunRow, run_rows
from engine.results.text import short_setting
from engine.store.runs import runs_fingerprint
from mirage_tui.commands import PaletteCommand
from mirage_tui.screens.base import BaseScreen
from mirage_tui.screens.features import failures_as, in_footer_order
from mirage_tui.screens.runs_keys import RunExportResume
from mirage_tui.screens.runs_manage import RunManage
from mirage_tui.screens.runs_messages import ComparisonFailed, RunsFailed
from mirage_tui.screens.runs_summary import RunCompare, RunSummary
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

FOOTER_ORDER = ("back", "summary", "inspect", "leaderboard", "mark", "compare", "export",
                "refresh", "resume", "resume_why", "rename", "delete", "log")
"""The screen's and its parts' keys, in the footer's order."""


# --------------------------------------------------------------------------- the screen


class RunsScreen(BaseScreen):
    """The workspace's runs. Escape goes back."""

    AUTO_FOCUS = "#runs"

    BINDINGS = in_footer_order(
        FOOTER_ORDER,
        [Binding("escape", "back", "Back", show=False),   # as on every screen
         Binding("i", "inspect", "Inspector"),
         Binding("b", "leaderboard", "Leaderboard"),
         Binding("r", "refresh", "Refresh")],
        RunSummary.KEYS, RunCompare.KEYS, RunExportResume.KEYS, RunManage.KEYS)

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
        fingerprint: object = None
        """The store's run fingerprint, read before the rows (what the watch saw)."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: dict[str, RunRow] = {}
        self.rows: list[RunRow] = []
        self.shown_columns: list[str] = []
        self._keep: str | None = None     # the run to highlight after the next load
        self.summary = RunSummary(id="summary-pane")
        self.pairing = RunCompare()
        self.changes = RunManage()
        self.export_resume = RunExportResume()

    @property
    def marked(self) -> str | None:
        """The run marked to compare with (:class:`RunCompare`'s)."""
        return self.pairing.marked

    def compose(self) -> ComposeResult:
        yield Header()
        runs = DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        runs.border_title = "Runs"
        yield runs
        yield Static(KEYS, id="runs-hint", markup=False)
        yield self.summary
        yield Footer(compact=True)
        yield self.pairing
        yield self.changes
        yield self.export_resume

    def on_mount(self) -> None:
        self.sub_title = "runs"
        table = self.query_one("#runs", DataTable)
        table.focus()
        # live: a run going here or in another process, a run added from the CLI
        self._watch = self.watch_store(runs_fingerprint, self.action_refresh)
        self.action_refresh()

    def action_refresh(self) -> None:
        store = self.store_or_retry(self.action_refresh)
        if store is not None:
            self.load_runs(store)

    @work(thread=True, exclusive=True, exit_on_error=False, group="runs", name="load runs")
    def load_runs(self, store) -> None:
        with failures_as(self, RunsFailed, store):
            fingerprint = runs_fingerprint(store)      # first: a write after it is news
            self.post_message(self.RunsLoaded(run_rows(store), fingerprint))

    @on(RunsLoaded)
    def _runs_loaded(self, message: RunsLoaded) -> None:
        self._watch.saw(message.fingerprint)
        table = self.query_one("#runs", DataTable)
        keep, self._keep = self._keep or self.highlighted_run(), None
        self.runs = {r.name: r for r in message.rows}
        self.rows = message.rows
        self.pairing.keep_only(self.runs)
        self._fill(force=True)
        table.border_subtitle = Text(f"{len(message.rows)} runs")
        if not message.rows:
            self.show_summary_text(Text(EMPTY))
            return
        if keep in self.runs:
            table.move_cursor(row=table.get_row_index(keep))
        if not self.summary.asked:     # no summary asked for yet (the keys are on the line above)
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
        self.summary.show(text)

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

    # ------------------------------------------------------------------ the parts

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "runs":
            self.action_summary()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "runs":
            self.refresh_bindings()
            self.summary.follow(self.highlighted_run())

    def action_summary(self) -> None:
        name = self.need_run()
        store = self.store
        if name is not None and store is not None:
            self.summary.summarize(store, name, self.runs.get(name))

    @on(RunSummary.Due)
    def _summary_due(self, message: RunSummary.Due) -> None:
        if self.highlighted_run() == message.run:
            self.action_summary()

    def action_mark(self) -> None:
        name = self.need_run()
        if name is not None:
            self.pairing.mark(name)

    @on(RunCompare.Marked)
    def _marked(self, message: RunCompare.Marked) -> None:
        table = self.query_one("#runs", DataTable)
        for run in {message.old, message.new} - {None}:
            if run in self.runs:
                table.update_cell(run, "run", self.name_cell(run), update_width=True)

    def action_compare(self) -> None:
        name = self.need_run()
        if name is not None:
            self.pairing.compare(name)

    def action_rename(self) -> None:
        name = self.need_run()
        if name is not None:
            self.changes.rename(name, self.runs)

    def action_delete(self) -> None:
        name = self.need_run()
        if name is not None:
            self.changes.delete(name)

    def action_log(self) -> None:
        name = self.need_run()
        if name is not None:
            self.changes.log(name)

    @on(RunManage.Managed)
    def _managed(self, message: RunManage.Managed) -> None:
        self.pairing.renamed(message.old, message.new)
        self.app.notify(message.note, title="Runs", markup=False, timeout=6)
        self._keep = message.new
        self.action_refresh()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``u`` is in the footer only on a run that can resume (a hidden ``u`` says why)."""
        if action != "resume":
            return True
        name = self.highlighted_run()
        return self.export_resume.resumable(self.runs.get(name) if name else None)

    def action_resume(self) -> None:
        name = self.need_run()
        if name is not None:
            self.export_resume.resume(name, self.runs.get(name))

    def action_resume_why(self) -> None:
        self.action_resume()

    def action_export(self) -> None:
        name = self.need_run()
        if name is not None:
            self.export_resume.ask(name)

    # ------------------------------------------------------------------ the rest

    def action_back(self) -> None:
        self.go_back()      # pop a pushed screen, else the previous mode

    @on(RunsFailed)
    @on(ComparisonFailed)
    def _failed(self, message: RunsFailed | ComparisonFailed) -> None:
        self.summary.show_failure(message)
