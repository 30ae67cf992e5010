"""A small modal question with a few answers: quit during a run, cancel a run, resume one.

Each answer is a button with a key; Escape answers None (the safe choice: nothing happens).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Label, Static

from mirage_tui.screens.base import BaseModal


@dataclass(frozen=True)
class Choice:
    id: str
    label: str
    key: str                 # a single key that answers it
    variant: str = "default"  # Button variant: primary, warning, error, default


class ChoiceModal(BaseModal[str | None]):
    """``title``, a paragraph, and one button per :class:`Choice`; dismisses with its id."""

    DEFAULT_CSS = """
    ChoiceModal {
        align: center middle;
    }
    ChoiceModal > #choice-dialog {
        width: 72;
        max-width: 100%;
        height: auto;
        max-height: 100%;
        padding: 0 1;
        border: thick $accent;
        background: $surface;
    }
    ChoiceModal #choice-title {
        text-style: bold;
        margin-bottom: 1;
    }
    ChoiceModal #choice-buttons {
        height: auto;
        margin-top: 1;
        align-horizontal: right;
    }
    ChoiceModal #choice-buttons Button {
        margin-left: 1;
        min-width: 10;
    }
    """

    BINDINGS = [Binding("escape", "answer('')", "Close")]

    def __init__(self, title: str, body: str, choices: list[Choice], *,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.title_text = title
        self.body = body
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="choice-dialog"):
            yield Label(self.title_text, id="choice-title", markup=False)
            yield Static(self.body, id="choice-body", markup=False)
            with Horizontal(id="choice-buttons"):
                for choice in self.choices:
                    yield Button(f"{choice.label} ({choice.key})", id=f"choice-{choice.id}",
                                 variant=choice.variant)  # type: ignore[arg-type]

    def on_mount(self) -> None:
        # Enter answers the primary (safe or expected) choice, never a destructive one
        buttons = list(self.query(Button))
        primary = [b for b in buttons if b.variant == "primary"]
        if primary or buttons:
            (primary or buttons)[0].focus()

    def on_key(self, event) -> None:
        for choice in self.choices:
            if event.key == choice.key:
                event.stop()
                self.dismiss(choice.id)
                return

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "").removeprefix("choice-"))

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer or None)
