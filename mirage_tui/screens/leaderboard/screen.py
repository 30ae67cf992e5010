"""The leaderboard screen: pick the run and the arena, read its ratings, heatmap and surrogate;
judge, compute the surrogate's features, cancel either; Enter inspects a system.

The ranking comes first: over it only the title, one status line (the run and the arena,
named there only) and the table's header; the judge's trust, its rule and the cross-check
follow the table in one line each, in full behind ``t``. ``a`` picks another arena or run in
a list that opens in sight; ``m`` and ``s`` bring the heatmap and the surrogate's ranking into
view in the scrolling pane (Tab reaches it too).

The workers ask the engine through :mod:`.data` and post :mod:`.messages`; what is drawn is
written by :mod:`.board`. The run is looked up by name once, with its arenas, and held: the
ratings, the surrogate, the export and the jobs use that one; a refresh (``r``, the screen
shown again, a job done) reads it again. Judging and the features are a feature widget of
their own (:class:`~.jobs.LeaderboardJobs`: its job controller, its progress bar, its keys),
which the screen binds in the footer's order so that they act wherever the focus is; it tells
the screen what to show by messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Header, Static

from mirage_tui.commands import PaletteCommand
from mirage_tui.screens.base import BaseScreen, WorkerFailed
from mirage_tui.screens.features import in_footer_order
from mirage_tui.screens.leaderboard.board import (NO_RUNS, RATING_COLUMNS, RATING_PRIORITY,
                                                  arena_line, no_arena, rating_rows,
                                                  ratings_notes)
from mirage_tui.screens.leaderboard.data import arena_choices, judge_line, rate, surrogate
from mirage_tui.screens.leaderboard.jobs import LeaderboardJobs
from mirage_tui.screens.leaderboard.messages import (BoardLoaded, ChoicesLoaded, PageExported,
                                                     SurrogateLoaded)
from mirage_tui.screens.leaderboard.status import details_text, status_line
from mirage_tui.widgets.footer import Footer
from mirage_tui.widgets.heatmap import WinFractionHeatmap
from mirage_tui.widgets.one_line import OneLineEach
from mirage_tui.widgets.tables import (highlighted_key, refill_fitting, scrollbar_to_come,
                                       title_naming)

if TYPE_CHECKING:
    from engine.store.runs import RunInfo


FOOTER_ORDER = ("back", "mark", "compare", "judge", "cancel_job", "cancel_job_why", "details",
                "show_heatmap", "show_surrogate", "toggle_counts", "surrogate_features",
                "pick_arena", "refresh", "calibration", "export")
"""The screen's and its jobs' keys, in the footer's order."""


