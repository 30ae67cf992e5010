"""Your own verdict on a judged battle: what was chosen, and an optional note.

Enter saves (the note may be empty), Escape cancels (nothing is stored)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from mirage_tui.screens.base import BaseModal
from mirage_tui.widgets.safe_text import safe_text


class HumanVerdictModal(BaseModal[str | None]):
    """Dismisses with the note ('' for none), or None when cancelled."""

    DEFAULT_CSS = """
    HumanVerdictModal { align: center middle; }
    HumanVerdictModal > #hv-dialog { width: 80; max-width: 100%; height: auto; padding: 0 1;
        border: thick $accent; background: $surface; }
    HumanVerdictModal #hv-title { text-style: bold; margin-bottom: 1; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, summary: str) -> None:
        super().__init__()
        self.summary = summary

    def compose(self) -> ComposeResult:
        with Vertical(id="hv-dialog"):
            yield Static("Your verdict", id="hv-title", markup=False)
            yield Static(safe_text(self.summary), markup=False)
            yield Input(placeholder="note (optional); Enter saves, Escape cancels",
                        id="hv-note")

    @on(Input.Submitted, "#hv-note")
    def _save(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
