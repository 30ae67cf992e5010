"""The import dialog: path (completed as typed), format, Import; the import runs as a job
(:class:`~mirage_tui.jobs.JobController`) with a progress bar, and the dialog dismisses with
the :class:`ImportResult`.

Escape (or Cancel) while it runs cancels the import at the parser's next step or before the
write: nothing is stored and the dialog stays open saying so. A failed import keeps the dialog
open with the reason (and a notification), so the path can be fixed; the store is untouched,
since imports are all-or-nothing.
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.suggester import Suggester
from textual.widgets import Button, Input, Label, ProgressBar, Select, Static

from engine.datasets.formats import FORMATS
from engine.datasets.formats.base import DatasetFormatError
from engine.datasets.importing import NOTHING_STORED, ImportResult, import_path
from mirage_tui.jobs import MIN_INTERVAL, JobController
from mirage_tui.dialogs.frame import FramedDialog, button_row

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


class ImportDatasetScreen(FramedDialog[ImportResult | None]):
    """Path, format, Import: runs ``import_path`` as a job with a progress bar; Escape cancels
    it while it runs, else closes the dialog."""

    def __init__(self, path: str = "", format: str = AUTO_FORMAT) -> None:
        super().__init__()
        self._initial_path = path
        self._initial_format = format if format in FORMATS else AUTO_FORMAT
        self.importing = JobController(self, group="import", describe=str)

    @property
    def running(self) -> bool:
        return self.importing.running

    def compose(self) -> ComposeResult:
        with Vertical(id="import-dialog", classes="dialog-frame"):
            yield Label("Import a dataset", id="import-title", classes="dialog-title")
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
            yield button_row("import", "Import")

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
        if self.store is None:
            self._show_status("The workspace is still opening; try again in a moment.",
                              error=True)
            return
        fmt = self.query_one("#import-format", Select).value
        path = Path(raw).expanduser()
        chosen = None if fmt == AUTO_FORMAT else str(fmt)

        def work(store, progress, cancel) -> ImportResult | None:
            try:
                return import_path(store, path, format=chosen, progress=progress,
                                   cancel=cancel, min_interval=MIN_INTERVAL)
            except DatasetFormatError:
                raise
            except Exception as exc:  # anything else still names the file
                raise RuntimeError(f"{path}: {type(exc).__name__}: {exc}") from exc

        if self.importing.launch(str(path), work):
            self._set_running(True)
            self._show_status(f"Importing {path}… · Esc cancels")

    def action_cancel(self) -> None:
        if self.running:
            if self.importing.cancel():
                self._show_status("Cancelling: the import stops at its next step; "
                                  "nothing is stored…")
            return
        self.dismiss(None)

    @on(JobController.Progress)
    def _import_progress(self, message: JobController.Progress) -> None:
        message.stop()
        self.importing.progress_handled()
        event = self.importing.latest
        if event is None or self.importing.cancelling or not self.running:
            return
        bar = self.query_one("#import-progress", ProgressBar)
        bar.update(total=event.total, progress=event.done)
        what = event.working_on or ""
        self._show_status(f"Reading {what}… · Esc cancels" if what != "done"
                          else "Writing to the workspace…")

    @on(JobController.Finished)
    def _import_finished(self, message: JobController.Finished) -> None:
        message.stop()
        if message.summary is None:         # cancelled: nothing was stored
            self._set_running(False)
            self._show_status(f"Import {NOTHING_STORED}.")
            self.query_one("#import-path", Input).focus()
            return
        self.dismiss(message.summary)

    @on(JobController.Failed)
    def _import_failed(self, message: JobController.Failed) -> None:
        message.stop()
        self._set_running(False)
        self._show_status(message.error, error=True)
        self.notify(message.error, title="Import failed", severity="error", markup=False,
                    timeout=15)
        self.query_one("#import-path", Input).focus()

    def _set_running(self, running: bool) -> None:
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