class LeaderboardScreen(BaseScreen):
    """Ratings, heatmap and surrogate of one run's arena. Escape goes back."""

    AUTO_FOCUS = "#ratings"

    BINDINGS = in_footer_order(
        FOOTER_ORDER,
        [Binding("escape", "back", "Back"),
         Binding("space", "mark", "Mark", show=False),
         Binding("v", "compare", "Compare the mark", show=False),
         Binding("t", "details", "Trust"),
         Binding("m", "show_heatmap", "Heatmap"),
         Binding("s", "show_surrogate", "Surrogate"),
         Binding("c", "toggle_counts", "Counts"),
         Binding("a", "pick_arena", "Arena"),
         Binding("r", "refresh", "Refresh"),
         Binding("h", "calibration", "Calibration"),
         Binding("e", "export", "Export HTML")],
        LeaderboardJobs.KEYS)

    PALETTE = (
        PaletteCommand("leaderboard: judge an arena…",
                       "Judge the run's systems pairwise with a judge model (j)", "judge"),
        *LeaderboardJobs.PALETTE,
        PaletteCommand("leaderboard: trust, rule and cross-check in full",
                       "Who judged, how far people agree, the rule that chose the judge and "
                       "the ranking against accuracy, whole (t)", "details"),
        PaletteCommand("leaderboard: heatmap", "Scroll to the win-fraction heatmap (m)",
                       "show_heatmap"),
        PaletteCommand("leaderboard: surrogate ranking",
                       "Scroll to the surrogate judge's ranking (s)", "show_surrogate"),
        PaletteCommand("leaderboard: counts or shares", "Switch the heatmap between win "
                       "shares and battle counts (c)", "toggle_counts"),
        PaletteCommand("leaderboard: surrogate features",
                       "Compute the surrogate's features (u)", "surrogate_features"),
        PaletteCommand("leaderboard: pick an arena or a run",
                       "Choose another arena of the run, or another run (a)", "pick_arena"),
        PaletteCommand("leaderboard: mark selected", "Mark the highlighted system to compare "
                       "(space)", "mark"),
        PaletteCommand("leaderboard: compare with the mark",
                       "Compare the highlighted system with the marked one (v)", "compare"),
        PaletteCommand("leaderboard: judge calibration", "How well the judge agrees with "
                       "people (h)", "calibration"),
        PaletteCommand("leaderboard: refresh", "Read the arenas again (r)", "refresh"),
        PaletteCommand("leaderboard: export HTML", "The arena's leaderboard as one HTML page "
                       "(e)", "export"),
    )
    PALETTE_AFTER = "show_leaderboard"

    DEFAULT_CSS = """
    LeaderboardScreen #lb-status { height: auto; max-height: 3; padding: 0 1;
        color: $text-muted; }
    LeaderboardScreen #lb-progress { height: 1; padding: 0 1; }
    LeaderboardScreen #lb-body { height: 1fr; }
    LeaderboardScreen #lb-body:focus { background-tint: $accent 5%; }
    LeaderboardScreen #lb-judge { height: auto; padding: 0 1; }
    LeaderboardScreen #ratings { height: auto; max-height: 100%; border: round $primary 50%; }
    LeaderboardScreen #ratings:focus { border: round $accent; }
    LeaderboardScreen .lb-block { height: auto; padding: 0 1; margin-top: 1; }
    LeaderboardScreen #lb-heatmap { margin-top: 1; }
    """

    def __init__(self, run_name: str | None = None, arena: str | None = None) -> None:
        super().__init__()
        self.run_name = run_name
        self.run: RunInfo | None = None     # the run named, looked up once with its arenas
        self.arena = arena
        self.arenas: list = []
        self.runs: list[str] = []
        self.ratings = None
        self.generation = 0
        self.jobs = LeaderboardJobs()
        self.marked: str | None = None      # a run system, for v (paired comparison)
        self._resumed = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield OneLineEach("Loading…", id="lb-status")
        yield self.jobs
        with VerticalScroll(id="lb-body"):
            ratings = DataTable(id="ratings", cursor_type="row", zebra_stripes=True)
            ratings.border_title = "Ratings"
            yield ratings
            yield OneLineEach("", id="lb-judge")
            yield Static("", id="lb-notes", classes="lb-block", markup=False)
            yield WinFractionHeatmap(id="lb-heatmap")
            yield Static("", id="lb-surrogate", classes="lb-block", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "leaderboard"
        table = self.query_one("#ratings", DataTable)
        for key, label in RATING_COLUMNS.items():
            table.add_column(label, key=key)
        table.focus()
        self.action_refresh()

    def on_screen_resume(self) -> None:
        """Shown again (back from Calibration, the Inspector, another screen): read the arenas,
        ratings and the judge's calibration again, which may have changed under it."""
        if self._resumed:
            self.action_refresh()
        self._resumed = True        # the first resume is the first show: on_mount loads

    def action_refresh(self) -> None:
        store = self.store_or_retry(self.action_refresh)
        if store is not None:
            self.load_choices(store, self.run_name, self.arena)

    # ------------------------------------------------------------------ choices

    @work(thread=True, exclusive=True, exit_on_error=False, group="lb-choices",
          name="list arenas")
    def load_choices(self, store, run: str | None, arena: str | None) -> None:
        with self.worker_errors("the arenas", store):
            self.post_message(ChoicesLoaded(*arena_choices(store, run, arena)))

    @on(ChoicesLoaded)
    def _choices_loaded(self, message: ChoicesLoaded) -> None:
        self.run, self.arena, self.arenas = message.run, message.arena, message.arenas
        self.run_name = name = message.run.name if message.run is not None else None
        self.runs = list(message.runs) + ([name] if name and name not in message.runs else [])
        if name is None:
            self._empty(NO_RUNS)
        elif message.arena is None:
            self._empty(no_arena(name))
        else:
            self._load_board()

    def _empty(self, text: str) -> None:
        self.generation += 1
        self.ratings = None
        self.query_one("#ratings", DataTable).clear()
        self.query_one("#lb-status", OneLineEach).show(text, one_line=False)
        self.query_one("#lb-notes", Static).update("")
        self.query_one("#lb-judge", OneLineEach).update("")
        self.query_one("#lb-heatmap", WinFractionHeatmap).set_ratings(None)
        self.query_one("#lb-surrogate", Static).update("")

    def action_pick_arena(self) -> None:
        """``a``: the run's arenas, then the other runs, in a list that opens in sight (a
        menu in the one-row picker bar above opened out of sight)."""
        from mirage_tui.dialogs.pick_system import PickSystemScreen

        choices = [(f"arena {a.name} ({a.mode}, {a.battles} battles)", ("arena", a.name))
                   for a in self.arenas]
        choices += [(f"run {name}", ("run", name)) for name in reversed(self.runs)
                    if name != self.run_name]
        if not choices:
            self.notify("No run or arena to pick yet.", timeout=3)
            return
        current = next((i for i, (_, (kind, name)) in enumerate(choices)
                        if kind == "arena" and name == self.arena), 0)

        def picked(label: str | None) -> None:
            kind, name = dict(choices).get(label, (None, None)) if label else (None, None)
            if kind == "arena" and name != self.arena:
                self.arena = name
                self._load_board()
            elif kind == "run" and name != self.run_name:
                self.run_name, self.run, self.arena = name, None, None
                self.action_refresh()

        self.app.push_screen(PickSystemScreen([label for label, _ in choices],
                                              f"Arenas of {self.run_name}, then other runs "
                                              "(Enter picks, Esc keeps this one)",
                                              highlighted=current), picked)

    def action_details(self) -> None:
        """``t``: the status, the judge's trust, its rule and the cross-check, whole."""
        from mirage_tui.dialogs.choice import Choice, ChoiceModal

        status = self.query_one("#lb-status", OneLineEach)
        judge = self.query_one("#lb-judge", OneLineEach)
        body = details_text(str(status.content), str(judge.content), self.ratings)
        self.app.push_screen(ChoiceModal(f"How far to trust {self.arena or 'this arena'}",
                                         body, [Choice("close", "Close", "c", "primary")]))

    def _show_in_body(self, selector: str, what: str) -> None:
        body = self.query_one("#lb-body", VerticalScroll)
        target = self.query_one(selector)
        if self.focused is body and body.region.y <= target.region.y < body.region.bottom:
            self.notify(f"{what} is in view: the arrows and PageDown scroll this pane, Escape "
                        "goes back to the table.", timeout=3, markup=False)
            return
        body.focus()
        body.scroll_to_widget(target, top=True, animate=False)

    def action_show_heatmap(self) -> None:
        """``m``: the heatmap in view (the pane takes the focus: arrows and PageDown
        scroll it, Escape goes back to the table)."""
        self._show_in_body("#lb-heatmap", "The heatmap")

    def action_show_surrogate(self) -> None:
        """``s``: the surrogate judge's ranking in view (as ``m``)."""
        self._show_in_body("#lb-surrogate", "The surrogate's ranking")

    # ------------------------------------------------------------------ ratings + surrogate

    def _arena_info(self):
        return next((a for a in self.arenas if a.name == self.arena), None)

    def _load_board(self) -> None:
        store = self.store
        if store is None or self.run is None or self.arena is None:
            return
        self.generation += 1
        info = self._arena_info()
        if info is not None:
            self.query_one("#lb-status", OneLineEach).show(
                f"{self.run_name} · {arena_line(info)} · computing the ratings…")
        self.query_one("#lb-surrogate", Static).update("")
        self.load_board(store, self.run, self.arena, self.generation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="lb-board",
          name="ratings")
    def load_board(self, store, run: RunInfo, arena: str, generation: int) -> None:
        with self.worker_errors("the ratings", store):
            ratings, error = rate(store, run, arena)
            self.post_message(BoardLoaded(generation, ratings, error,
                                          judge_line(store, run, arena, ratings)))
            if ratings is not None:
                self.post_message(SurrogateLoaded(generation, surrogate(store, run, arena)))

    @on(BoardLoaded)
    def _board_loaded(self, message: BoardLoaded) -> None:
        if message.generation != self.generation:
            return
        info = self._arena_info()
        line = arena_line(info) if info is not None else (self.arena or "")
        heatmap = self.query_one("#lb-heatmap", WinFractionHeatmap)
        self.ratings = r = message.ratings
        self.query_one("#lb-judge", OneLineEach).update(message.judge_line)
        if r is None:
            self.query_one("#ratings", DataTable).clear()
            self.query_one("#lb-status", OneLineEach).show(
                f"{self.run_name} · {line} · no ratings: {message.error}", one_line=False)
            self.query_one("#lb-notes", Static).update("")
            heatmap.set_ratings(None)
            return
        self._fill_ratings()         # the cursor stays on the system it was on
        self.query_one("#lb-status", OneLineEach).show(status_line(self.run_name, self.arena,
                                                                   info, r))
        self.query_one("#lb-notes", Static).update(ratings_notes(r))
        heatmap.set_ratings(r)
        self.query_one("#lb-surrogate", Static).update(Text("Surrogate judge: computing…",
                                                            style="dim"))

    def on_resize(self) -> None:
        self._fill_ratings()

    def _fill_ratings(self) -> None:
        """The ratings in the columns that fit whole at this width, the names narrowing
        first; the ones left out named in the table's title, seen with its header (never
        a number cut)."""
        if self.ratings is None:
            return
        table = self.query_one("#ratings", DataTable)
        rows, names = rating_rows(self.ratings.systems)
        hidden = refill_fitting(table, RATING_COLUMNS, rows, RATING_PRIORITY,
                                scrollbar_to_come(self.query_one("#lb-body", VerticalScroll)),
                                elastic=names)
        table.border_title = title_naming("Ratings", hidden)
        table.border_subtitle = names.cells.caption()     # the words every name shares

    @on(SurrogateLoaded)
    def _surrogate_loaded(self, message: SurrogateLoaded) -> None:
        if message.generation == self.generation:
            self.query_one("#lb-surrogate", Static).update(message.text)

    def action_toggle_counts(self) -> None:
        heatmap = self.query_one("#lb-heatmap", WinFractionHeatmap)
        heatmap.show_counts = not heatmap.show_counts

    @on(DataTable.RowSelected, "#ratings")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        from engine.arena.types import split_arena_system
        from mirage_tui.screens.inspector import InspectorScreen

        if self.run_name is None:
            return
        system, setting = split_arena_system(event.row_key.value)
        if setting is None:
            self.notify(f"{system} is a reference, not a run system.", timeout=3,
                        markup=False)
            return
        self.app.push_screen(InspectorScreen(self.run_name, system=system, setting=setting,
                                             arena=self.arena))

    # ------------------------------------------------------------------ paired comparison

    def _highlighted_system(self) -> str | None:
        from engine.arena.types import split_arena_system

        key = highlighted_key(self.query_one("#ratings", DataTable))
        system, setting = split_arena_system(key) if key else (None, None)
        return system if setting is not None else None

    def action_mark(self) -> None:
        """Space: mark the highlighted contestant's system for ``v``."""
        system = self._highlighted_system()
        if system is None or self.run_name is None:
            self.notify("Highlight a run system (not a reference) to mark it.", timeout=3)
            return
        self.marked = None if self.marked == system else system
        self.notify(f"Marked {system}: highlight another system and press v to compare."
                    if self.marked else "Mark cleared.", timeout=3, markup=False)

    def action_compare(self) -> None:
        """v: the Compare screen, the marked system (A) against the highlighted one (B)."""
        from mirage_tui.screens.compare import CompareScreen

        system = self._highlighted_system()
        if self.run_name is None or self.marked is None or system in (None, self.marked):
            self.notify("Mark a system with space, highlight another and press v.", timeout=4)
            return
        self.app.push_screen(CompareScreen(f"{self.run_name}:{self.marked}",
                                           f"{self.run_name}:{system}"))

    # ------------------------------------------------------------------ jobs (.jobs)

    def action_judge(self) -> None:
        self.jobs.judge(self.run)

    def action_surrogate_features(self) -> None:
        self.jobs.surrogate_features(self.run, self.arena)

    def action_cancel_job(self) -> None:
        self.jobs.cancel()

    def action_cancel_job_why(self) -> None:
        self.jobs.cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``x`` is in the footer only while a job runs."""
        return self.jobs.running if action == "cancel_job" else True

    @on(LeaderboardJobs.Status)
    def _job_status(self, message: LeaderboardJobs.Status) -> None:
        self.query_one("#lb-status", OneLineEach).update(message.line)

    @on(LeaderboardJobs.Done)
    def _job_done(self, message: LeaderboardJobs.Done) -> None:
        if message.arena is not None:
            self.arena = message.arena
        self.action_refresh()

    # ------------------------------------------------------------------ export

    def action_export(self) -> None:
        """The arena's leaderboard as one HTML page (forest plot, heatmap, surrogate)."""
        from pathlib import Path

        from mirage_tui.dialogs.export_run import ExportRunScreen

        run, arena = self.run, self.arena
        if run is None or arena is None:
            self.notify("No arena to export yet.", severity="warning", markup=False)
            return

        def chosen(answer: tuple[str, str] | None) -> None:
            store = self.store
            if answer is not None and store is not None:
                self.export_html(store, run, arena, Path(answer[0]).expanduser())

        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in arena)
        self.app.push_screen(ExportRunScreen(
            run.name, formats=(("HTML leaderboard (one page)", "html"),),
            stem=f"{run.name}.leaderboard-{safe}", title=f"Export the leaderboard of {arena}",
            hint="Elo with CIs, the win-fraction heatmap and the surrogate in one HTML file "
                 "that opens offline. Enter exports, Esc cancels."), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="lb-export")
    def export_html(self, store, run: RunInfo, arena: str, path) -> None:
        from engine.arena.ratings.page import leaderboard_page
        from engine.results.html import write_page

        with self.worker_errors("the export", store, prefix=f"{path}: "):
            written = write_page(leaderboard_page(store, run, arena), path)
            self.post_message(PageExported(arena, str(written.resolve()),
                                           written.stat().st_size))

    @on(PageExported)
    def _page_exported(self, message: PageExported) -> None:
        self.notify(f"Wrote the leaderboard of {message.arena} to {message.path} "
                    f"({max(1, round(message.size / 1024)):,} KB); open it in any browser, "
                    "offline", title="Export", markup=False, timeout=10)

    # ------------------------------------------------------------------ the rest

    def action_calibration(self) -> None:
        """The Calibration screen of the arena's judge (any judge's without an arena)."""
        from mirage_tui.screens.calibration import CalibrationScreen

        info = self._arena_info()
        self.app.push_screen(CalibrationScreen(info.judge if info is not None else None))

    def action_back(self) -> None:
        if self.focused is not None and self.focused.id == "lb-body":
            self.query_one("#ratings", DataTable).focus()
        else:
            self.go_back()      # pop a pushed screen, else the previous mode

    @on(WorkerFailed)
    def _failed(self, message: WorkerFailed) -> None:
        self.query_one("#lb-status", OneLineEach).show(
            f"Could not load {message.what}: {message.error}", one_line=False)
        self.notify_failed(message)
