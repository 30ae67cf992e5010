"""The Calibration screen: can this judge be trusted? The newest calibration of a judge
(``mirage-tui judge calibrate``) read against the people: every figure with its CI and n beside
the published anchors, the confusion matrix (judge × human), and the disagreements as a list;
Enter on one shows the pair, both answers, each person's label and each order's verdict.
``r`` shows or hides the ranking: every judge calibrated in the workspace, best sign accuracy
first, with the "worse than comparing with the reference" mark (``engine.arena.trust.rankings``, as
``mirage-tui judge list`` prints it).

Opened from the Leaderboard (``h``) for the arena's judge, or for the newest calibration of any
judge. ``[`` / ``]`` step to the older / newer stored calibration (of that judge, else of any);
``j`` starts a new one (:class:`~mirage_tui.dialogs.calibrate.CalibrateScreen` picks judge,
labels, aspect, orders, sample) as a :class:`~mirage_tui.jobs.JobController` job with live
progress, ``x`` cancels it (resumable: every verdict is cached), and the new calibration is
shown when it ends. Escape goes back."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, ProgressBar, Static

from mirage_tui.commands import PaletteCommand
from mirage_tui.jobs import MIN_INTERVAL, JobController
from mirage_tui.screens.base import BaseScreen, WorkerFailed
from mirage_tui.widgets.footer import Footer
from mirage_tui.widgets.safe_text import safe_line, safe_text

CLASS_WORDS = {"a": "A better", "tie": "tie", "b": "B better", "none": "no verdict"}


@dataclass
class CalibrationLoaded(Message):
    """The calibration (``engine.arena.trust.calibrate.StoredCalibration``) or None, its pairs by
    id (``engine.datasets.labels.LabelledPair``), and what to say when there is none."""
    calibration: object | None
    pairs: dict
    missing: str = ""
    listing: list = field(default_factory=list)    # engine.arena.trust.calibrate.CalibrationListing
    rankings: list = field(default_factory=list)   # engine.arena.trust.rankings.JudgeRanking
    in_sample: set = field(default_factory=set)    # (judge, labels): fitted on those labels
    unfinished: list = field(default_factory=list)  # engine.arena.trust.calibrate.UnfinishedCalibration


def unfinished_lines(unfinished: list) -> str:
    """The calibrations not stored yet, a line each: running, or interrupted (its process is
    gone) and how to go on."""
    return "".join(
        f"\nNot stored yet: {u.name}: {u.status} (pid {u.pid})" + (
            "; press j to start it again (its verdicts so far are cached)"
            if u.status == "interrupted" else "") for u in unfinished)


def disagreements(calibration) -> list[dict]:
    """The stored pair verdicts where the judge gave a verdict other than the people's."""
    return [v for v in calibration.verdicts
            if v.get("judge_class") is not None and v["judge_class"] != v["human_class"]]


