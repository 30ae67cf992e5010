"""The leaderboard: a run's arena as FastChat's leaderboard is read, with its heatmap and the
surrogate judge's ranking beside the judged one.

Pick the run and the arena (``engine.arena.battles.list_arenas``); the ratings
(``engine.arena.leaderboard.compute_ratings`` over ``load_battles``: rank with CI-aware ties,
Elo, +x/−y, battles, win rate with n) are computed in a worker, then the surrogate
(``engine.arena.surrogate.surrogate_for_run``: predicted ranking, Kendall τ and R² with CIs and
n). ``j`` judges from here (``engine.arena.judging.judge_arena``) with live, throttled progress,
``x`` cancels it (the arena resumes from its cache), ``u`` computes the model-free features the
surrogate needs, and Enter opens the inspector on the highlighted system. The arena modules are
imported when used, so the screen still opens (and says why) when one is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import (Button, DataTable, Footer, Header, Input, Label, ProgressBar,
                             Select, Static)

from mirage_tui.jobs import MIN_INTERVAL, JobController
from mirage_tui.screens.base import BaseModal, BaseScreen
from mirage_tui.widgets.heatmap import WinFractionHeatmap

N_BOOT = 200
DEFAULT_QUERIES = 20
NO_RUNS = ("No runs yet: an arena judges a run's answers, so start a run first "
           "(`mirage-tui run …`).")


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _estimate(e) -> str:
    """``0.667 [0.333, 1.000] n=4`` of an :class:`engine.stats.Estimate` (or its dict)."""
    get = (lambda k: e.get(k)) if isinstance(e, dict) else (lambda k: getattr(e, k, None))
    text = _num(get("value"))
    if get("lo") is not None and get("hi") is not None:
        text += f" [{get('lo'):.3f}, {get('hi'):.3f}]"
    return text + f" n={get('n')}"


def surrogate_text(report) -> Text:
    """The surrogate's ranking beside the judged one, τ and R² with CIs and n."""
    out = Text("Surrogate judge (random forest on heuristic features)\n", style="bold")
    out.append(f"Kendall τ {_estimate(report.tau)} · held-out R² {_estimate(report.r2)} · "
               f"{report.n_judged} judged, {report.n_unjudged} unjudged contestants; "
               f"{report.heldout}\n")
    width = max([len("system")] + [len(r.system) for r in report.rows])
    out.append(f"{'pred':>4}  {'judged':>6}  {'system':<{width}}  {'Elo':>8}  {'predicted':>9}\n",
               style="bold")
    for r in report.rows:
        judged = "–" if r.judged_rank is None else str(r.judged_rank)
        elo = "unjudged" if r.elo is None else f"{r.elo:.0f}"
        out.append(f"{r.predicted_rank:>4}  {judged:>6}  {r.system:<{width}}  {elo:>8}  "
                   f"{r.predicted:>9.0f}\n")
    if report.importances:
        top = sorted(report.importances.items(), key=lambda kv: -kv[1])[:5]
        out.append("top features: " + ", ".join(f"{k} {v:.2f}" for k, v in top) + "\n",
                   style="dim")
    for note in report.notes:
        out.append(f"note: {note}\n", style="italic")
    return out


# --------------------------------------------------------------------------- judge dialog


