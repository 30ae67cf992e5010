"""The Calibration screen: can this judge be trusted? The newest calibration of a judge
(``mirage-tui judge calibrate``) read against the people: every figure with its CI and n beside
the published anchors, the confusion matrix (judge × human), and the disagreements as a list;
Enter on one shows the pair, both answers, each person's label and each order's verdict.

Opened from the Leaderboard (``h``) for the arena's judge, or for the newest calibration of any
judge. Escape goes back."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static

from mirage_tui.screens.base import BaseScreen
from mirage_tui.widgets.safe_text import safe_line, safe_text

CLASS_WORDS = {"a": "A better", "tie": "tie", "b": "B better", "none": "no verdict"}


@dataclass
class CalibrationLoaded(Message):
    """The calibration (``engine.arena.calibrate.StoredCalibration``) or None, its pairs by
    id (``engine.datasets.labels.LabelledPair``), and what to say when there is none."""
    calibration: object | None
    pairs: dict
    missing: str = ""


def disagreements(calibration) -> list[dict]:
    """The stored pair verdicts where the judge gave a verdict other than the people's."""
    return [v for v in calibration.verdicts
            if v.get("judge_class") is not None and v["judge_class"] != v["human_class"]]


class CalibrationScreen(BaseScreen):
    """A judge's calibration against human labels."""

    AUTO_FOCUS = "#cal-disagreements"
    BINDINGS = [Binding("escape", "back", "Back")]

    DEFAULT_CSS = """
    CalibrationScreen #cal-body { height: 1fr; }
    CalibrationScreen .cal-block { height: auto; padding: 0 1; margin-top: 1; }
    CalibrationScreen #cal-confusion { height: auto; margin: 1 1 0 1; }
    CalibrationScreen #cal-disagreements { height: auto; max-height: 12; margin: 1 1 0 1;
        border: round $primary 50%; }
    CalibrationScreen #cal-disagreements:focus { border: round $accent; }
    """

    def __init__(self, judge: str | None = None) -> None:
        super().__init__()
        self.judge = judge
        self.calibration = None
        self.pairs: dict = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="cal-body"):
            yield Static("Loading the calibration…", id="cal-status", classes="cal-block",
                         markup=False)
            yield Static("", id="cal-figures", classes="cal-block", markup=False)
            yield DataTable(id="cal-confusion", cursor_type="none", zebra_stripes=True)
            yield DataTable(id="cal-disagreements", cursor_type="row", zebra_stripes=True)
            yield Static("", id="cal-pair", classes="cal-block", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "calibration" + (f" · {self.judge}" if self.judge else "")
        store = self.store
        if store is not None:
            self.load(store, self.judge)

    @work(thread=True, exclusive=True, exit_on_error=False, group="calibration",
          name="calibration")
    def load(self, store, judge: str | None) -> None:
        from engine.arena.calibrate import latest_calibration
        from engine.datasets.labels import load_label_pairs

        with self.worker_errors("the calibration", store):
            cal = latest_calibration(store, judge=judge)
            if cal is None:
                who = f"judge {judge!r}" if judge else "any judge"
                self.post_message(CalibrationLoaded(None, {}, (
                    f"No calibration of {who} yet: import human labels (mirage-tui data "
                    "import FILE) and run mirage-tui judge calibrate --judge MODEL --labels "
                    "DATASET, or enter your own verdicts in the Inspector (a / e / b).")))
                return
            pairs = {p.pair_id: p for p in load_label_pairs(store, cal.labels)}
            self.post_message(CalibrationLoaded(cal, pairs))

    @on(CalibrationLoaded)
    def _loaded(self, message: CalibrationLoaded) -> None:
        from engine.arena.calibration_report import calibration_lines

        status = self.query_one("#cal-status", Static)
        if message.calibration is None:
            status.update(message.missing)
            return
        self.calibration, self.pairs = cal, _ = message.calibration, message.pairs
        lines = calibration_lines(cal)
        status.update(Text(lines[0], style="bold"))
        self.query_one("#cal-figures", Static).update("\n".join(lines[1:]))
        matrix = self.query_one("#cal-confusion", DataTable)
        matrix.clear(columns=True)
        matrix.add_columns("judge \\ people", *(CLASS_WORDS[c] for c in ("a", "tie", "b")))
        for judge_class, row in cal.figures.get("confusion", {}).items():
            matrix.add_row(CLASS_WORDS.get(judge_class, judge_class),
                           *(str(row.get(c, 0)) for c in ("a", "tie", "b")))
        table = self.query_one("#cal-disagreements", DataTable)
        table.clear(columns=True)
        table.add_columns("pair", "domain", "people", "judge", "query")
        for v in disagreements(cal):
            pair = self.pairs.get(v["pair_id"])
            table.add_row(safe_line(v["pair_id"]), v.get("domain") or "—",
                          f"{CLASS_WORDS[v['human_class']]} {v['human']}",
                          CLASS_WORDS[v["judge_class"]],
                          safe_line(pair.query[:60] if pair else ""), key=v["pair_id"])
        table.border_title = f"Disagreements: {table.row_count} (Enter shows the pair)"

    @on(DataTable.RowSelected, "#cal-disagreements")
    def _pair_selected(self, event: DataTable.RowSelected) -> None:
        ident = event.row_key.value
        verdict = next((v for v in self.calibration.verdicts if v["pair_id"] == ident), None)
        pair = self.pairs.get(ident)
        if verdict is None or pair is None:
            return
        text = Text.assemble(("Pair ", "bold"), safe_text(ident, style="bold"), "\n",
                             ("Question: ", "bold"), safe_text(pair.query), "\n")
        text.append("Answer A: ", style="bold")
        text.append_text(safe_text(pair.answer_a or "(empty)"))
        text.append("\nAnswer B: ", style="bold")
        text.append_text(safe_text(pair.answer_b or "(empty)"))
        labels = pair.labels.get(self.calibration.aspect, {})
        text.append(f"\nPeople ({self.calibration.aspect}): ", style="bold")
        text.append(", ".join(f"{who} {label:+d}" for who, label in sorted(labels.items())))
        for order in verdict.get("orders", []):
            score = order.get("score")
            text.append(f"\nJudge, shown {order['shown']}: ", style="bold")
            text.append(("failed" if order.get("failed") else
                         CLASS_WORDS.get(order.get("winner") or "none", "?"))
                        + ("" if score is None else f" (P(B) − P(A) = {score:+.2f})"))
        self.query_one("#cal-pair", Static).update(text)

    def action_back(self) -> None:
        self.go_back()
