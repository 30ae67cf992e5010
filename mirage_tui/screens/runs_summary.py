"""The Runs screen's summary and comparison: Enter computes the highlighted run's report
(``engine.results.report.build_report``: accuracy per system × setting and NV/CA/CI/CM, each
with its 95% CI and n, at ``report``'s own resamples and seed, :data:`engine.stats.N_BOOT` and
:data:`engine.stats.SEED`, so the pane and the CLI show the same figures) in a worker and shows its summary (``summary_segments``, its title line ending with the answers cut
at the token limit, and of them while thinking, when any were); from then on
the summary follows the highlight (a moment after it stops, ``FOLLOW_DELAY``), so that the
pane never shows another run than the highlighted one. Space marks a run and ``c`` compares
the highlighted run with it (the Compare screen; a run of several systems asks which).

Mixed into :class:`mirage_tui.screens.runs.RunsScreen`; what it uses of the screen is
:class:`RunSummaryKeysHost`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol

from rich.text import Text
from textual import work
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable

from engine.results.comparison import compare_reports, comparison_segments, summary_segments
from engine.results.text import backend_segments
from mirage_tui.dialogs.pick_system import PickSystemScreen
from mirage_tui.screens.hosts import ScreenHost
from mirage_tui.widgets.segments import styled

if TYPE_CHECKING:
    from textual.timer import Timer

    from engine.results.comparison import RunRow

FOLLOW_DELAY = 0.3
"""Seconds the highlight rests on a run before its summary is computed."""


class RunSummaryKeysHost(ScreenHost, Protocol):
    """What :class:`RunSummaryKeys` uses of its host beyond a screen's own (``ScreenHost``)."""

    runs: dict[str, RunRow]
    marked: str | None = None
    generation: int = 0
    summary_of: str | None = None
    SidesPaired: Callable[..., Message]
    SummaryReady: Callable[..., Message]

    def need_run(self) -> str | None: ...

    def highlighted_run(self) -> str | None: ...

    def name_cell(self, name: str) -> Text: ...

    def show_summary_text(self, text: Text) -> None: ...


if TYPE_CHECKING:
    _Host = RunSummaryKeysHost
else:
    _Host = object


class RunSummaryKeys(_Host):
    """Enter (the summary, then following the highlight), space (mark), c (compare)."""

    _follow: Timer | None = None
    """The timer that computes the highlighted run's summary once the highlight rests."""

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "runs":
            self.action_summary()

    def action_summary(self) -> None:
        name = self.need_run()
        store = self.store
        if name is None or store is None:
            return
        self.generation += 1
        self.summary_of = name
        self.show_summary_text(Text(f"Computing the report of {name}…"))
        pane = self.query_one("#summary-pane", VerticalScroll)
        self.build_summary(store, [name], self.generation, pane.scrollable_content_region.width)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "runs":
            self._highlight_moved()

    def _highlight_moved(self) -> None:
        """Once a summary is shown, it follows the highlight: the pane says at once that it
        is being computed, and the report starts when the cursor rests (FOLLOW_DELAY)."""
        self.refresh_bindings()
        name = self.highlighted_run()
        if self.summary_of is None or name is None or name == self.summary_of:
            return
        self.generation += 1            # a report in flight for the old run is dropped
        self.summary_of = name
        self.show_summary_text(Text(f"Computing the report of {name}…"))
        if self._follow is not None:
            self._follow.stop()
        self._follow = self.set_timer(FOLLOW_DELAY, self._summary_if_still)

    def _summary_if_still(self) -> None:
        if self.highlighted_run() == self.summary_of:
            self.action_summary()

    def action_mark(self) -> None:
        name = self.need_run()
        if name is None:
            return
        old, self.marked = self.marked, (None if self.marked == name else name)
        table = self.query_one("#runs", DataTable)
        for run in {old, name} - {None}:
            if run in self.runs:
                table.update_cell(run, "run", self.name_cell(run), update_width=True)
        self.notify(f"Marked {name}: highlight another run and press c to compare."
                    if self.marked else "Mark cleared.", timeout=3, markup=False)

    def action_compare(self) -> None:
        name = self.need_run()
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
        from engine.results.paired import side_runs, system_choice

        with self.worker_errors("the comparison", store):
            self.post_message(self.SidesPaired(a, b, system_choice(
                store, a, b, side_runs(store, a, b))))

    def on_runs_screen_sides_paired(self, message: Message) -> None:
        a, b, choice = message.a, message.b, message.choice
        if choice is None:
            from mirage_tui.screens.compare import CompareScreen

            # the paired comparison on shared items, across runs and models
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
        from engine.results.report import build_report
        from engine.runs.lookup import load_run
        from engine.runs.tally import cut_totals, cut_words
        from engine.stats import N_BOOT, SEED

        with self.worker_errors("the report", store):
            runs = [load_run(store, n) for n in names]
            reports = [build_report(store, run, n_boot=N_BOOT, seed=SEED, summary_only=True)
                       for run in runs]
            width = max(30, width - 2)      # a scrollbar may come with the text
            cut, thinking = cut_totals(store, runs[0].id)
            segments = backend_segments(
                summary_segments(reports[0], self.runs.get(names[0]), width,
                                 cut_words(cut, thinking) if cut else None), reports[0]) \
                if len(reports) == 1 else comparison_segments(compare_reports(*reports), width)
            text = styled(segments)
            self.post_message(self.SummaryReady(generation, text))

    def on_runs_screen_summary_ready(self, message: Message) -> None:
        if message.generation == self.generation:
            self.show_summary_text(message.text)
