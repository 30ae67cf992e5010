"""The Compare screen: is B really better than A? Two systems on the items both answered.

Reached from Runs (mark a run with space, highlight another, ``c``) and from the Leaderboard
(mark a system with space, highlight another, ``v``). A and B are ``RUN`` or ``RUN:SYSTEM``
(:mod:`engine.results.paired`); a worker computes the comparison (never the UI thread):

- the verdict line in words, the power line, and for two systems of a run with an arena the
  probability that A's Bradley–Terry strength exceeds B's and the Elo difference's CI;
- per metric × setting and adaptability share: A, B, a Δ bar with its CI whisker, Δ with the
  95% CI, p, Holm p and the verdict;
- the flipped items (wrong → right, right → wrong) with both responses; Enter opens the
  Inspector on B's item (``s`` there shows a second system beside it when both are in one run);
- the (b, o, m) pattern transitions A → B as a matrix;
- for two runs, the runs side by side as before (:mod:`engine.results.comparison`).

``x`` writes the comparison as JSON, its items as CSV and its page as HTML in the current folder,
asking before it replaces a file (:mod:`.compare_export`, a feature widget).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from engine.metrics.adaptability import PATTERN_KEYS
from engine.text_fit import labels_apart
from mirage_tui.commands import PaletteCommand
from mirage_tui.screens.base import BaseScreen
from mirage_tui.screens.compare_export import CompareExport
from mirage_tui.widgets.footer import Footer
from mirage_tui.widgets.safe_text import elided_cell, elided_column, system_column
from mirage_tui.widgets.segments import styled
from mirage_tui.widgets.tables import (left_out_line, refill_fitting,
                                       scrollbar_to_come)

BAR = 21
TITLE_SIDE = 28
"""The cells A and B each get in the screen's title: what tells them apart."""
# the rows' columns (key: label) and which stay when the screen is narrow: Δ with its CI and
# the verdict first, so that they show at 80 columns whole (the rest: wider, or ``x``)
ROW_COLUMNS = {k: k for k in ("metric", "setting", "n", "A", "B", "Δ [95% CI]", "Δ bar (CI)",
                              "p", "Holm p", "verdict")}
ROW_PRIORITY = ["metric", "setting", "Δ [95% CI]", "verdict", "n", "A", "B", "Δ bar (CI)",
                "Holm p", "p"]
FLIP_COLUMNS = {k: k for k in ("flip", "setting", "query", "lang", "A", "B")}


def delta_bar(delta: float | None, lo: float | None, hi: float | None, scale: float,
              width: int = BAR) -> Text:
    """Δ as a bar from 0 (the centre ``│``) with its CI as a whisker ``├─┤``, on ``±scale``;
    green when the CI is above 0, red below, dim otherwise."""
    if delta is None or lo is None or hi is None or scale <= 0:
        return Text(" " * width)
    half = width // 2

    def col(x: float) -> int:
        return max(0, min(width - 1, half + round(x / scale * half)))

    cells = [" "] * width
    a, b = col(lo), col(hi)
    for i in range(a, b + 1):
        cells[i] = "─"
    cells[a], cells[b] = "├", "┤"
    cells[half] = "│" if cells[half] == " " else "┼"
    cells[col(delta)] = "●"
    style = "green" if lo > 0 else "red" if hi < 0 else "dim"
    return Text("".join(cells), style=style)


