"""A list to pick one from, in sight: the inspector's "side by side" dialog (the run's other
systems; Enter picks one to show beside the first) and the Leaderboard's arenas and runs.
Dismisses with the label picked, None on Escape."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList

from mirage_tui.screens.base import BaseModal


class PickSystemScreen(BaseModal[str | None]):
    """A list of the run's other systems; Enter picks one for the second column."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    PickSystemScreen { align: center middle; }
    #pick-dialog { width: 70; max-width: 100%; height: auto; max-height: 80%;
                   border: thick $accent; background: $surface; padding: 0 1; }
    #pick-systems { height: auto; max-height: 16; }
    """

    def __init__(self, systems: list[str], title: str, *, highlighted: int = 0) -> None:
        super().__init__()
        self.systems = systems
        self.title_text = title
        self.highlighted = highlighted

    def compose(self) -> ComposeResult:
        with Vertical(id="pick-dialog"):
            yield Label(self.title_text, markup=False)
            yield OptionList(*[Text(s) for s in self.systems], id="pick-systems")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = min(self.highlighted, len(self.systems) - 1)
        options.focus()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.systems[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
