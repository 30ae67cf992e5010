"""The judge dialog of the Leaderboard: which judge compares a run's answers pairwise, on how
many queries and in which order; dismisses with ``(judge, queries, order)``. The judges are
listed in a worker: the offline judges (:data:`engine.arena.judges.kinds.KINDS`: the reference
judges, each answer compared with the reference answer, no LLM; the workspace's fitted judges)
when every query of the run has reference text, then the installed generators and
endpoints (``models.catalog.list_models``, then ``endpoint_entries``), instruction-tuned ones
first (a base model is a poor judge), then packaged ones. The default judge
(:func:`engine.arena.trust.default_judge.default_judge`: the best-calibrated judge that can judge the
run, else the reference judge, else the configured LLM) is preselected in its order, with one
line saying why. The line under the choices describes the judge chosen (:func:`judge_about`)
and the default's line shows only while the default is chosen, so neither describes a judge
that is not. The queries default to, and are capped by, the run's queries that two
contestants both answered. Every change re-estimates the time in a worker
(:func:`engine.arena.judging.estimate.judging_estimate`, at the judge's measured speed: the runs'
estimator); a choice it cannot estimate clears the estimate at once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, Select, Static

from mirage_tui.dialogs.frame import FramedDialog, button_row
from mirage_tui.widgets.estimates import judging_line

if TYPE_CHECKING:
    from engine.runs.lookup import RunInfo

DEFAULT_QUERIES = 20
ORDER_CHOICES = (("random (one seeded order a battle)", "random"),
                 ("both orders (disagreement: a tie)", "both"),
                 ("both, debiased (label probabilities)", "debiased"))


def judge_label(name: str) -> Text:
    """A judge as the list shows it: with what it compares where its kind says
    (:attr:`engine.arena.judges.kinds.JudgeKind.note`: a reference judge's rule)."""
    from engine.arena.judges.kinds import kind_of

    note = kind_of(name).note(name)
    if note is None:
        return Text(name)
    return Text.assemble(name, (f"  ({note}, no LLM)", "dim"))


def judge_about(name: str) -> str:
    """One line on what the judge ``name`` does, for the judge chosen in the dialog (its
    kind's :meth:`~engine.arena.judges.kinds.JudgeKind.about`)."""
    from engine.arena.judges.kinds import kind_of

    return kind_of(name).about(name)


def judge_choices(store, run, usable: list[str]):
    """``(names, default)``: the judges to offer for a run (a ``RunInfo``; module docstring),
    and its :class:`~engine.arena.trust.default_judge.DefaultJudge`."""
    from engine.arena.judges.kinds import kind_of, offline_judge_names
    from engine.arena.trust.default_judge import default_judge, run_has_references

    default = default_judge(store, run)
    offline = []
    if run_has_references(store, run):  # every offline kind, each name its kind offers here
        offline = [n for n in offline_judge_names(store) if kind_of(n).offered(n)]
    names = list(dict.fromkeys(([default.spec] if default.spec else []) + offline + usable))
    return names, default


def judge_models() -> tuple[list[str], list[str]]:
    """The installed generators and endpoints that can judge (packaged ones first), and the
    catalog generators that cannot yet, each with how to install it (in a worker: slow)."""
    from models.catalog import endpoint_entries, list_models

    entries = [e for e in list_models(include_embedders=False) if e.kind == "generator"]
    remote = endpoint_entries()
    # instruction-tuned first: a base model (gemma3-270m) follows no judging instruction
    entries.sort(key=lambda e: (not e.chat, e.source != "packaged", e.name))
    usable = [e.name for e in entries + remote if e.installed and not e.error]
    missing = [f"{e.name} ({e.install or e.error or 'not installed'})" for e in entries
               if not (e.installed and not e.error)]
    return usable, missing


class JudgeArenaScreen(FramedDialog[tuple[str, int, str] | None]):
    """Pick the judge model, how many queries to judge and the order; dismisses
    ``(judge, queries, order)``."""

    DEFAULT_CSS = """
    #judge-dialog { width: 76; }
    #judge-model { width: 1fr; }
    #judge-queries { width: 12; }
    #judge-order { width: 1fr; }
    #judge-why { margin-top: 1; }
    #judge-estimate { margin-top: 1; }
    """

    @dataclass
    class ModelsFound(Message):
        names: list[str]
        missing: list[str]
        queries: int | None = None        # the run's judgeable queries (None: unknown)
        default: object | None = None     # engine.arena.trust.default_judge.DefaultJudge

    @dataclass
    class Estimated(Message):
        token: int
        text: str

    def __init__(self, run: RunInfo, queries: int = DEFAULT_QUERIES) -> None:
        """``run``: the run as its screen looked it up (the dialog looks nothing up again)."""
        super().__init__()
        self.run = run
        self.queries = queries
        self.max_queries: int | None = None
        self.estimate_text = ""
        self.default = None             # engine.arena.trust.default_judge.DefaultJudge, once found
        self._token = 0

    def compose(self) -> ComposeResult:
        with Vertical(id="judge-dialog", classes="dialog-frame"):
            yield Label(f"Judge run {self.run.name} pairwise", id="judge-title",
                        classes="dialog-title", markup=False)
            with Horizontal(classes="dialog-row"):
                yield Label("judge")
                yield Select([], prompt="finding models…", id="judge-model", compact=True)
            with Horizontal(classes="dialog-row"):
                yield Label("queries")
                yield Input(str(self.queries), id="judge-queries", type="integer",
                            compact=True)
                yield Static("", id="judge-queries-max", markup=False)
            with Horizontal(classes="dialog-row"):
                yield Label("order")
                yield Select(ORDER_CHOICES, value="random", allow_blank=False,
                             id="judge-order", compact=True)
            yield Static("Every pair of contestants on N sampled queries (seeded); stored "
                         "verdicts are reused, so a cancelled judging resumes. Both orders "
                         "judge each battle twice, so a judge's liking for the first answer "
                         "cannot decide it.", id="judge-hint", classes="dialog-hint",
                         markup=False)
            yield Static("", id="judge-about", markup=False)
            yield Static("", id="judge-why", markup=False)
            yield Static("", id="judge-estimate", markup=False)
            yield button_row("judge", "Judge")

    def on_mount(self) -> None:
        self.find_models()
        self.query_one("#judge-model", Select).focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="judge-models",
          name="find judge models")
    def find_models(self) -> None:
        from engine.arena.judging.estimate import judgeable_queries

        try:
            usable, missing = judge_models()
        except Exception as exc:
            self.app.notify(f"Cannot list models: {exc}", severity="error", markup=False)
            usable, missing = [], []
        queries, default = None, None
        store = self.store
        if store is not None:
            try:
                queries = judgeable_queries(store, self.run)
                usable, default = judge_choices(store, self.run, usable)
            except Exception:  # noqa: BLE001 - the dialog still works without the cap
                pass
            finally:
                store.close()
        self.post_message(self.ModelsFound(usable, missing, queries, default))

    @on(ModelsFound)
    def _models_found(self, message: ModelsFound) -> None:
        if message.queries:
            self.max_queries = message.queries
            box = self.query_one("#judge-queries", Input)
            if not box.value.strip().isdigit() or int(box.value) > message.queries:
                box.value = str(message.queries)
            self.query_one("#judge-queries-max", Static).update(
                f" of {message.queries} the run has")
        select = self.query_one("#judge-model", Select)
        select.set_options([(judge_label(n), n) for n in message.names])
        default = self.default = message.default
        if message.names:
            if default is not None and default.spec:
                self.query_one("#judge-order", Select).value = default.order
            select.value = default.spec if default is not None and default.spec \
                else message.names[0]
            self._describe()
            self._estimate()
        else:
            self._describe()
            self.query_one("#judge-hint", Static).update(
                "No judge model is installed: `mirage-tui models list` shows how to install "
                "one" + (f" ({'; '.join(message.missing[:2])})" if message.missing else "."))

    @on(Select.Changed, "#judge-model")
    def _describe(self) -> None:
        """The chosen judge's line, and the default's only while it is the one chosen: at the
        moment the choice changes, no line is left describing another judge."""
        model = self.query_one("#judge-model", Select).value
        chosen = None if model == Select.NULL else str(model)
        self.query_one("#judge-about", Static).update(judge_about(chosen) if chosen else "")
        default, why = self.default, ""
        if default is not None and not default.spec:
            why = f"No default judge: {default.why}."
        elif default is not None and chosen == default.spec:
            why = f"Default: {default.spec} in {default.order} order: {default.why}."
        elif default is not None:
            why = f"Not the default judge ({default.spec}, {default.order} order)."
        self.query_one("#judge-why", Static).update(why)

    # ------------------------------------------------------------------ the estimate

    def _queries(self) -> int | None:
        """The queries asked for, or None (with a warning) when not a whole number ≥ 1 or
        more than the run has."""
        raw = self.query_one("#judge-queries", Input).value.strip()
        try:
            queries = int(raw)
            if queries < 1:
                raise ValueError
        except ValueError:
            self.notify("Queries: a whole number, at least 1.", severity="warning")
            return None
        if self.max_queries is not None and queries > self.max_queries:
            self.notify(f"Queries: the run has {self.max_queries} that two contestants both "
                        "answered; at most that many.", severity="warning")
            return None
        return queries

    @on(Input.Changed, "#judge-queries")
    @on(Select.Changed)
    def _estimate(self) -> None:
        model = self.query_one("#judge-model", Select).value
        raw = self.query_one("#judge-queries", Input).value.strip()
        if model == Select.NULL or not raw.isdigit() or int(raw) < 1:
            # the estimate in view was for another choice: it goes at once
            self._token += 1
            self.estimate_text = ("" if model == Select.NULL else
                                  "No estimate: queries must be a whole number, at least 1.")
            self.query_one("#judge-estimate", Static).update(self.estimate_text)
            return
        queries = int(raw) if self.max_queries is None else min(int(raw), self.max_queries)
        self._token += 1
        order = str(self.query_one("#judge-order", Select).value)
        self.query_one("#judge-estimate", Static).update("Estimating…")
        self.estimate(str(model), queries, order, self._token)

    @work(thread=True, exclusive=True, exit_on_error=False, group="judge-estimate",
          name="estimate the judging")
    def estimate(self, judge: str, queries: int, order: str, token: int) -> None:
        from engine.arena.judging.estimate import judging_estimate

        store = self.store
        if store is None:
            return
        try:
            guess = judging_estimate(store, self.run, judge, queries, order)
        except Exception as exc:  # noqa: BLE001 - ArenaError, RunNotFound: say why
            self.post_message(self.Estimated(token, f"No estimate: {exc}"))
            return
        finally:
            store.close()
        self.post_message(self.Estimated(token, judging_line(guess)))

    @on(Estimated)
    def _estimated(self, message: Estimated) -> None:
        if message.token == self._token:
            self.estimate_text = message.text
            self.query_one("#judge-estimate", Static).update(message.text)

    @on(Input.Submitted, "#judge-queries")
    @on(Button.Pressed, "#judge-go")
    def _go(self) -> None:
        model = self.query_one("#judge-model", Select).value
        if model == Select.NULL:
            self.notify("Pick a judge model first.", severity="warning")
            return
        queries = self._queries()
        if queries is None:
            return
        self.dismiss((str(model), queries, str(self.query_one("#judge-order", Select).value)))

