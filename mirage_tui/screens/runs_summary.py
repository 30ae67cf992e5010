"""The Runs screen's summary and comparison.

:class:`RunSummary`, the pane below the list: Enter computes the highlighted run's report
(``engine.results.report.build_report``: accuracy per system × setting and NV/CA/CI/CM, each
with its 95% CI and n, at ``report``'s own resamples and seed, :data:`engine.stats.N_BOOT` and
:data:`engine.stats.SEED`, so the pane and the CLI show the same figures) in a worker and shows
its summary (``summary_segments``, its title line ending with the answers cut at the token
limit, and of them while thinking, when any were); from then on the summary follows the
highlight (a moment after it stops, ``FOLLOW_DELAY``), so that the pane never shows another run
than the highlighted one.

:class:`RunCompare`: space marks a run and ``c`` compares the highlighted run with it (the
Compare screen; a run of several systems asks which).

Each declares its ``KEYS``; :class:`mirage_tui.screens.runs.RunsScreen` binds them and tells
them which run is highlighted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from engine.results.comparison import compare_reports, comparison_segments, summary_segments
from engine.results.text import backend_segments
from mirage_tui.dialogs.pick_system import PickSystemScreen
from mirage_tui.screens.features import failures_as, store_of
from mirage_tui.screens.runs_messages import ComparisonFailed, ReportFailed
from mirage_tui.widgets.segments import styled

if TYPE_CHECKING:
    from textual.timer import Timer

    from engine.results.comparison import RunRow

FOLLOW_DELAY = 0.3
"""Seconds the highlight rests on a run before its summary is computed."""


class RunSummary(VerticalScroll):
    """The summary pane (module docstring): the report of the run asked for, then of the
    highlighted one. It owns which run it shows and the worker that computes it."""

    KEYS: ClassVar[list[Binding]] = [Binding("enter", "summary", "Summary", show=False)]
    """Its key; the screen binds it, so that it acts wherever the focus is."""

    @dataclass
    class Ready(Message):
        generation: int
        text: Text

    @dataclass
    class Due(Message):
        """The highlight rested on ``run``: the screen asks for its summary if it is still
        highlighted."""
        run: str

    generation = 0
    """Counts the summaries asked for; a report that arrives for an older one is dropped."""
    summary_of: str | None = None
    """The run the pane shows (or computes)."""
    _follow: Timer | None = None
    """The timer that computes the highlighted run's summary once the highlight rests."""

    def compose(self) -> ComposeResult:
        yield Static("Loading the runs…", id="run-summary", markup=False)

    @property
    def asked(self) -> bool:
        """A summary was asked for (from then on the pane follows the highlight)."""
        return self.generation > 0

    def show(self, text: Text) -> None:
        self.query_one("#run-summary", Static).update(text)
        self.scroll_home(animate=False)

    def summarize(self, store, name: str, row: RunRow | None) -> None:
        """Compute ``name``'s summary (``row``: its line in the list) and show it."""
        self.generation += 1
        self.summary_of = name
        self.show(Text(f"Computing the report of {name}…"))
        self.build_summary(store, [name], row, self.generation,
                           self.scrollable_content_region.width)

    def follow(self, name: str | None) -> None:
        """Once a summary is shown, it follows the highlight (now on ``name``): the pane says at
        once that it is being computed, and :class:`Due` comes when the cursor rests
        (FOLLOW_DELAY)."""
        if self.summary_of is None or name is None or name == self.summary_of:
            return
        self.generation += 1            # a report in flight for the old run is dropped
        self.summary_of = name
        self.show(Text(f"Computing the report of {name}…"))
        if self._follow is not None:
            self._follow.stop()
        self._follow = self.set_timer(FOLLOW_DELAY, lambda: self.post_message(self.Due(name)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-summary",
          name="run report")
    def build_summary(self, store, names: list[str], row: RunRow | None, generation: int,
                      width: int) -> None:
        from engine.results.report import build_report
        from engine.runs.lookup import load_run
        from engine.runs.tally import cut_totals, cut_words
        from engine.stats import N_BOOT, SEED

        with failures_as(self, ReportFailed, store):
            runs = [load_run(store, n) for n in names]
            reports = [build_report(store, run, n_boot=N_BOOT, seed=SEED, summary_only=True)
                       for run in runs]
            width = max(30, width - 2)      # a scrollbar may come with the text
            cut, thinking = cut_totals(store, runs[0].id)
            segments = backend_segments(
                summary_segments(reports[0], row, width,
                                 cut_words(cut, thinking) if cut else None), reports[0]) \
                if len(reports) == 1 else comparison_segments(compare_reports(*reports), width)
            self.post_message(self.Ready(generation, styled(segments)))

    @on(Ready)
    def _ready(self, message: Ready) -> None:
        if message.generation == self.generation:
            self.show(message.text)

    @on(ReportFailed)
    def _failed(self, message: ReportFailed) -> None:
        self.show_failure(message)

    def show_failure(self, message: ReportFailed | ComparisonFailed) -> None:
        """Say in the pane, and in a notification, what could not be loaded."""
        self.show(Text(f"Could not load {message.what}: {message.error}"))
        message.tell(self.app)


class RunCompare(Widget):
    """Space marks a run, ``c`` compares the highlighted one with it (module docstring). It
    draws nothing: the screen draws the mark (:class:`Marked`), the dialog and the Compare
    screen are what is seen of it."""

    KEYS: ClassVar[list[Binding]] = [Binding("space", "mark", "Mark"),
                                     Binding("c", "compare", "Compare")]
    """Its keys; the screen binds them, so that they act wherever the focus is."""

    DEFAULT_CSS = "RunCompare { display: none; }"

    @dataclass
    class Marked(Message):
        """The mark moved from ``old`` to ``new`` (either None): the screen redraws both."""
        old: str | None
        new: str | None

    @dataclass
    class SidesPaired(Message):
        """A and B, and the side still to choose (``system_choice``), if any."""
        a: str
        b: str
        choice: tuple[str, str, list[str]] | None

    marked: str | None = None
    """The run marked to compare with."""

    def mark(self, name: str) -> None:
        """Mark ``name``, or clear the mark when it is the marked one."""
        old, self.marked = self.marked, (None if self.marked == name else name)
        self.post_message(self.Marked(old, self.marked))
        self.notify(f"Marked {name}: highlight another run and press c to compare."
                    if self.marked else "Mark cleared.", timeout=3, markup=False)

    def keep_only(self, runs: dict | set) -> None:
        """Drop the mark of a run that is no longer listed."""
        if self.marked not in runs:
            self.marked = None

    def renamed(self, old: str, new: str | None) -> None:
        """Run ``old`` is now ``new`` (None: deleted): the mark follows it."""
        if self.marked == old:
            self.marked = new

    def compare(self, name: str) -> None:
        """Compare ``name`` with the marked run."""
        store = store_of(self)
        if store is None:
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

        with failures_as(self, ComparisonFailed, store):
            self.post_message(self.SidesPaired(a, b, system_choice(
                store, a, b, side_runs(store, a, b))))

    @on(SidesPaired)
    def _sides_paired(self, message: SidesPaired) -> None:
        a, b, choice = message.a, message.b, message.choice
        if choice is None:
            from mirage_tui.screens.compare import CompareScreen

            # the paired comparison on shared items, across runs and models
            self.app.push_screen(CompareScreen(a, b))
            return
        side, run, systems = choice
        other = b if side == "a" else a

        def picked(system: str | None) -> None:
            store = store_of(self)
            if system is None or store is None:
                return
            spec = f"{run}:{system}"
            self.pair_sides(store, *((spec, b) if side == "a" else (a, spec)))

        self.app.push_screen(PickSystemScreen(
            systems, f"{run} has {len(systems)} systems; compare which "
                     f"{'(A)' if side == 'a' else '(B)'} with {other}?"), picked)
