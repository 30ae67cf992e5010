"""The import dialog: path (completed as typed), format, Import; the import runs in a worker
with a progress bar, and the dialog dismisses with the :class:`ImportResult`.

A failed import keeps the dialog open with the reason (and a notification), so the path can
be fixed; the store is untouched, since imports are all-or-nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.suggester import Suggester
from textual.widgets import Button, Input, Label, ProgressBar, Select, Static

from engine.datasets.formats import FORMATS
from engine.datasets.formats.base import DatasetFormatError
from engine.datasets.importing import ImportResult, import_path
from mirage_tui.screens.base import BaseModal

AUTO_FORMAT = "auto"


class PathSuggester(Suggester):
    """Completes the last component of a filesystem path (accept with →)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        typed = Path(value).expanduser()
        folder, prefix = (typed, "") if value.endswith("/") else (typed.parent, typed.name)
        try:
            names = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir()
                           if p.name.startswith(prefix) and not p.name.startswith("."))
        except OSError:
            return None
        return value + names[0][len(prefix):] if names else None


class ImportDatasetScreen(BaseModal[ImportResult | None]):
    """Path, format, Import: runs ``import_path`` in a worker with a progress bar."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    @dataclass
    class Progress(Message):
        done: int
        total: int | None
        what: str

    @dataclass
    class Finished(Message):
        result: ImportResult

    @dataclass
    class Failed(Message):
        error: str

    def __init__(self, path: str = "", format: str = AUTO_FORMAT) -> None:
        super().__init__()
        self._initial_path = path
        self._initial_format = format if format in FORMATS else AUTO_FORMAT
        self.running = False

    def compose(self) -> ComposeResult:
        with Vertical(id="import-dialog"):
            yield Label("Import a dataset", id="import-title")
            yield Input(self._initial_path, placeholder="path to a dataset file or folder",
                        id="import-path", suggester=PathSuggester())
            with Horizontal(id="import-options"):
                yield Label("format", id="import-format-label")
                yield Select([("auto-detect", AUTO_FORMAT)] + [(f, f) for f in FORMATS],
                             value=self._initial_format, allow_blank=False,
                             id="import-format", compact=True)
            yield ProgressBar(id="import-progress", show_eta=False)
            yield Static("→ accepts the suggested path · Enter imports · Esc cancels",
                         id="import-status", markup=False)
            with Horizontal(id="import-buttons"):
                yield Button("Import", variant="primary", id="import-go")
                yield Button("Cancel", id="import-cancel")

    def on_mount(self) -> None:
        self.query_one("#import-progress").display = False
        self.query_one("#import-path", Input).focus()

    @on(Input.Submitted, "#import-path")
    @on(Button.Pressed, "#import-go")
    def start_import(self) -> None:
        if self.running:
            return
        raw = self.query_one("#import-path", Input).value.strip()
        if not raw:
            self._show_status("Type the path of a dataset file or folder.", error=True)
            return
        store = self.store
        if store is None:
            self._show_status("The workspace is still opening; try again in a moment.",
                              error=True)
            return
        fmt = self.query_one("#import-format", Select).value
        path = Path(raw).expanduser()
        self._set_running(True)
        self._show_status(f"Importing {path}…")
        self.run_import(store, path, None if fmt == AUTO_FORMAT else str(fmt))

    @on(Button.Pressed, "#import-cancel")
    def action_cancel(self) -> None:
        if self.running:
            self.notify("An import cannot be interrupted; it finishes (or fails) on its own.",
                        severity="warning")
            return
        self.dismiss(None)

    @work(thread=True, exclusive=True, exit_on_error=False, group="import", name="import")
    def run_import(self, store, path: Path, fmt: str | None) -> None:
        last = 0.0

        def progress(done: int, total: int | None, what: str) -> None:
            nonlocal last
            now = time.monotonic()
            # a progress message per record would flood the screen; 10 a second is plenty
            if now - last >= 0.1 or (total is not None and done >= total):
                last = now
                self.post_message(self.Progress(done, total, what))

        try:
            result = import_path(store, path, format=fmt, progress=progress)
        except DatasetFormatError as exc:
            self.post_message(self.Failed(str(exc)))
        except Exception as exc:  # anything else still names the file and keeps the app up
            self.post_message(self.Failed(f"{path}: {type(exc).__name__}: {exc}"))
        else:
            self.post_message(self.Finished(result))
        finally:
            store.close()

    def on_import_dataset_screen_progress(self, message: Progress) -> None:
        bar = self.query_one("#import-progress", ProgressBar)
        bar.update(total=message.total, progress=message.done)
        self._show_status(f"Reading {message.what}…" if message.what != "done"
                          else "Writing to the workspace…")

    def on_import_dataset_screen_finished(self, message: Finished) -> None:
        self.running = False
        self.dismiss(message.result)

    def on_import_dataset_screen_failed(self, message: Failed) -> None:
        self._set_running(False)
        self._show_status(message.error, error=True)
        self.notify(message.error, title="Import failed", severity="error", markup=False,
                    timeout=15)
        self.query_one("#import-path", Input).focus()

    def _set_running(self, running: bool) -> None:
        self.running = running
        bar = self.query_one("#import-progress", ProgressBar)
        bar.display = running
        if running:
            bar.update(total=None, progress=0)
        for selector in ("#import-path", "#import-format", "#import-go"):
            self.query_one(selector).disabled = running

    def _show_status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#import-status", Static)
        status.update(text)
        status.set_class(error, "error")
