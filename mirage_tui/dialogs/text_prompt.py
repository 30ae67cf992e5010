"""A one-line question: a title, a text field with a starting value, a hint; dismisses with
the text typed (stripped; Enter or the button) or None (Escape, Cancel). Renaming a run and
saving New run's form as a TOML file ask with it; ``check`` may refuse a value in place,
saying why (the dialog stays open)."""

from __future__ import annotations

from typing import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Static

from mirage_tui.screens.base import BaseModal


class TextPromptScreen(BaseModal[str | None]):
    """See the module docstring."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    TextPromptScreen { align: center middle; }
    #prompt-dialog { width: 76; max-width: 100%; height: auto; padding: 0 1;
                     border: thick $accent; background: $surface; }
    #prompt-title { text-style: bold; margin-bottom: 1; }
    #prompt-hint { margin-top: 1; color: $text-muted; }
    #prompt-error { color: $text-error; height: auto; }
    #prompt-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    #prompt-buttons Button { margin-left: 1; }
    """

    def __init__(self, title: str, value: str, hint: str, ok: str = "OK",
                 check: Callable[[str], str | None] | None = None) -> None:
        super().__init__()
        self.title_text, self.value, self.hint, self.ok = title, value, hint, ok
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-dialog"):
            yield Label(self.title_text, id="prompt-title", markup=False)
            yield Input(self.value, id="prompt-input")
            yield Static("", id="prompt-error", markup=False)
            yield Static(self.hint, id="prompt-hint", markup=False)
            with Horizontal(id="prompt-buttons"):
                yield Button(self.ok, variant="primary", id="prompt-ok")
                yield Button("Cancel", id="prompt-cancel")

    def on_mount(self) -> None:
        self.query_one("#prompt-input", Input).focus()

    @on(Input.Submitted, "#prompt-input")
    @on(Button.Pressed, "#prompt-ok")
    def _ok(self) -> None:
        text = self.query_one("#prompt-input", Input).value.strip()
        problem = "Type something first." if not text else (
            self.check(text) if self.check is not None else None)
        if problem:
            self.query_one("#prompt-error", Static).update(problem)
            return
        self.dismiss(text)

    @on(Button.Pressed, "#prompt-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
