"""The runs screen: the workspace's runs, one run's summary, two runs compared, an export.

The list is the run history's rows (``engine.results.comparison.run_rows``); Enter computes the
run's report (``engine.results.report.build_report``: accuracy per system × setting and
NV/CA/CI/CM, each with its 95% CI and n) in a worker and shows its summary
(``summary_segments``); from then on the summary follows the highlight (a moment after it
stops), so that the pane never shows another run than the highlighted one. Space marks a run
and ``c`` compares the highlighted run with it (the Compare screen); ``e`` exports the
highlighted run and ``u`` resumes it when it stopped before its end (:mod:`.runs_keys`). ``R``
renames the highlighted run, ``D`` deletes it after a question (its cached generations stay
unless asked; a running run is refused) and ``L`` shows its log (``engine.runs.manage``). The
engine writes the text; this screen only draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Header, Static

from engine.results.comparison import (RunRow, compare_reports, comparison_segments,
                                       run_rows, summary_segments)
from engine.store.runs import runs_fingerprint
from engine.results.text import backend_segments, short_setting
from mirage_tui.commands import PaletteCommand
from mirage_tui.dialogs.pick_system import PickSystemScreen
from mirage_tui.screens.base import BaseScreen, WorkerFailed
from mirage_tui.screens.runs_keys import RunKeys
from mirage_tui.widgets.safe_text import elided_cell
from mirage_tui.widgets.segments import ROLE_STYLES, styled  # noqa: F401 (re-exported)
from mirage_tui.widgets.tables import columns_that_fit, highlighted_key

N_BOOT = 200
FOLLOW_DELAY = 0.3
"""Seconds the highlight rests on a run before its summary is computed."""
EMPTY = ("No runs yet in this workspace. Start one from the command line, e.g.\n"
         "  mirage-tui run --dataset demo --generator smollm2-135m-instruct --sample 20\n"
         "or from the app's New run screen; it appears here as soon as it starts.")
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


class RunsScreen(RunKeys, BaseScreen):
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
        self._follow: Timer | None = None

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
        keep, self._keep = self._keep or self._highlighted(), None
        self.runs = {r.name: r for r in message.rows}
        self.rows = message.rows
        if self.marked not in self.runs:
            self.marked = None
        self._fill(force=True)
        table.border_subtitle = Text(f"{len(message.rows)} runs")
        if not message.rows:
            self._show(Text(EMPTY))
            return
        if keep in self.runs:
            table.move_cursor(row=table.get_row_index(keep))
        if self.generation == 0:     # no summary asked for yet (the keys are on the line above)
            self._show(Text("Enter shows the highlighted run's summary."))
        self.refresh_bindings()

    def on_resize(self) -> None:
        self._fill()

    def _fill(self, force: bool = False) -> None:
        """The rows in the columns that fit the table's width (:data:`PRIORITY`); the
        columns are rebuilt only when another set fits (or ``force``: new rows)."""
        table = self.query_one("#runs", DataTable)
        cells = [dict(zip(COLUMNS, self._cells(r))) for r in self.rows]
        widths = {c: max([len(c)] + [row[c].cell_len for row in cells]) for c in COLUMNS}
        available = (table.size.width or self.size.width) - 2   # the scrollbar's cells
        fit = set(columns_that_fit(widths, list(PRIORITY), available))
        shown = [c for c in COLUMNS if c in fit]
        if shown == self.shown_columns and not force:
            return
        keep = self._highlighted()
        self.shown_columns = shown
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
        return [self._name_cell(r.name), elided_cell(r.dataset, 16), Text(r.status),
                Text(f"{r.done}/{r.total}", justify="right"),
                elided_cell(", ".join(r.generators), 20),
                elided_cell(" ".join(short_setting(s) for s in r.settings), 22),
                Text(r.seeds), Text(", ".join(r.devices) or "—"), Text(r.created[:10]),
                Text(r.updated[11:16] if same_day else r.updated[:10])]

    def _name_cell(self, name: str) -> Text:
        # long names elided (tail kept), so that the generators fit at 80 columns too
        return elided_cell(f"● {name}" if name == self.marked else name, 26)

    def _highlighted(self) -> str | None:
        return highlighted_key(self.query_one("#runs", DataTable))

    def _show(self, text: Text) -> None:
        self.query_one("#run-summary", Static).update(text)
        self.query_one("#summary-pane", VerticalScroll).scroll_home(animate=False)

    def _need_run(self) -> str | None:
        name = self._highlighted()
        if name is None:
            self.notify("No run here yet.", timeout=3)
        return name

    # ------------------------------------------------------------------ summary / compare

    @on(DataTable.RowSelected, "#runs")
    def action_summary(self) -> None:
        name = self._need_run()
        store = self.store
        if name is None or store is None:
            return
        self.generation += 1
        self.summary_of = name
        self._show(Text(f"Computing the report of {name}…"))
        pane = self.query_one("#summary-pane", VerticalScroll)
        self.build_summary(store, [name], self.generation, pane.scrollable_content_region.width)

    @on(DataTable.RowHighlighted, "#runs")
    def _highlight_moved(self) -> None:
        """Once a summary is shown, it follows the highlight: the pane says at once that it
        is being computed, and the report starts when the cursor rests (FOLLOW_DELAY)."""
        self.refresh_bindings()
        name = self._highlighted()
        if self.summary_of is None or name is None or name == self.summary_of:
            return
        self.generation += 1            # a report in flight for the old run is dropped
        self.summary_of = name
        self._show(Text(f"Computing the report of {name}…"))
        if self._follow is not None:
            self._follow.stop()
        self._follow = self.set_timer(FOLLOW_DELAY, self._summary_if_still)

    def _summary_if_still(self) -> None:
        if self._highlighted() == self.summary_of:
            self.action_summary()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``u`` is in the footer only on a run that can resume (a hidden ``u`` says why)."""
        return self.resumable_highlighted() if action == "resume" else True

    def action_resume_why(self) -> None:
        self.action_resume()

    def action_mark(self) -> None:
        name = self._need_run()
        if name is None:
            return
        old, self.marked = self.marked, (None if self.marked == name else name)
        table = self.query_one("#runs", DataTable)
        for run in {old, name} - {None}:
            if run in self.runs:
                table.update_cell(run, "run", self._name_cell(run), update_width=True)
        self.notify(f"Marked {name}: highlight another run and press c to compare."
                    if self.marked else "Mark cleared.", timeout=3, markup=False)

    def action_compare(self) -> None:
        name = self._need_run()
        store = self.store
        if name is None or store is None:
            return
        if self.marked is None or self.marked == name:
            self.notify("Mark a run with space, then highlight another and press c.",
                        timeout=4)
            return
        self.pair_sides(store, self.marked, name)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-compare",
          name="pair two runs")
    def pair_sides(self, store, a: str, b: str) -> None:
        """Whether a side must be asked for (its run has several systems, none of them the
        other side's): then the pick-system dialog, else the Compare screen."""
        from engine.results.paired import system_choice

        with self.worker_errors("the comparison", store):
            self.post_message(self.SidesPaired(a, b, system_choice(store, a, b)))

    @on(SidesPaired)
    def _sides_paired(self, message: SidesPaired) -> None:
        a, b, choice = message.a, message.b, message.choice
        if choice is None:
            from mirage_tui.screens.compare import CompareScreen

            # the paired comparison on shared items, across runs and models (issues 16, 18)
            self.app.push_screen(CompareScreen(a, b))
            return
        side, run, systems = choice
        other = b if side == "a" else a

        def picked(system: str | None) -> None:
            store = self.store
            if system is None or store is None:
                return
            spec = f"{run}:{system}"
            self.pair_sides(store, *((spec, b) if side == "a" else (a, spec)))

        self.app.push_screen(PickSystemScreen(
            systems, f"{run} has {len(systems)} systems; compare which "
                     f"{'(A)' if side == 'a' else '(B)'} with {other}?"), picked)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-summary",
          name="run report")
    def build_summary(self, store, names: list[str], generation: int, width: int) -> None:
        from engine.runs.lookup import load_run
        from engine.results.report import build_report

        with self.worker_errors("the report", store):
            reports = [build_report(store, load_run(store, n), n_boot=N_BOOT, seed=0,
                                    summary_only=True).as_json() for n in names]
            width = max(30, width - 2)      # a scrollbar may come with the text
            segments = backend_segments(
                summary_segments(reports[0], self.runs.get(names[0]), width), reports[0]) \
                if len(reports) == 1 else comparison_segments(compare_reports(*reports), width)
            text = styled(segments)
            self.post_message(self.SummaryReady(generation, text))

    @on(SummaryReady)
    def _summary_ready(self, message: SummaryReady) -> None:
        if message.generation == self.generation:
            self._show(message.text)

    # ------------------------------------------------------------------ other screens

    def action_inspect(self) -> None:
        from mirage_tui.screens.inspector import InspectorScreen

        name = self._need_run()
        if name is not None:
            self.app.push_screen(InspectorScreen(name))

    def action_leaderboard(self) -> None:
        from mirage_tui.screens.leaderboard import LeaderboardScreen

        name = self._need_run()
        if name is not None:
            self.app.push_screen(LeaderboardScreen(name))

    # ------------------------------------------------------------------ rename / delete / log

    def action_rename(self) -> None:
        name = self._need_run()
        if name is None:
            return
        from mirage_tui.dialogs.text_prompt import TextPromptScreen

        def taken(new: str) -> str | None:
            return f"A run named {new} exists already." if new in self.runs and new != name \
                else None

        def chosen(new: str | None) -> None:
            store = self.store
            if new and new != name and store is not None:
                self.manage(store, "rename", name, new)

        self.app.push_screen(TextPromptScreen(
            f"Rename run {name}", name, "Enter renames, Esc cancels. Items, scores, arenas "
            "and the log stay with the run.", "Rename", check=taken), chosen)

    def action_delete(self) -> None:
        name = self._need_run()
        if name is None:
            return
        from mirage_tui.dialogs.choice import Choice, ChoiceModal

        def chosen(answer: str | None) -> None:
            store = self.store
            if answer in ("keep", "purge") and store is not None:
                self.manage(store, answer, name)

        self.app.push_screen(ChoiceModal(
            f"Delete run {name}?",
            "Its items, arenas and log go. Its generations stay in the shared cache (another "
            "run, or the same configuration run again, finds them) unless you also purge the "
            "ones no other run uses.",
            [Choice("keep", "Delete", "d", "error"),
             Choice("purge", "Delete + purge generations", "p", "error"),
             Choice("cancel", "Cancel", "c", "primary")], id="delete-run-modal"), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-manage",
          name="rename or delete a run")
    def manage(self, store, what: str, name: str, new: str | None = None) -> None:
        from engine.runs.manage import delete_run, rename_run

        with self.worker_errors("the change", store):
            if what == "rename":
                new = rename_run(store, name, new or "")
                self.post_message(self.Managed(f"Renamed {name} to {new}.", name, new))
            else:
                gone = delete_run(store, name, purge_generations=what == "purge")
                cache = (f"; {gone.generations} cached generations no other run used were "
                         "dropped" if what == "purge" else "; its cached generations stay")
                self.post_message(self.Managed(f"Deleted {name} ({gone.items} items){cache}.",
                                               name))

    @on(Managed)
    def _managed(self, message: Managed) -> None:
        if self.marked == message.old:
            self.marked = message.new
        self.app.notify(message.note, title="Runs", markup=False, timeout=6)
        self._keep = message.new
        self.action_refresh()

    def action_log(self) -> None:
        name = self._need_run()
        store = self.store
        if name is not None and store is not None:
            self.load_log(store, name)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-log", name="run log")
    def load_log(self, store, name: str) -> None:
        from engine.runs.manage import run_log

        with self.worker_errors("the log", store):
            self.post_message(self.LogLoaded(name, run_log(store, name)))

    @on(LogLoaded)
    def _log_loaded(self, message: LogLoaded) -> None:
        from mirage_tui.dialogs.run_log import RunLogScreen

        self.app.push_screen(RunLogScreen(message.run, message.lines))

    # ------------------------------------------------------------------ the rest

    def action_back(self) -> None:
        self.go_back()      # pop a pushed screen, else the previous mode

    @on(WorkerFailed)
    def _failed(self, message: WorkerFailed) -> None:
        if message.what in ("the runs", "the report", "the comparison"):
            self._show(Text(f"Could not load {message.what}: {message.error}"))
        self.app.notify(message.error, title=f"Could not do {message.what}"
                        if message.what in ("the export", "the change")
                        else f"Could not load {message.what}",
                        severity="error", markup=False, timeout=10)
