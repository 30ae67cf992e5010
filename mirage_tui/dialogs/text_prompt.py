"""A one-line question: a title, a text field with a starting value, a hint; dismisses with
the text typed (stripped; Enter or the button) or None (Escape, Cancel). Renaming a run and
saving New run's form as a TOML file ask with it; ``check`` may refuse a value in place,
saying why (the dialog stays open)."""

from __future__ import annotations

from typing import Callable

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Button, Input, Label, Static

from mirage_tui.dialogs.frame import FramedDialog, button_row


class TextPromptScreen(FramedDialog[str | None]):
    """See the module docstring."""

    DEFAULT_CSS = """
    #prompt-dialog { width: 76; }
    #prompt-error { color: $text-error; height: auto; }
    """

    def __init__(self, title: str, value: str, hint: str, ok: str = "OK",
                 check: Callable[[str], str | None] | None = None) -> None:
        super().__init__()
        self.title_text, self.value, self.hint, self.ok = title, value, hint, ok
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-dialog", classes="dialog-frame"):
            yield Label(self.title_text, id="prompt-title", classes="dialog-title",
                        markup=False)
            yield Input(self.value, id="prompt-input")
            yield Static("", id="prompt-error", markup=False)
            yield Static(self.hint, id="prompt-hint", classes="dialog-hint", markup=False)
            yield button_row("prompt", self.ok, go="ok")

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

