# One idea: the form, the RunConfig it builds and that config's plan preview change together.
"""The new-run screen: a run configuration as a form, its plan size and time estimate live.

Every change rebuilds the :class:`~engine.runs.RunConfig` (a :class:`ConfigError` is shown
inline, under the form) and, a moment later, plans it in a thread worker: the stored run of
its name is looked up (once), ``plan_run`` checks the dataset, the models and that run, and
``estimate_remaining`` (:mod:`engine.runs.estimates`, the estimator ``--dry-run`` and the Live
ETA use) times the items left from measured speeds. ``ctrl+s`` or the Start button hands the
plan shown to the app's run controller, which executes it as it is and opens Live run; when
the form or the stored runs changed since that plan was made, it says so and the run is
planned again. ``ctrl+o`` (or Save TOML) writes the form as a run file (:mod:`.new_run_toml`,
a feature widget). The dataset, generators and retriever start as config.toml's (``dataset``,
``generators``, ``embedder``) when they are offered. A typed run name close to a stored run's
gets a "did you mean". The fields' parsing and the plan's text are :mod:`.new_run_text`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import (Button, Header, Input, Label, Select, SelectionList,
                             Static)

from engine.datasets.demo_pool import DEMO_NAME
from engine.runs import ConfigError, RunConfig
from engine.runs.config import DEFAULT_MAX_TOKENS, DEFAULT_THINKING_BUDGET
from engine.runs.plan import Plan
from mirage_tui.commands import PaletteCommand
from mirage_tui.screens.base import BaseScreen
from mirage_tui.screens.new_run_text import (name_hint, optional_float, optional_int,
                                            parse_ks, plan_summary, thinking_text)
from mirage_tui.screens.new_run_toml import SaveToml
from mirage_tui.widgets.footer import Footer
from mirage_tui.widgets.ticks import TickList  # ticked vs unticked by glyph, not colour

TEMPLATES = (("mirage (MIRAGE reference prompts)", "mirage"),
             ("bergen (system prompt in the query's language)", "bergen"),
             ("mirage-bench (cited answers in the query's language)", "mirage-bench"))
THINKING = (("auto (the model's default)", "auto"), ("on", "on"), ("off", "off"),
            ("on and off (two systems each)", "on,off"))
BASIC = ("base", "oracle", "mixed")
RETRIEVED = "retrieved"
DEFAULT_SAMPLE = "20"
PREVIEW_DELAY = 0.3


@dataclass(frozen=True)
class Preview:
    """The plan the screen shows: the form it was made from (``RunConfig.as_json()``), the
    stored runs as they were then (:func:`engine.store.runs.runs_fingerprint`) and the plan
    itself, which Start executes unless either changed."""
    form: dict
    runs: tuple
    plan: Plan

    def changed(self, config: RunConfig, store) -> str | None:
        """What changed since the plan was made, in words; None when nothing did."""
        from engine.store.runs import runs_fingerprint

        if config.as_json() != self.form:
            return "The form changed"
        try:
            if store is None or runs_fingerprint(store) != self.runs:
                return "The stored runs changed"
        except Exception:  # noqa: BLE001 - a busy or odd store: plan again to be sure
            return "The stored runs could not be read"
        return None


@dataclass
class FormChoices:
    """What the form offers: QA datasets (labels), installed generators and embedders, and
    endpoints (configured, or running on a usual loopback port)."""
    datasets: list[tuple[str, str]]        # (label, the reference a run config uses)
    generators: list[tuple[str, bool]]     # (name, packaged)
    embedders: list[str]
    endpoints: list[str] = field(default_factory=list)


class NewRunScreen(BaseScreen):
    """Configure a run; see the module docstring."""

    AUTO_FOCUS = "#run-dataset"     # the form's first field

    BINDINGS = [
        Binding("ctrl+s", "start_run", "Start", priority=True),
        *SaveToml.KEYS,
        Binding("escape", "app.go_back", "Back", show=False),
    ]

    PALETTE = (
        PaletteCommand("runs: start the configured run",
                       "Start the run configured on New run (ctrl+s)", "start_run"),
        PaletteCommand("runs: save the form as a run file (TOML)",
                       "Write New run's configuration for `mirage-tui run --config` (ctrl+o)",
                       "save_toml"),
    )
    PALETTE_AFTER = "new_run"

    DEFAULT_CSS = """
    NewRunScreen #new-run-form {
        height: 1fr;
        padding: 0 1;
    }
    NewRunScreen #new-run-columns { height: auto; }
    NewRunScreen #new-run-left {
        width: 1fr;
        height: auto;
        margin-right: 1;
    }
    NewRunScreen #new-run-right {
        width: 1fr;
        height: auto;
    }
    NewRunScreen .form-row {
        height: auto;
        margin-bottom: 1;
    }
    NewRunScreen .form-label {
        width: 12;
        color: $text-muted;
    }
    NewRunScreen .form-row Input, NewRunScreen .form-row Select {
        width: 1fr;
    }
    NewRunScreen .form-row Input.short {
        width: 10;
    }
    NewRunScreen SelectionList {
        width: 1fr;
        height: auto;
        max-height: 7;
        border: round $primary 50%;
        border-title-color: $text-muted;
        padding: 0;
        margin-bottom: 1;
    }
    NewRunScreen SelectionList:focus {
        border: round $accent;
    }
    NewRunScreen .form-hint {
        width: 1fr;
        color: $text-muted;
        padding-left: 1;
    }
    NewRunScreen #new-run-footer {
        height: auto;
        padding: 0 1;
        border-top: solid $primary 50%;
    }
    NewRunScreen #new-run-footer .form-row {
        margin-bottom: 0;
    }
    NewRunScreen #run-plan { width: 1fr; height: auto; }
    NewRunScreen #run-error {
        width: 1fr;
        height: auto;
        color: $text-error;
    }
    NewRunScreen #run-start { margin-left: 1; }
    """

    @dataclass
    class ChoicesLoaded(Message):
        choices: FormChoices

    @dataclass
    class Planned(Message):
        token: int
        text: str
        error: str | None
        seconds: float | None = None      # the estimate for the items left
        preview: Preview | None = None    # what the text shows (None: an error)

    def __init__(self) -> None:
        super().__init__()
        self._timer: Timer | None = None
        self._token = 0
        self.choices: FormChoices | None = None
        self.config: RunConfig | None = None
        self.plan_text = ""
        self.estimate_seconds: float | None = None
        self.preview: Preview | None = None    # the plan shown, what Start executes
        self._suspended = False
        self.run_file = SaveToml()

    def compose(self) -> ComposeResult:
        yield Header()
        # never focused itself: arrows act on the field that has the focus, not the scroll
        with VerticalScroll(id="new-run-form", can_focus=False):
            with Horizontal(id="new-run-columns"):
                with Vertical(id="new-run-left"):
                    yield from self._row("dataset", Select(
                        [], prompt="loading…", id="run-dataset", allow_blank=True,
                        compact=True))
                    yield from self._row("queries", Input(
                        DEFAULT_SAMPLE, placeholder="all", id="run-sample", classes="short",
                        compact=True, type="integer"), "blank: all")
                    yield from self._row("adaptive CI", Input(
                        "", placeholder="off", id="run-adaptive", classes="short",
                        compact=True), "stop at this CI ±")
                    yield from self._row("prompt", Select(
                        TEMPLATES, value="mirage", allow_blank=False, id="run-template",
                        compact=True))
                    yield from self._row("seed", Input(
                        "0", id="run-seed", classes="short", compact=True, type="integer"))
                    yield from self._row("max tokens", Input(
                        str(DEFAULT_MAX_TOKENS), id="run-max-tokens", classes="short",
                        compact=True,
                        type="integer"), "per answer")
                    yield from self._row("thinking", Select(
                        THINKING, value="auto", allow_blank=False, id="run-thinking",
                        compact=True))
                    yield from self._row("think max", Input(
                        "", placeholder=str(DEFAULT_THINKING_BUDGET), id="run-thinking-budget",
                        classes="short", compact=True, type="integer"), "tokens if it thinks")
                    yield from self._row("threads", Input(
                        "", placeholder="auto", id="run-threads", classes="short",
                        compact=True, type="integer"), "llama.cpp")
                    yield from self._row("in flight", Input(
                        "", placeholder="auto", id="run-concurrency", classes="short",
                        compact=True, type="integer"), "requests at once")
                    yield from self._row("name", Input(
                        "", placeholder="derived from the configuration", id="run-name",
                        compact=True))
                with Vertical(id="new-run-right"):
                    generators = TickList(id="run-generators")
                    generators.border_title = "generators"
                    yield generators
                    settings = TickList(
                        ("base (no context)", "base", True),
                        ("oracle (the gold chunk)", "oracle", True),
                        ("mixed (the query's pool)", "mixed", True),
                        ("retrieved@k (top k of a retriever)", RETRIEVED, False),
                        id="run-settings")
                    settings.border_title = "settings"
                    yield settings
                    retrievers = TickList(id="run-retrievers")
                    retrievers.border_title = "retrievers (for retrieved@k)"
                    yield retrievers
                    yield from self._row("top-k", Input(
                        "1,3,5", id="run-topk", classes="short", compact=True),
                        "k of retrieved@k")
        with Vertical(id="new-run-footer"):
            yield Static("Planning…", id="run-plan", markup=False)
            yield Static("", id="run-error", markup=False)
            with Horizontal(classes="form-row"):
                yield Static("ctrl+s starts · the same configuration resumes it",
                             classes="form-hint")
                yield Button("Save TOML", id="run-save-toml", compact=True)
                yield Button("Start run", variant="primary", id="run-start", compact=True)
        yield Footer(compact=True)
        yield self.run_file

    @staticmethod
    def _row(label: str, field, hint: str | None = None) -> ComposeResult:
        with Horizontal(classes="form-row"):
            yield Label(label, classes="form-label")
            yield field
            if hint:
                yield Static(hint, classes="form-hint", markup=False)

    def on_mount(self) -> None:
        threads = self.threads
        if threads:
            self.query_one("#run-threads", Input).value = str(threads)
        self.load_choices()

    # ------------------------------------------------------------------ choices

    @work(thread=True, exclusive=True, exit_on_error=False, group="new-run-choices",
          name="list datasets and models")
    def load_choices(self) -> None:
        from engine.datasets.catalog import list_datasets
        from models.catalog import embedder_entries, endpoint_entries, list_models

        from engine.runs.plan import dataset_reference

        store = self.store
        datasets: list[tuple[str, str]] = []
        if store is not None:
            try:
                # (label, how a run names it: the one naming rule, as `mirage-tui run` does)
                datasets = [(d.label, dataset_reference(store, d.label))
                            for d in list_datasets(store) if d.kind == "qa" and d.queries]
            finally:
                store.close()
        generators = [(e.name, e.source == "packaged")
                      for e in list_models(include_embedders=False)
                      if e.kind == "generator" and e.installed]
        embedders = [e.name for e in embedder_entries() if e.installed]
        remote = [e.name for e in endpoint_entries() if not e.error]
        self.post_message(self.ChoicesLoaded(FormChoices(datasets, generators, embedders,
                                                         remote)))

    def on_new_run_screen_choices_loaded(self, message: ChoicesLoaded) -> None:
        choices = self.choices = message.choices
        select = self.query_one("#run-dataset", Select)
        with select.prevent(Select.Changed):
            select.set_options(choices.datasets)
            demo = next((ref for label, ref in choices.datasets
                         if label.split("@")[0] == DEMO_NAME), None)
            wanted = self.app_settings.dataset            # config.toml's, when offered
            mine = next((ref for label, ref in choices.datasets
                         if wanted and wanted in (ref, label, label.split("@")[0])), None)
            if mine or demo or choices.datasets:
                select.value = mine or demo or choices.datasets[0][1]
        generators = self.query_one("#run-generators", SelectionList)
        with generators.prevent(SelectionList.SelectedChanged):
            generators.clear_options()
            first = next((name for name, packaged in choices.generators if packaged), None)
            offered = {name for name, _ in choices.generators} | set(choices.endpoints)
            mine = [g for g in self.app_settings.generators if g in offered]
            chosen = set(mine) if mine else {first}
            generators.add_options(
                [(f"{name}" + (" (packaged)" if packaged else ""), name, name in chosen)
                 for name, packaged in choices.generators]
                + [(f"{name} (endpoint)", name, name in chosen) for name in choices.endpoints])
        thinking = self.query_one("#run-thinking", Select)
        if self.app_settings.thinking in {value for _, value in THINKING}:
            with thinking.prevent(Select.Changed):          # config.toml's mode
                thinking.value = self.app_settings.thinking
        retrievers = self.query_one("#run-retrievers", SelectionList)
        with retrievers.prevent(SelectionList.SelectedChanged):
            retrievers.clear_options()
            retrievers.add_options([(name, name, name == self.app_settings.embedder)
                                    for name in choices.embedders])
        if not choices.generators and not choices.endpoints:
            self._show_error("No generator is installed: see Models (2) for what to install.")
        self._schedule_preview(now=True)

    # ------------------------------------------------------------------ the config

    def build_config(self) -> RunConfig:
        """The form as a RunConfig; ConfigError says what is wrong."""
        dataset = self.query_one("#run-dataset", Select).value
        if dataset in (Select.NULL, None):
            raise ConfigError("dataset: pick a dataset (import one on Datasets, 1)")
        chosen = list(self.query_one("#run-settings", SelectionList).selected)
        settings = [s for s in BASIC if s in chosen]
        retrievers: list[str] = []
        if RETRIEVED in chosen:
            ks = parse_ks(self.query_one("#run-topk", Input).value)
            if not ks:
                raise ConfigError("top-k: give at least one k for retrieved@k (e.g. 1,3,5)")
            settings += [f"retrieved@{k}" for k in ks]
            retrievers = list(self.query_one("#run-retrievers", SelectionList).selected)
            if not retrievers:
                raise ConfigError("retrievers: retrieved@k needs at least one retriever")
        generators = list(self.query_one("#run-generators", SelectionList).selected)
        template = self.query_one("#run-template", Select).value
        return RunConfig(
            dataset=str(dataset), generators=generators, settings=settings,
            retrievers=retrievers, template=str(template),
            sample=optional_int(self.query_one("#run-sample", Input).value, "queries"),
            adaptive_target=optional_float(self.query_one("#run-adaptive", Input).value,
                                            "adaptive CI"),
            seed=optional_int(self.query_one("#run-seed", Input).value, "seed") or 0,
            max_tokens=optional_int(self.query_one("#run-max-tokens", Input).value,
                                     "max tokens") or 64,
            thinking=str(self.query_one("#run-thinking", Select).value),
            thinking_budget=optional_int(self.query_one("#run-thinking-budget", Input).value,
                                         "think max"),
            threads=optional_int(self.query_one("#run-threads", Input).value, "threads"),
            concurrency=optional_int(self.query_one("#run-concurrency", Input).value,
                                      "in flight"),
            name=self.query_one("#run-name", Input).value.strip() or None)

    @on(Input.Changed)
    @on(Select.Changed)
    @on(SelectionList.SelectedChanged)
    def _form_changed(self) -> None:
        self._schedule_preview()

    def _schedule_preview(self, now: bool = False) -> None:
        if self._timer is not None:
            self._timer.stop()
        if now:
            self._preview()
        else:
            self._timer = self.set_timer(PREVIEW_DELAY, self._preview)

    def _preview(self) -> None:
        if self.choices is None:
            return
        self._token += 1
        try:
            config = self.build_config()
        except (ConfigError, ValueError) as exc:
            self.config = None
            self._show_error(str(exc))
            self._show_plan("")
            return
        self.config = config
        self._show_error("")
        self.query_one("#run-name", Input).placeholder = config.name or ""
        store = self.store
        if store is not None:
            self._show_plan("Planning…")
            # planned on a copy: the plan's config is the one Start hands on
            self.plan_preview(store, replace(config), self._token)

    @work(thread=True, exclusive=True, exit_on_error=False, group="new-run-plan",
          name="plan the run")
    def plan_preview(self, store, config: RunConfig, token: int) -> None:
        from engine.runs import estimate_remaining, plan_run
        from engine.runs.lookup import find_run
        from engine.store.runs import runs_fingerprint

        form = config.as_json()
        try:
            seen = runs_fingerprint(store)        # before the look-up: a change after it shows
            plan = plan_run(store, config, find_run(store, config.name))
            guess = estimate_remaining(store, plan)
            hint = name_hint(store, config) + thinking_text(store, plan)
        except Exception as exc:  # noqa: BLE001 - ConfigError, LookupError, DatasetNotFound
            self.post_message(self.Planned(token, "", str(exc)))
            return
        finally:
            store.close()
        self.post_message(self.Planned(token, plan_summary(plan, guess) + hint, None,
                                       guess["seconds"], Preview(form, seen, plan)))

    def on_new_run_screen_planned(self, message: Planned) -> None:
        if message.token != self._token:
            return  # a plan for an older state of the form
        self.estimate_seconds = message.seconds
        self.preview = message.preview
        self._show_plan(message.text)
        self._show_error(message.error or "")

    def _show_plan(self, text: str) -> None:
        self.plan_text = text
        self.query_one("#run-plan", Static).update(text)

    def _show_error(self, text: str) -> None:
        error = self.query_one("#run-error", Static)
        error.update(text)
        error.display = bool(text)

    # ------------------------------------------------------------------ start

    @on(Button.Pressed, "#run-start")
    def action_start_run(self) -> None:
        config = self.config_or_why("Cannot start")
        if config is None:
            return
        preview, changed = self.preview, None
        if preview is not None:
            changed = preview.changed(config, self.store)
            if changed is None:
                self.start_run(preview.plan.config, preview.plan)  # what the preview shows
                return
            self.notify(f"{changed} since the plan shown: planning it again.",
                        title="Start run", markup=False, timeout=6)
        self.start_run(config)                  # no plan shown: the run controller plans it

    @on(Button.Pressed, "#run-save-toml")
    def action_save_toml(self) -> None:
        config = self.config_or_why("Cannot save")
        if config is not None:
            self.run_file.ask(config)

    def config_or_why(self, title: str) -> RunConfig | None:
        """The form's RunConfig, or None once the reason is shown (under the form and in a
        notification titled ``title``)."""
        try:
            return self.build_config()
        except (ConfigError, ValueError) as exc:
            self._show_error(str(exc))
            self.notify(str(exc), title=title, severity="error", markup=False)
            return None

    def on_screen_suspend(self) -> None:
        self._suspended = True

    def on_screen_resume(self) -> None:
        # back from elsewhere: datasets, stored runs and speeds may have changed, and the
        # form opens on its first field again (as the first time: AUTO_FOCUS)
        if self._suspended and self.choices is not None:
            self._suspended = False
            self.query_one("#run-dataset").focus()
            self._schedule_preview()