class JudgeArenaScreen(BaseModal[tuple[str, int] | None]):
    """Pick the judge model and how many queries to judge; dismisses ``(judge, queries)``."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    JudgeArenaScreen { align: center middle; }
    #judge-dialog { width: 76; max-width: 100%; height: auto; padding: 0 1;
                    border: thick $accent; background: $surface; }
    #judge-title { text-style: bold; margin-bottom: 1; }
    .judge-row { height: 1; margin-top: 1; }
    .judge-row Label { width: 10; color: $text-muted; }
    #judge-model { width: 1fr; }
    #judge-queries { width: 12; }
    #judge-hint { margin-top: 1; color: $text-muted; }
    #judge-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    #judge-buttons Button { margin-left: 1; }
    """

    @dataclass
    class ModelsFound(Message):
        names: list[str]
        missing: list[str]

    def __init__(self, run_name: str, queries: int = DEFAULT_QUERIES) -> None:
        super().__init__()
        self.run_name = run_name
        self.queries = queries

    def compose(self) -> ComposeResult:
        with Vertical(id="judge-dialog"):
            yield Label(f"Judge run {self.run_name} pairwise", id="judge-title", markup=False)
            with Horizontal(classes="judge-row"):
                yield Label("judge")
                yield Select([], prompt="finding models…", id="judge-model", compact=True)
            with Horizontal(classes="judge-row"):
                yield Label("queries")
                yield Input(str(self.queries), id="judge-queries", type="integer",
                            compact=True)
            yield Static("Every pair of contestants on N sampled queries (seeded); stored "
                         "verdicts are reused, so a cancelled judging resumes.",
                         id="judge-hint", markup=False)
            with Horizontal(id="judge-buttons"):
                yield Button("Judge", variant="primary", id="judge-go")
                yield Button("Cancel", id="judge-cancel")

    def on_mount(self) -> None:
        self.find_models()
        self.query_one("#judge-model", Select).focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="judge-models",
          name="find judge models")
    def find_models(self) -> None:
        try:
            from models.catalog import list_models

            entries = [e for e in list_models(include_embedders=False)
                       if e.kind == "generator"]
        except Exception as exc:
            self.app.notify(f"Cannot list models: {exc}", severity="error", markup=False)
            entries = []
        entries.sort(key=lambda e: (e.source != "packaged", e.name))
        usable = [e.name for e in entries if e.installed and not e.error]
        missing = [f"{e.name} ({e.install or e.error or 'not installed'})" for e in entries
                   if not (e.installed and not e.error)]
        self.post_message(self.ModelsFound(usable, missing))

    @on(ModelsFound)
    def _models_found(self, message: ModelsFound) -> None:
        select = self.query_one("#judge-model", Select)
        select.set_options([(Text(n), n) for n in message.names])
        if message.names:
            select.value = message.names[0]
        else:
            self.query_one("#judge-hint", Static).update(
                "No judge model is installed: `mirage-tui models list` shows how to install "
                "one" + (f" ({'; '.join(message.missing[:2])})" if message.missing else "."))

    @on(Input.Submitted, "#judge-queries")
    @on(Button.Pressed, "#judge-go")
    def _go(self) -> None:
        model = self.query_one("#judge-model", Select).value
        if model == Select.NULL:
            self.notify("Pick a judge model first.", severity="warning")
            return
        raw = self.query_one("#judge-queries", Input).value.strip()
        try:
            queries = int(raw)
            if queries < 1:
                raise ValueError
        except ValueError:
            self.notify("Queries: a whole number, at least 1.", severity="warning")
            return
        self.dismiss((str(model), queries))

    @on(Button.Pressed, "#judge-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


# --------------------------------------------------------------------------- the screen


class LeaderboardScreen(BaseScreen):
    """Ratings, heatmap and surrogate of one run's arena. Escape goes back."""

    AUTO_FOCUS = "#ratings"

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("j", "judge", "Judge"),
        Binding("x", "cancel_judging", "Cancel judging", show=False),
        Binding("c", "toggle_counts", "Counts"),
        Binding("u", "surrogate_features", "Surrogate"),
        Binding("a", "pick_arena", "Arena"),
        Binding("r", "refresh", "Refresh"),
    ]

    DEFAULT_CSS = """
    LeaderboardScreen #lb-pickers { height: 1; padding: 0 1; }
    LeaderboardScreen #lb-run { width: 1fr; margin-right: 1; }
    LeaderboardScreen #lb-arena { width: 1fr; }
    LeaderboardScreen #lb-status { height: auto; max-height: 3; padding: 0 1;
        color: $text-muted; }
    LeaderboardScreen #lb-progress { height: 1; padding: 0 1; }
    LeaderboardScreen #lb-body { height: 1fr; }
    LeaderboardScreen #ratings { height: auto; max-height: 14; border: round $primary 50%; }
    LeaderboardScreen #ratings:focus { border: round $accent; }
    LeaderboardScreen .lb-block { height: auto; padding: 0 1; margin-top: 1; }
    LeaderboardScreen #lb-heatmap { margin-top: 1; }
    """

    @dataclass
    class ChoicesLoaded(Message):
        runs: list[str]
        run: str | None
        arenas: list
        arena: str | None

    @dataclass
    class BoardLoaded(Message):
        generation: int
        ratings: object | None
        error: str | None

    @dataclass
    class SurrogateLoaded(Message):
        generation: int
        text: Text

    @dataclass
    class Failed(Message):
        what: str
        error: str

    def __init__(self, run_name: str | None = None, arena: str | None = None) -> None:
        super().__init__()
        self.run_name = run_name
        self.arena = arena
        self.arenas: list = []
        self.ratings = None
        self.generation = 0
        self.judging = JobController(self, group="lb-judge")

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="lb-pickers"):
            yield Select([], prompt="run", id="lb-run", compact=True)
            yield Select([], prompt="arena", id="lb-arena", compact=True)
        yield Static("Loading…", id="lb-status", markup=False)
        yield ProgressBar(id="lb-progress", show_eta=False)
        with VerticalScroll(id="lb-body"):
            ratings = DataTable(id="ratings", cursor_type="row", zebra_stripes=True)
            ratings.border_title = "Ratings"
            yield ratings
            yield Static("", id="lb-notes", classes="lb-block", markup=False)
            yield WinFractionHeatmap(id="lb-heatmap")
            yield Static("", id="lb-surrogate", classes="lb-block", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "leaderboard"
        self.query_one("#lb-progress").display = False
        table = self.query_one("#ratings", DataTable)
        for label, key in (("rank", "rank"), ("system", "system"), ("Elo", "elo"),
                           ("95% CI", "ci"), ("battles", "battles"), ("W/T/L", "wtl"),
                           ("win rate", "rate")):
            table.add_column(label, key=key)
        table.focus()
        self.action_refresh()

    def _store(self):
        return self.store

    def action_refresh(self) -> None:
        store = self._store()
        if store is None:
            self.set_timer(0.25, self.action_refresh)
            return
        self.load_choices(store, self.run_name, self.arena)

    # ------------------------------------------------------------------ choices

    @work(thread=True, exclusive=True, exit_on_error=False, group="lb-choices",
          name="list arenas")
    def load_choices(self, store, run: str | None, arena: str | None) -> None:
        from engine.results.records import known_runs

        try:
            from engine.arena.battles import list_arenas

            runs = known_runs(store)
            arenas = []
            if run is None:  # the latest run that has an arena, else the latest run
                for name in reversed(runs):
                    arenas = list_arenas(store, name)
                    if arenas:
                        run = name
                        break
                else:
                    run = runs[-1] if runs else None
            elif run is not None:
                arenas = list_arenas(store, run)
            names = [a.name for a in arenas]
            if arena not in names:
                arena = names[-1] if names else None
            self.post_message(self.ChoicesLoaded(runs, run, arenas, arena))
        except Exception as exc:
            self.post_message(self.Failed("the arenas", f"{type(exc).__name__}: {exc}"))
        finally:
            store.close()

    @on(ChoicesLoaded)
    def _choices_loaded(self, message: ChoicesLoaded) -> None:
        self.run_name, self.arena, self.arenas = message.run, message.arena, message.arenas
        runs = self.query_one("#lb-run", Select)
        with runs.prevent(Select.Changed):
            names = list(message.runs) + ([message.run] if message.run and
                                          message.run not in message.runs else [])
            runs.set_options([(Text(n), n) for n in names])
            if message.run is not None:
                runs.value = message.run
        arenas = self.query_one("#lb-arena", Select)
        with arenas.prevent(Select.Changed):
            arenas.set_options([(Text(f"{a.name} ({a.mode}, {a.battles} battles)"), a.name)
                                for a in message.arenas])
            if message.arena is not None:
                arenas.value = message.arena
        if message.run is None:
            self._empty(NO_RUNS)
        elif message.arena is None:
            self._empty(f"No arena yet for run {message.run}: press j to judge its answers "
                        f"pairwise here, or run `mirage-tui arena judge {message.run} "
                        "--judge MODEL`.")
        else:
            self._load_board()

    def _empty(self, text: str) -> None:
        self.generation += 1
        self.ratings = None
        self.query_one("#ratings", DataTable).clear()
        self.query_one("#lb-status", Static).update(text)
        self.query_one("#lb-notes", Static).update("")
        self.query_one("#lb-heatmap", WinFractionHeatmap).set_ratings(None)
        self.query_one("#lb-surrogate", Static).update("")

    @on(Select.Changed, "#lb-run")
    def _run_picked(self, event: Select.Changed) -> None:
        if event.value != Select.NULL and event.value != self.run_name:
            self.run_name, self.arena = str(event.value), None
            self.action_refresh()

    @on(Select.Changed, "#lb-arena")
    def _arena_picked(self, event: Select.Changed) -> None:
        if event.value != Select.NULL and event.value != self.arena:
            self.arena = str(event.value)
            self._load_board()

    def action_pick_arena(self) -> None:
        self.query_one("#lb-arena", Select).focus()

    # ------------------------------------------------------------------ ratings + surrogate

    def _load_board(self) -> None:
        store = self._store()
        if store is None or self.run_name is None or self.arena is None:
            return
        self.generation += 1
        info = next((a for a in self.arenas if a.name == self.arena), None)
        if info is not None:
            self.query_one("#lb-status", Static).update(self._arena_line(info) +
                                                        " · computing the ratings…")
        self.query_one("#lb-surrogate", Static).update("")
        self.load_board(store, self.run_name, self.arena, self.generation)

    @staticmethod
    def _arena_line(info) -> str:
        judge = f"judge {info.judge}" if info.judge else "judge unknown"
        return (f"{info.name} · {info.mode} · {judge} · {info.status} · {info.battles} battles"
                f" · {info.parse_failures} unparsed replies")

    @work(thread=True, exclusive=True, exit_on_error=False, group="lb-board",
          name="ratings")
    def load_board(self, store, run: str, arena: str, generation: int) -> None:
        try:
            try:
                from engine.arena.battles import load_battles
                from engine.arena.leaderboard import compute_ratings
            except ImportError as exc:
                self.post_message(self.BoardLoaded(generation, None,
                                                   f"the ratings are not available ({exc})"))
                return
            battles = load_battles(store, run, arena)
            try:
                ratings = compute_ratings(battles, n_boot=N_BOOT, seed=0)
            except ValueError as exc:  # nothing parsed to rate
                self.post_message(self.BoardLoaded(generation, None, str(exc)))
                return
            self.post_message(self.BoardLoaded(generation, ratings, None))
            self.post_message(self.SurrogateLoaded(generation,
                                                   self._surrogate(store, run, arena)))
        except Exception as exc:
            self.post_message(self.Failed("the ratings", f"{type(exc).__name__}: {exc}"))
        finally:
            store.close()

    def _surrogate(self, store, run: str, arena: str) -> Text:
        hint = (f"press u to compute the model-free features here, or run `mirage-tui arena "
                f"surrogate {run} --arena '{arena}'` (add --judge MODEL for the judged ones)")
        try:
            from engine.arena.features import feature_values
            from engine.arena.surrogate import surrogate_for_run
        except ImportError as exc:
            return Text(f"Surrogate judge not available in this build ({exc}).", style="dim")
        try:
            if not any(any(v is not None for vals in per.values() for v in vals)
                       for per in feature_values(store, run).values()):
                return Text(f"Surrogate judge: no features yet: {hint}.", style="dim")
            return surrogate_text(surrogate_for_run(store, run, arena, n_boot=N_BOOT, seed=0))
        except Exception as exc:  # too few contestants, a failed fit, ...
            return Text(f"Surrogate judge unavailable: {exc}", style="dim")

    @on(BoardLoaded)
    def _board_loaded(self, message: BoardLoaded) -> None:
        if message.generation != self.generation:
            return
        info = next((a for a in self.arenas if a.name == self.arena), None)
        line = self._arena_line(info) if info is not None else (self.arena or "")
        table = self.query_one("#ratings", DataTable)
        table.clear()
        heatmap = self.query_one("#lb-heatmap", WinFractionHeatmap)
        self.ratings = r = message.ratings
        if r is None:
            self.query_one("#lb-status", Static).update(f"{line} · no ratings: {message.error}")
            self.query_one("#lb-notes", Static).update("")
            heatmap.set_ratings(None)
            return
        for s in r.systems:
            rate = "–" if s.win_rate is None else f"{100 * s.win_rate:.1f}% n={s.battles}"
            table.add_row(Text(str(s.rank), justify="right"), Text(s.system),
                          Text(f"{s.elo:.0f}", justify="right"),
                          Text(f"+{s.elo_hi - s.elo:.0f}/-{s.elo - s.elo_lo:.0f}"),
                          Text(str(s.battles), justify="right"),
                          Text(f"{s.wins}/{s.ties}/{s.losses}"), Text(rate, justify="right"),
                          key=s.system)
        judge = f"judge {info.judge}" if info is not None and info.judge else "judge unknown"
        self.query_one("#lb-status", Static).update(
            f"{self.arena} · {judge} · {r.n_battles} battles rated over {r.n_queries} queries"
            f" ({r.parse_failures} unparsed left out) · 95% CIs from {r.n_boot} tournaments "
            f"(seed {r.seed}) · ties count half · Enter inspects a system")
        notes = Text()
        for note in r.notes:
            notes.append(f"note: {note}\n", style="italic")
        if r.parse_failures:
            what = "battle" if r.parse_failures == 1 else "battles"
            notes.append(f"{r.parse_failures} {what} left out: the judge's reply could not be "
                         "parsed\n", style="italic")
        self.query_one("#lb-notes", Static).update(notes)
        heatmap.set_ratings(r)
        self.query_one("#lb-surrogate", Static).update(Text("Surrogate judge: computing…",
                                                            style="dim"))

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
        self.app.push_screen(InspectorScreen(self.run_name, system=system, setting=setting))

    # ------------------------------------------------------------------ judging

    def action_judge(self) -> None:
        if self.judging.running:
            self.notify("Judging is already running; x cancels it.", timeout=3)
            return
        if self.run_name is None:
            self.notify("No run to judge yet.", timeout=3)
            return
        run = self.run_name

        def chosen(answer: tuple[str, int] | None) -> None:
            if answer is None or self._store() is None:
                return
            judge_name, queries = answer

            def work(store, progress, cancel):
                from engine.arena.judging import judge_arena

                return judge_arena(store, run, judge_name, pairs="all", queries=queries,
                                   progress=progress, cancel=cancel, min_interval=MIN_INTERVAL)

            if not self.judging.launch(run, work):
                return
            bar = self.query_one("#lb-progress", ProgressBar)
            bar.update(total=None, progress=0)
            bar.display = True
            self.query_one("#lb-status", Static).update(
                f"Judging {run} with {judge_name} on {queries} queries… (x cancels)")

        self.app.push_screen(JudgeArenaScreen(run), chosen)

    @on(JobController.Progress)
    def _judge_progress(self, message: JobController.Progress) -> None:
        self.judging.progress_handled()
        p = self.judging.latest
        if p is None:
            return
        bar = self.query_one("#lb-progress", ProgressBar)
        bar.update(total=p.total or None, progress=p.done)
        self.query_one("#lb-status", Static).update(
            f"Judging {p.name}: {p.done}/{p.total} {p.unit} "
            f"({p.cached} cached, {p.detail.parse_failures} unparsed)"
            + (f" · {p.rate:.2f}/s" if p.rate else "")
            + (f" · about {p.eta_seconds:.0f}s left" if p.eta_seconds is not None else "")
            + " · x cancels")

    @on(JobController.Failed)
    def _judge_failed(self, message: JobController.Failed) -> None:
        self.query_one("#lb-progress").display = False
        self.query_one("#lb-status", Static).update(f"Judging failed: {message.error}")
        self.app.notify(message.error, title="Judging failed", severity="error",
                        markup=False, timeout=15)

    @on(JobController.Finished)
    def _judge_done(self, message: JobController.Finished) -> None:
        self.query_one("#lb-progress").display = False
        s = message.summary
        text = (f"Arena {s.arena}: {s.status}, {s.done}/{s.total} battles ({s.judged} judged "
                f"now, {s.cached} cached, {s.parse_failures} unparsed)")
        if s.message:
            text += f": {s.message}"
        self.app.notify(text, title="Judging", markup=False, timeout=10,
                        severity="information" if s.status == "done" else "warning")
        self.arena = s.arena
        self.action_refresh()

    def action_cancel_judging(self) -> None:
        if not self.judging.running:
            self.notify("Nothing is being judged.", timeout=2)
            return
        self.judging.cancel()
        self.notify("Cancelling after the current battle; judging resumes from the cache.",
                    timeout=4)

    # ------------------------------------------------------------------ surrogate features

    def action_surrogate_features(self) -> None:
        store = self._store()
        if store is None or self.run_name is None or self.arena is None:
            self.notify("No arena to compute the surrogate for.", timeout=3)
            return
        self.generation += 1
        self.query_one("#lb-surrogate", Static).update(
            Text("Computing the model-free features (language, citations, ROUGE-L, BLEU)…",
                 style="dim"))
        self.compute_features(store, self.run_name, self.arena, self.generation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="lb-features",
          name="surrogate features")
    def compute_features(self, store, run: str, arena: str, generation: int) -> None:
        try:
            from engine.arena.battles import load_battles
            from engine.arena.features import compute_features

            queries = sorted({b.query for b in load_battles(store, run, arena)})
            compute_features(store, run, judge=None, queries=queries)
            self.post_message(self.SurrogateLoaded(generation,
                                                   self._surrogate(store, run, arena)))
        except Exception as exc:
            self.post_message(self.Failed("the features", f"{type(exc).__name__}: {exc}"))
        finally:
            store.close()

    # ------------------------------------------------------------------ the rest

    def action_back(self) -> None:
        if self.focused is not None and self.focused.id in ("lb-run", "lb-arena"):
            self.query_one("#ratings", DataTable).focus()
        else:
            self.go_back()      # pop a pushed screen, else the previous mode

    def on_unmount(self) -> None:
        self.judging.cancel_quietly()      # judging stops after its battle, stays resumable

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        self.query_one("#lb-status", Static).update(
            f"Could not load {message.what}: {message.error}")
        self.app.notify(message.error, title=f"Could not load {message.what}",
                        severity="error", markup=False, timeout=10)
