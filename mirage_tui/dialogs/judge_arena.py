"""The judge dialog of the Leaderboard: which installed generator or endpoint judges a run's
answers pairwise, and on how many queries; dismisses with ``(judge, queries)``. The models are
listed in a worker (``models.catalog.list_models``, then ``endpoint_entries``), packaged ones
first."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, Select, Static

from mirage_tui.screens.base import BaseModal

DEFAULT_QUERIES = 20


def judge_models() -> tuple[list[str], list[str]]:
    """The installed generators and endpoints that can judge (packaged ones first), and the
    catalog generators that cannot yet, each with how to install it (in a worker: slow)."""
    from models.catalog import endpoint_entries, list_models

    entries = [e for e in list_models(include_embedders=False) if e.kind == "generator"]
    remote = endpoint_entries()
    entries.sort(key=lambda e: (e.source != "packaged", e.name))
    usable = [e.name for e in entries + remote if e.installed and not e.error]
    missing = [f"{e.name} ({e.install or e.error or 'not installed'})" for e in entries
               if not (e.installed and not e.error)]
    return usable, missing


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
            usable, missing = judge_models()
        except Exception as exc:
            self.app.notify(f"Cannot list models: {exc}", severity="error", markup=False)
            usable, missing = [], []
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
