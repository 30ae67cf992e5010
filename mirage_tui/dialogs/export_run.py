"""The export dialog: where and in which format to export a run (CSV with a header .json, or
JSON lines); dismisses with ``(path, format)``."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static

from mirage_tui.screens.base import BaseModal


class ExportRunScreen(BaseModal[tuple[str, str] | None]):
    """Path and format for an export; dismisses with ``(path, format)``."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    ExportRunScreen { align: center middle; }
    #export-dialog { width: 76; max-width: 100%; height: auto; padding: 0 1;
                     border: thick $accent; background: $surface; }
    #export-title { text-style: bold; margin-bottom: 1; }
    #export-options { height: 1; margin-top: 1; }
    #export-format { width: 16; }
    #export-hint { margin-top: 1; color: $text-muted; }
    #export-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    #export-buttons Button { margin-left: 1; }
    """

    def __init__(self, run_name: str, folder: Path | None = None) -> None:
        super().__init__()
        self.run_name = run_name
        self.folder = folder or Path.cwd()

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog"):
            yield Label(f"Export run {self.run_name}", id="export-title", markup=False)
            yield Input(str(self.folder / f"{self.run_name}.csv"), id="export-path")
            with Horizontal(id="export-options"):
                yield Label("format ", markup=False)
                yield Select([("CSV (+ header .json)", "csv"), ("JSON lines", "jsonl")],
                             value="csv", allow_blank=False, id="export-format", compact=True)
            yield Static("One row per item with its prompt, response and every score; the "
                         "run's header (config, versions, device) travels with it. Enter "
                         "exports, Esc cancels.", id="export-hint", markup=False)
            with Horizontal(id="export-buttons"):
                yield Button("Export", variant="primary", id="export-go")
                yield Button("Cancel", id="export-cancel")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    @on(Select.Changed, "#export-format")
    def _format_changed(self, event: Select.Changed) -> None:
        path = self.query_one("#export-path", Input)
        current = Path(path.value.strip() or f"{self.run_name}.csv")
        if current.suffix in (".csv", ".jsonl"):
            path.value = str(current.with_suffix(f".{event.value}"))

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-go")
    def _go(self) -> None:
        raw = self.query_one("#export-path", Input).value.strip()
        if not raw:
            self.notify("Type where to write the export.", severity="warning")
            return
        self.dismiss((raw, str(self.query_one("#export-format", Select).value)))

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

