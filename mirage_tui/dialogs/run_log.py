"""A run's log (:mod:`engine.runs.log`): when each session started and ended, model loads,
retries and item errors, one line each with its UTC time; Escape closes it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Label, Static

from mirage_tui.screens.base import BaseModal

KIND_STYLES = {"error": "bold red", "retry": "yellow", "load": "cyan", "session": "green",
               "context": "yellow",
               "end": "bold", "rename": "magenta", "host": "bold red"}


def log_text(lines) -> Text:
    """The log's lines as text: time, kind (coloured), message (never markup)."""
    text = Text()
    for line in lines:
        text.append(f"{line.at}  ")
        text.append(f"{line.kind:<7}", style=KIND_STYLES.get(line.kind, ""))
        text.append(f"  {line.message}\n")
    if not lines:
        text.append("No log yet: runs from before the log was kept have none.")
    return text


class RunLogScreen(BaseModal[None]):
    """See the module docstring."""

    BINDINGS = [Binding("escape", "close", "Close")]
    DEFAULT_CSS = """
    RunLogScreen { align: center middle; }
    #log-dialog { width: 90%; height: 80%; padding: 0 1; border: thick $accent;
                  background: $surface; }
    #log-title { text-style: bold; margin-bottom: 1; }
    #log-pane { height: 1fr; }
    #log-hint { color: $text-muted; }
    """

    def __init__(self, run_name: str, lines) -> None:
        super().__init__()
        self.run_name, self.lines = run_name, list(lines)

    def compose(self) -> ComposeResult:
        with Vertical(id="log-dialog"):
            yield Label(f"Log of run {self.run_name} ({len(self.lines)} lines, times UTC)",
                        id="log-title", markup=False)
            with VerticalScroll(id="log-pane"):
                yield Static(log_text(self.lines), id="log-text", markup=False)
            yield Static("Esc closes · the same in a terminal: mirage-tui runs log "
                         f"{self.run_name}", id="log-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#log-pane", VerticalScroll).scroll_end(animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
