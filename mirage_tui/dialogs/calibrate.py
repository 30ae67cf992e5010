"""The new-calibration dialog of the Calibration screen: which judge (an installed generator or
endpoint, a reference judge, a judge fitted in this workspace), against which labels dataset
(``engine.datasets.labels.labels_datasets``) and aspect, in which order (random, both,
debiased), on a sample of the pairs or all; dismisses with a :class:`CalibrationRequest`
(``engine.arena.trust.calibrate.calibrate_judge``'s options). Judges and datasets are listed in a
worker, packaged LLMs first, then the offline judges; the moment they are found, each list's
"finding …" prompt gives way to what was found (or to why there is nothing to pick), and the
aspects follow the labels dataset chosen."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, Select, Static

from mirage_tui.dialogs.judge_arena import judge_models
from mirage_tui.dialogs.frame import FramedDialog, button_row

ORDER_CHOICES = (("random", "random: one seeded order per pair"),
                 ("both", "both: A|B and B|A, a disagreement is a tie (twice the calls)"),
                 ("debiased", "debiased: both orders, probabilities averaged (the arena's)"))
IMPORT_HINT = ("No labels dataset in the workspace: import human pairwise labels first, e.g. "
               "mirage-tui data import ../shared/data/ragchecker-meta/human_labeled_pairs.json "
               "(or a JSONL of query, answer_a, answer_b, label, annotator).")


@dataclass(frozen=True)
class CalibrationRequest:
    judge: str
    labels: str
    aspect: str
    order: str                      # random | both | debiased
    sample: int | None


class CalibrateScreen(FramedDialog[CalibrationRequest | None]):
    """Pick judge, labels, aspect, orders and sample; dismisses a :class:`CalibrationRequest`."""

    DEFAULT_CSS = """
    #calib-dialog { width: 84; }
    .dialog-row Select { width: 1fr; }
    #calib-sample { width: 12; }
    """

    @dataclass
    class ChoicesFound(Message):
        models: list[str]
        missing: list[str]
        datasets: list        # engine.datasets.labels.LabelsDataset
        error: str = ""
        llms: int = 0         # the first ``llms`` models are LLMs, then the offline judges

    def __init__(self, judge: str | None = None) -> None:
        super().__init__()
        self.judge = judge
        self.datasets: dict = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="calib-dialog", classes="dialog-frame"):
            yield Label("New calibration: the judge against human labels", id="calib-title",
                        classes="dialog-title")
            with Horizontal(classes="dialog-row"):
                yield Label("judge")
                yield Select([], prompt="finding models…", id="calib-judge", compact=True)
            with Horizontal(classes="dialog-row"):
                yield Label("labels")
                yield Select([], prompt="finding labels…", id="calib-labels", compact=True)
            with Horizontal(classes="dialog-row"):
                yield Label("aspect")
                yield Select([], prompt="aspect", id="calib-aspect", compact=True)
            with Horizontal(classes="dialog-row"):
                yield Label("order")
                yield Select([(Text(text), value) for value, text in ORDER_CHOICES],
                             value="random", allow_blank=False, id="calib-order",
                             compact=True)
            with Horizontal(classes="dialog-row"):
                yield Label("sample")
                yield Input("", placeholder="all", id="calib-sample", type="integer",
                            compact=True)
            yield Static("Every verdict is cached, so a cancelled calibration resumes.",
                         id="calib-hint", classes="dialog-hint", markup=False)
            yield button_row("calib", "Calibrate")

    def on_mount(self) -> None:
        self.find_choices(self.store)
        self.query_one("#calib-judge", Select).focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="calib-choices",
          name="find calibration choices")
    def find_choices(self, store) -> None:
        from engine.arena.judges.kinds import offline_judge_names

        error, datasets = "", []
        try:
            usable, missing = judge_models()
        except Exception as exc:  # noqa: BLE001 - a broken catalog is a line, not a crash
            error = f"Cannot list models: {exc}"
            usable, missing = [], []
        llms = len(usable)
        offline = offline_judge_names()     # the kinds a workspace does not hold
        if store is not None:
            try:
                from engine.datasets.labels import labels_datasets

                datasets = labels_datasets(store)
                offline = offline_judge_names(store)
            except Exception as exc:  # noqa: BLE001
                error = f"Cannot list the labels datasets: {type(exc).__name__}: {exc}"
            finally:
                store.close()
        usable = usable + offline
        self.judge = _offered_as(self.judge, usable)
        self.post_message(self.ChoicesFound(usable, missing, datasets, error, llms))

    @on(ChoicesFound)
    def _choices_found(self, message: ChoicesFound) -> None:
        hints = []
        if message.error:
            self.app.notify(message.error, severity="error", markup=False)
        judge = self.query_one("#calib-judge", Select)
        judge.prompt = "pick a judge" if message.models else "no judge found"
        judge.set_options([(Text(n), n) for n in message.models])
        if message.models:
            judge.value = self.judge if self.judge in message.models else message.models[0]
        if not message.llms:
            hints.append("No LLM judge is installed (`mirage-tui models list` shows how to "
                         "install one" + (f": {'; '.join(message.missing[:2])})"
                                          if message.missing else ")")
                         + "; the reference and fitted judges need none.")
        self.datasets = {d.ref: d for d in message.datasets}
        labels = self.query_one("#calib-labels", Select)
        labels.prompt = ("pick labels" if message.datasets else
                         "cannot list them" if "labels datasets" in message.error else
                         "none: import labels first")
        labels.set_options([(Text(f"{d.ref} ({d.pairs} pairs)"), d.ref)
                            for d in message.datasets])
        if message.datasets:
            labels.value = message.datasets[-1].ref
            self._set_aspects(message.datasets[-1].ref)
        else:
            self._set_aspects("")
            hints.append(IMPORT_HINT)
        if hints:
            self.query_one("#calib-hint", Static).update("\n".join(hints))

    @on(Select.Changed, "#calib-labels")
    def _labels_changed(self, event: Select.Changed) -> None:
        self._set_aspects("" if event.value == Select.NULL else str(event.value))

    def _set_aspects(self, ref: str) -> None:
        """The aspects of labels dataset ``ref``; none (and a prompt saying why) without one."""
        aspects = self.datasets[ref].aspects if ref in self.datasets else ()
        select = self.query_one("#calib-aspect", Select)
        select.prompt = "aspect" if aspects else ("no labels" if not ref else "none in it")
        select.set_options([(Text(a), a) for a in aspects])
        if aspects:
            select.value = "overall" if "overall" in aspects else aspects[0]

    @on(Input.Submitted, "#calib-sample")
    @on(Button.Pressed, "#calib-go")
    def _go(self) -> None:
        judge = self.query_one("#calib-judge", Select).value
        labels = self.query_one("#calib-labels", Select).value
        aspect = self.query_one("#calib-aspect", Select).value
        if judge == Select.NULL:
            self.notify("Pick a judge model first.", severity="warning")
            return
        if labels == Select.NULL:
            self.notify(IMPORT_HINT, severity="warning", markup=False, timeout=10)
            return
        if aspect == Select.NULL:
            self.notify("This labels dataset has no labels to read.", severity="warning")
            return
        raw = self.query_one("#calib-sample", Input).value.strip()
        sample = None
        if raw:
            from engine.counts import SAMPLE, CountError, parse_count

            try:
                sample = parse_count(raw, SAMPLE)
            except CountError as exc:
                self.notify(f"Sample: {exc} (blank: all pairs).", severity="warning",
                            markup=False)
                return
        self.dismiss(CalibrationRequest(str(judge), str(labels), str(aspect),
                                        str(self.query_one("#calib-order", Select).value),
                                        sample))


def _offered_as(judge: str | None, offered: list[str]) -> str | None:
    """The offered judge that ``judge`` (an arena's or config.toml's spelling: ``smollm2``)
    names, by the one resolver of judge names; ``judge`` itself when it names none."""
    if not judge:
        return judge
    from engine.arena.judges.names import stored_judge

    try:
        return stored_judge(judge, offered, what="judges") or judge
    except LookupError:
        return judge