class CalibrationScreen(BaseScreen):
    """A judge's calibration against human labels."""

    AUTO_FOCUS = "#cal-disagreements"
    BINDINGS = [Binding("escape", "back", "Back"),
                # j as on the Leaderboard (the judge at work); n is New run everywhere
                Binding("j", "new_calibration", "New calibration"),
                Binding("r", "toggle_ranking", "Ranking"),
                Binding("x", "cancel_calibration", "Cancel"),     # while one runs
                Binding("x", "cancel_calibration_why", "Cancel", show=False),
                Binding("left_square_bracket", "step(-1)", "Older", key_display="[",
                        show=False),
                Binding("right_square_bracket", "step(1)", "Newer", key_display="]",
                        show=False)]

    PALETTE = (
        PaletteCommand("calibration: new…", "Calibrate a judge against human labels (j)",
                       "new_calibration"),
        PaletteCommand("calibration: ranking", "Every calibrated judge, best first (r)",
                       "toggle_ranking"),
        PaletteCommand("calibration: cancel", "Stop the calibration job (x)",
                       "cancel_calibration"),
        PaletteCommand("calibration: older", "The previous calibration ([)", "step(-1)"),
        PaletteCommand("calibration: newer", "The next calibration (])", "step(1)"),
    )
    PALETTE_AFTER = "show_leaderboard"

    DEFAULT_CSS = """
    CalibrationScreen #cal-body { height: 1fr; }
    CalibrationScreen #cal-progress { height: 1; padding: 0 1; }
    CalibrationScreen #cal-job { height: auto; padding: 0 1; color: $text-muted; }
    CalibrationScreen .cal-block { height: auto; padding: 0 1; margin-top: 1; }
    CalibrationScreen #cal-confusion { height: auto; margin: 1 1 0 1; }
    CalibrationScreen #cal-ranking { height: auto; max-height: 100%; margin: 1 1 0 1;
        border: round $primary 50%; }
    CalibrationScreen #cal-disagreements { height: auto; max-height: 100%; margin: 1 1 0 1;
        border: round $primary 50%; }
    CalibrationScreen #cal-disagreements:focus { border: round $accent; }
    """

    def __init__(self, judge: str | None = None) -> None:
        super().__init__()
        self.judge = judge
        self.calibration = None
        self.pairs: dict = {}
        self.listing: list = []             # the stored calibrations one can step through
        self.calibrating = JobController(self, group="calibrate")

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="cal-job", markup=False)
        yield ProgressBar(id="cal-progress", show_eta=False)
        with VerticalScroll(id="cal-body"):
            yield Static("Loading the calibration…", id="cal-status", classes="cal-block",
                         markup=False)
            yield DataTable(id="cal-ranking", cursor_type="row", zebra_stripes=True)
            yield Static("", id="cal-figures", classes="cal-block", markup=False)
            yield DataTable(id="cal-confusion", cursor_type="none", zebra_stripes=True)
            yield DataTable(id="cal-disagreements", cursor_type="row", zebra_stripes=True)
            yield Static("", id="cal-pair", classes="cal-block", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "calibration" + (f" · {self.judge}" if self.judge else "")
        self.query_one("#cal-progress").display = False
        self.query_one("#cal-job").display = False
        self.query_one("#cal-ranking").display = False
        self.reload()

    def reload(self, calibration_id: int | None = None) -> None:
        """Load the calibration ``calibration_id`` (the newest of the judge without it)."""
        store = self.store
        if store is not None:
            self.load(store, self.judge, calibration_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="calibration",
          name="calibration")
    def load(self, store, judge: str | None, calibration_id: int | None = None) -> None:
        from engine.arena.trust.calibrate import (latest_calibration, list_calibrations,
                                                  unfinished_calibrations)
        from engine.arena.judges.fitted import fitted_judges
        from engine.arena.judges.fitted_report import fitted_on
        from engine.arena.trust.rankings import judge_rankings
        from engine.datasets.labels import load_label_pairs

        from engine.arena.judges.names import calibrated_judge

        with self.worker_errors("the calibration", store):
            judge = calibrated_judge(store, judge)
            listing = list_calibrations(store, judge)
            unfinished = unfinished_calibrations(store)
            rankings = judge_rankings(store)
            fits = fitted_judges(store)
            in_sample = {(r.judge, r.labels) for r in rankings
                         if fitted_on(fits, r.judge, r.labels)}
            cal = (latest_calibration(store, calibration_id=calibration_id)
                   if calibration_id is not None else latest_calibration(store, judge=judge))
            if cal is None:
                who = f"judge {judge!r}" if judge else "any judge"
                self.post_message(CalibrationLoaded(None, {}, (
                    f"No calibration of {who} yet: press j to start one (or run mirage-tui "
                    "judge calibrate --judge MODEL --labels DATASET), after importing human "
                    "labels (mirage-tui data import FILE); or enter your own verdicts in the "
                    "Inspector (a / e / b)."), rankings=rankings, in_sample=in_sample,
                    unfinished=unfinished))
                return
            pairs = {p.pair_id: p for p in load_label_pairs(store, cal.labels)}
            self.post_message(CalibrationLoaded(cal, pairs, listing=listing, rankings=rankings,
                                                in_sample=in_sample, unfinished=unfinished))

    @on(CalibrationLoaded)
    def _loaded(self, message: CalibrationLoaded) -> None:
        from engine.arena.trust.text import calibration_lines

        status = self.query_one("#cal-status", Static)
        self.listing = message.listing
        self._show_rankings(message.rankings, message.in_sample)
        # the pair shown was the previous calibration's: it goes with it
        self.query_one("#cal-pair", Static).update("")
        if message.calibration is None:
            self.calibration, self.pairs = None, {}
            status.update(message.missing + unfinished_lines(message.unfinished))
            self.query_one("#cal-figures", Static).update("")
            for table_id in ("#cal-confusion", "#cal-disagreements"):
                table = self.query_one(table_id, DataTable)
                table.clear(columns=True)
                table.border_title = ""
            return
        self.calibration, self.pairs = cal, _ = message.calibration, message.pairs
        lines = calibration_lines(cal)
        header = Text(lines[0], style="bold")
        header.append(f"\n{position_line(cal, self.listing)}"
                      + unfinished_lines(message.unfinished), style="")
        status.update(header)
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
            shown = ("A shown first, B second" if order["shown"] == "ab" else
                     "B shown first, A second")
            text.append(f"\nJudge, {shown}: ", style="bold")
            text.append(("failed" if order.get("failed") else
                         CLASS_WORDS.get(order.get("winner") or "none", "?"))
                        + ("" if score is None else f" (P(B) − P(A) = {score:+.2f})"))
        self.query_one("#cal-pair", Static).update(text)

    # ------------------------------------------------------------------ the ranking

    def _show_rankings(self, rankings: list, in_sample: set) -> None:
        from engine.arena.judges.fitted_report import IN_SAMPLE
        from engine.arena.trust.rankings import WORSE_THAN_REFERENCE

        table = self.query_one("#cal-ranking", DataTable)
        table.clear(columns=True)
        table.add_columns("judge", "order", "labels", "sign accuracy", "flip", "κ", "people",
                          "")
        for r in rankings:
            mark = (Text(f"! {WORSE_THAN_REFERENCE}", style="bold red")
                    if r.worse_than_reference else Text(""))
            if (r.judge, r.labels) in in_sample:
                mark.append(f" ({IN_SAMPLE})", style="italic")
            table.add_row(safe_line(r.judge), r.order, safe_line(r.labels),
                          r.sign_accuracy.format_pct(), _pct(r.flip_rate),
                          "–" if r.kappa.value is None else f"{r.kappa.value:.2f}",
                          _pct(r.human_ceiling), mark)
        table.border_title = (f"Which judge can I trust? {len(rankings)} calibrated, best "
                              "first (r hides)")

    def action_toggle_ranking(self) -> None:
        """``r``: show or hide every calibrated judge, ranked."""
        table = self.query_one("#cal-ranking", DataTable)
        table.display = not table.display
        if table.display:
            if not table.row_count:
                self.notify("No judge calibrated yet: j starts a calibration.", timeout=3)
            table.focus()

    # ------------------------------------------------------------------ stepping

    def action_step(self, delta: int) -> None:
        """``[`` / ``]``: the older / newer stored calibration."""
        ids = [c.id for c in self.listing]
        if self.calibration is None or self.calibration.id not in ids or len(ids) < 2:
            self.notify("No other calibration to show.", timeout=2)
            return
        index = ids.index(self.calibration.id) + delta
        if not 0 <= index < len(ids):
            self.notify("That is the " + ("oldest" if delta < 0 else "newest") + " one.",
                        timeout=2)
            return
        self.reload(ids[index])

    # ------------------------------------------------------------------ a new calibration

    def action_new_calibration(self) -> None:
        from mirage_tui.dialogs.calibrate import CalibrateScreen, CalibrationRequest

        if self.calibrating.running:
            self.notify("A calibration is running; x cancels it.", timeout=3)
            return

        def chosen(request: CalibrationRequest | None) -> None:
            if request is None or self.store is None:
                return

            def work(store, progress, cancel):
                from engine.arena.trust.calibrate import calibrate_judge

                return calibrate_judge(store, request.labels, request.judge,
                                       aspect=request.aspect, order=request.order,
                                       sample=request.sample, n_threads=self.threads,
                                       progress=progress, cancel=cancel,
                                       min_interval=MIN_INTERVAL)

            if not self.calibrating.launch(request.labels, work):
                return
            self.refresh_bindings()
            bar = self.query_one("#cal-progress", ProgressBar)
            bar.update(total=None, progress=0)
            bar.display = True
            job = self.query_one("#cal-job", Static)
            job.display = True
            job.update(f"Calibrating {request.judge} on {request.labels} ({request.aspect}, "
                       f"order {request.order}, "
                       f"{request.sample or 'all'} pairs)… (x cancels)")

        self.app.push_screen(CalibrateScreen(self.calibration.judge if self.calibration
                                             else self.judge), chosen)

    @on(JobController.Progress)
    def _calibrate_progress(self, message: JobController.Progress) -> None:
        self.calibrating.progress_handled()
        p = self.calibrating.latest
        if p is None:
            return
        self.query_one("#cal-progress", ProgressBar).update(total=p.total or None,
                                                             progress=p.done)
        self.query_one("#cal-job", Static).update(
            f"Calibrating on {p.name}: {p.done}/{p.total} {p.unit} ({p.cached} cached, "
            f"{p.errors} failed)" + (f" · {p.rate:.2f}/s" if p.rate else "")
            + (f" · about {p.eta_seconds:.0f}s left" if p.eta_seconds is not None else "")
            + (" · cancelling…" if self.calibrating.cancelling else " · x cancels"))

    @on(JobController.Failed)
    def _calibrate_failed(self, message: JobController.Failed) -> None:
        self.query_one("#cal-progress").display = False
        self.refresh_bindings()
        self.query_one("#cal-job", Static).update(f"Calibration failed: {message.error}")
        self.app.notify(message.error, title="Calibration failed", severity="error",
                        markup=False, timeout=15)

    @on(JobController.Finished)
    def _calibrate_done(self, message: JobController.Finished) -> None:
        self.query_one("#cal-progress").display = False
        self.refresh_bindings()
        s = message.summary
        line = (f"Calibration of {s.judge} on {s.labels}: {s.status}, {s.pairs} pairs "
                f"({s.judged} judged now, {s.cached} cached)"
                + (f": {s.message}" if s.message else ""))
        if s.calibration_id is None:
            line += "; press j again to resume (the verdicts are cached)"
        self.query_one("#cal-job", Static).update(line)
        self.app.notify(line, title="Calibration", markup=False, timeout=10,
                        severity={"done": "information", "failed": "error"}.get(s.status,
                                                                                "warning"))
        if s.calibration_id is not None:
            self.judge = s.judge
            self.sub_title = f"calibration · {s.judge}"
            self.reload(s.calibration_id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``x`` is in the footer only while a calibration runs (a hidden ``x`` says none
        does)."""
        return self.calibrating.running if action == "cancel_calibration" else True

    def action_cancel_calibration(self) -> None:
        self.calibrating.cancel_key("No calibration is running.",
                                    "Cancelling after the current pair; the calibration "
                                    "resumes from the cache.")

    def action_cancel_calibration_why(self) -> None:
        self.action_cancel_calibration()

    def on_unmount(self) -> None:
        self.calibrating.cancel_quietly()

    @on(WorkerFailed)
    def _worker_failed(self, message: WorkerFailed) -> None:
        self.query_one("#cal-status", Static).update(
            f"Could not load {message.what}: {message.error}")
        self.notify_failed(message)

    def action_back(self) -> None:
        self.go_back()


def _pct(e) -> str:
    """A rate with its 95% CI and n (``12.5% [4.0, 30.1] n=24``), as every rate shown."""
    return "–" if e is None or e.value is None else e.format_pct()


def position_line(cal, listing: list) -> str:
    """Which stored calibration this is (the line above has judge, template, aspect and
    orders): its pairs and date, and k of n ([ ] step)."""
    ids = [c.id for c in listing]
    entry = listing[ids.index(cal.id)] if cal.id in ids else None
    pairs = cal.config.get("pairs", entry.pairs if entry else 0)
    text = f"{pairs} pairs judged · {cal.created_at[:19].replace('T', ' ')}"
    if len(ids) > 1 and entry is not None:
        text += f" · {ids.index(cal.id) + 1} of {len(ids)} stored ([ older, ] newer)"
    return text + " · j new calibration"