class CompareScreen(BaseScreen):
    """A paired comparison of ``a`` and ``b`` (RUN or RUN:SYSTEM). Escape goes back."""

    AUTO_FOCUS = "#cmp-rows"

    BINDINGS = [
        Binding("escape", "back", "Back"),
        *CompareExport.KEYS,
        # the app's ? (the keys) and, here, what the verdict line and its numbers mean
        Binding("question_mark", "explain", "Keys, why", key_display="?"),
    ]

    PALETTE = (
        PaletteCommand("compare: export", "Write the comparison as JSON and its items as CSV "
                       "(x)", "export"),
        PaletteCommand("compare: explain the verdict", "What the verdict line, Holm and the "
                       "number of tests mean, and why mixed is the headline (?)", "explain"),
        PaletteCommand("compare: inspect the flip", "The Inspector on B's item of the "
                       "highlighted flip (Enter)", "inspect"),
    )
    PALETTE_AFTER = "show_runs"

    DEFAULT_CSS = """
    CompareScreen #cmp-verdict { height: auto; padding: 0 1; }
    CompareScreen #cmp-explain { height: auto; max-height: 50%; padding: 0 1;
        border: round $accent 50%; display: none; }
    CompareScreen #cmp-rows { height: auto; max-height: 45%; border: round $primary 50%; }
    CompareScreen #cmp-flips { height: auto; max-height: 40%; border: round $primary 50%; }
    CompareScreen DataTable:focus { border: round $accent; }
    CompareScreen #cmp-more { height: auto; padding: 0 1; }
    """

    @dataclass
    class Ready(Message):
        comparison: object
        side_by_side: Text | None

    @dataclass
    class Failed(Message):
        text: str

    def __init__(self, a: str, b: str) -> None:
        super().__init__()
        self.a, self.b = a, b
        self.comparison = None
        self.export = CompareExport()
        self.rows: dict[str, list] = {"#cmp-rows": [], "#cmp-flips": []}

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"Comparing {self.a} (A) with {self.b} (B)…", id="cmp-verdict",
                     markup=False)
        explain = Static("The comparison is being computed…", id="cmp-explain", markup=False)
        explain.border_title = "What the verdict says (? hides)"
        yield explain
        with VerticalScroll(id="cmp-pane"):
            rows = DataTable(id="cmp-rows", cursor_type="row", zebra_stripes=True)
            # the runs' own tables below (two runs) differ over other items: both are named
            rows.border_title = "Δ paired: B − A on shared items"
            yield rows
            flips = DataTable(id="cmp-flips", cursor_type="row", zebra_stripes=True)
            flips.border_title = "Flipped items (Enter: inspect B's)"
            yield flips
            yield Static("", id="cmp-more", markup=False)
        yield Footer()
        yield self.export

    def on_mount(self) -> None:
        # A and B less what they share (the verdict names both in full)
        shown = labels_apart([self.a, self.b], TITLE_SIDE).shown
        self.sub_title = f"compare · {shown[self.a]} vs {shown[self.b]}"
        self._fill()
        store = self.store_or_retry(self.on_mount)
        if store is not None:
            self.build(store)

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare", name="compare")
    def build(self, store) -> None:
        from engine.results.comparison import compare_reports, comparison_segments
        from engine.arena.ratings.duel import compare
        from engine.results.paired import PairingError, parse_side, side_runs
        from engine.results.report import build_report
        from engine.stats import N_BOOT, PAIRED_N_BOOT, SEED

        with self.worker_errors("the comparison", store):
            runs = side_runs(store, self.a, self.b)     # each run looked up once
            try:
                # ``compare``'s own resamples and seed: the screen and the CLI agree
                c = compare(store, self.a, self.b, runs, n_boot=PAIRED_N_BOOT, seed=SEED)
            except PairingError as exc:
                self.post_message(self.Failed(f"No paired comparison: {exc}"))
                return
            side = None
            (ra, sa), (rb, sb) = parse_side(self.a), parse_side(self.b)
            if ra != rb and sa is None and sb is None:
                reports = [build_report(store, run, n_boot=N_BOOT, seed=SEED) for run in runs]
                # runs of different models have no system in common: the paired rows are it
                if set(reports[0].accuracy) & set(reports[1].accuracy):
                    side = styled(comparison_segments(compare_reports(*reports)))
            self.post_message(self.Ready(c, side))

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        self.query_one("#cmp-verdict", Static).update(Text(message.text, style="bold red"))

    @on(Ready)
    def _ready(self, message: Ready) -> None:
        from engine.results.paired_words import p_text, verdict_line
        from engine.results.paired_text import arena_lines, pattern_name, power_line
        from engine.results.paired_words import holm_line, verdict_explained
        from engine.units import fmt_delta_interval, fmt_value

        c = self.comparison = self.export.comparison = message.comparison
        head = c.headline()
        style = "bold green" if head and head.better > 0 else (
            "bold red" if head and head.better < 0 else "bold")
        verdict = Text(f"A = {c.a.label} · B = {c.b.label} · {c.shared_items} shared items "
                       f"({c.shared_queries} queries)\n")
        if c.warning:
            verdict.append(f"Warning: {c.warning}.\n", style="bold yellow")
        verdict.append(verdict_line(c), style=style)
        # what "no clear difference" and Holm p mean, where they are shown
        verdict.append("\n" + holm_line(c), style="dim")      # the footer's ? says more
        verdict.append("\n" + power_line(c), style="italic")
        for line in arena_lines(c):
            verdict.append("\n" + line)
        self.query_one("#cmp-verdict", Static).update(verdict)
        self.query_one("#cmp-explain", Static).update("\n".join(verdict_explained(c)))
        scale = max([abs(x) for r in c.rows for x in (r.lo, r.hi) if x is not None] + [0.05])
        bar = BAR if self.app.size.width >= 130 else 13     # so that it shows at 120 too
        # settings kept apart by what differs (retrievers that differ only by index too)
        settings = system_column([r.setting for r in c.rows], 24)
        self.rows["#cmp-rows"] = [(str(i), dict(zip(ROW_COLUMNS, (
            Text(r.metric), settings[i], Text(str(r.n)),
            fmt_value(r.a, r.metric), fmt_value(r.b, r.metric),
            fmt_delta_interval(r.delta, r.lo, r.hi, r.metric),
            delta_bar(r.delta, r.lo, r.hi, scale, bar), p_text(r.p), p_text(r.p_holm),
            Text(r.verdict, style="green" if r.better > 0 else "red" if r.better < 0
                 else ""))))) for i, r in enumerate(c.rows)]
        self.rows["#cmp-flips"] = [(str(i), f) for i, f in enumerate(c.flips)]
        self._fill()
        flips = self.query_one("#cmp-flips", DataTable)
        flips.border_title = (f"Flipped items on {c.flip_metric}: "
                              f"{sum(f.way == 'better' for f in c.flips)} wrong → right, "
                              f"{sum(f.way == 'worse' for f in c.flips)} right → wrong "
                              "(Enter: inspect B's)")
        more = Text()
        for setting, matrix in c.transitions.items():
            used = [k for k in PATTERN_KEYS
                    if any(matrix[k].values()) or any(matrix[r][k] for r in PATTERN_KEYS)]
            more.append(f"(b, o, m) pattern transitions with {setting}: rows A, columns B\n",
                        style="bold")
            more.append("A \\ B " + " ".join(f"{pattern_name(k):>4}" for k in used) + "\n")
            for k in used:
                more.append(f"{pattern_name(k):>5} ")
                for j in used:
                    n = matrix[k][j]
                    more.append(f"{n:>4}" + " ", style="bold" if n and k == j else
                                ("yellow" if n else "dim"))
                more.append("\n")
        groups = "; ".join(
            f"by {by}: " + ", ".join(f"{k} +{v['better']}/−{v['worse']}"
                                     for k, v in c.flip_groups(by).items())
            for by in ("language", "source") if c.flip_groups(by))
        if groups:
            more.append(f"\nFlips {groups}\n")
        if message.side_by_side is not None:
            more.append("\n")
            more.append_text(message.side_by_side)
        self.query_one("#cmp-more", Static).update(more)

    def on_resize(self) -> None:
        self._fill()

    def _fill(self) -> None:
        """Both tables at this width: the columns that fit whole (the left-out ones named
        under each table), the flips' replies sharing what is left."""
        reserve = scrollbar_to_come(self.query_one("#cmp-pane", VerticalScroll))
        rows = self.query_one("#cmp-rows", DataTable)
        hidden = refill_fitting(rows, ROW_COLUMNS, self.rows["#cmp-rows"], ROW_PRIORITY,
                                reserve)
        rows.border_subtitle = left_out_line(hidden, "x")
        flips = self.query_one("#cmp-flips", DataTable)
        reply = max(12, ((flips.scrollable_content_region.width or self.app.size.width - 4)
                         - reserve - 2 - 13 - 8 - 16 - 4 - 2 * 6) // 2)
        ids = elided_column([f.query_id for _, f in self.rows["#cmp-flips"]], 16)
        settings = system_column([f.setting for _, f in self.rows["#cmp-flips"]], 8)
        flip_rows = [(key, dict(zip(FLIP_COLUMNS, (
            Text("wrong → right", style="green") if f.way == "better"
            else Text("right → wrong", style="red"), setting, query,
            Text(f.language or "?"), elided_cell(f.a_response or "–", reply, prose=True),
            elided_cell(f.b_response or "–", reply, prose=True)))))
            for (key, f), query, setting in zip(self.rows["#cmp-flips"], ids, settings)]
        flips.border_subtitle = left_out_line(
            refill_fitting(flips, FLIP_COLUMNS, flip_rows, list(FLIP_COLUMNS), reserve), "Enter")

    def action_back(self) -> None:
        self.go_back()

    def action_export(self) -> None:
        self.export.ask()

    def action_explain(self) -> None:
        """``?``: the verdict explained, beside the keys' panel (as ``?`` elsewhere)."""
        block = self.query_one("#cmp-explain", Static)
        block.display = not block.display
        if block.display:
            self.app.action_show_help_panel()
        else:
            self.app.action_hide_help_panel()

    @on(DataTable.RowSelected, "#cmp-flips")
    def action_inspect(self) -> None:
        """Enter on a flip: the Inspector on B's item."""
        from mirage_tui.screens.inspector import InspectorScreen

        if self.comparison is None or not self.comparison.flips:
            return
        flips = self.query_one("#cmp-flips", DataTable)
        f = self.comparison.flips[flips.cursor_row]
        b = self.comparison.b
        self.app.push_screen(InspectorScreen(b.run, system=b.system, setting=f.setting,
                                             query=f.query_id))
