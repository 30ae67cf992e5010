"""The export dialog: where and in which format to export a run (CSV with a header .json, JSON
lines, or the HTML report: one self-contained page); dismisses with ``(path, format)``. The
leaderboard asks the same with its own formats (its HTML page). When a file the export would
write is there already, it asks first (:mod:`.overwrite`: replace, another name, cancel), so
that no export writes over a file unasked."""

from __future__ import annotations

from pathlib import Path
from weakref import WeakKeyDictionary

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static

from mirage_tui.dialogs.overwrite import ask_before_replacing
from mirage_tui.dialogs.frame import FramedDialog, button_row

RUN_FORMATS = (("CSV (+ header .json)", "csv"), ("JSON lines", "jsonl"),
               ("HTML report (one page)", "html"))
SUFFIXES = (".csv", ".jsonl", ".html")

_CHOSEN: WeakKeyDictionary = WeakKeyDictionary()
"""The format last exported in, per app (this session) and per dialog (each screen's export
dialog remembers its own): the next export dialog starts from it."""


class ExportRunScreen(FramedDialog[tuple[str, str] | None]):
    """Path and format for an export; dismisses with ``(path, format)``."""

    DEFAULT_CSS = """
    #export-dialog { width: 76; }
    #export-options { height: 1; margin-top: 1; }
    #export-format { width: 28; }
    """

    def __init__(self, run_name: str, folder: Path | None = None,
                 formats: tuple[tuple[str, str], ...] = RUN_FORMATS, stem: str | None = None,
                 title: str | None = None, hint: str | None = None) -> None:
        super().__init__()
        self.run_name = run_name
        self.folder = folder or Path.cwd()
        self.formats = formats
        self.stem = stem or run_name
        self.title_text = title or f"Export run {run_name}"
        self.hint = hint or (
            "CSV and JSON lines: one row per item with its prompt, response and every score; "
            "the run's header (config, versions, device) travels with it. HTML: the report "
            "with charts and an item browser in one file that opens offline. Enter exports, "
            "Esc cancels.")

    @property
    def remembered_key(self) -> str:
        """Which export dialog this is: its class and formats (the Runs', the Inspector's
        view, the Leaderboard's each remember their own format)."""
        return f"{type(self).__name__}:{','.join(v for _, v in self.formats)}"

    @property
    def first_format(self) -> str:
        """The format the dialog starts from: the one last exported in from this dialog in
        this session, else its first."""
        last = _CHOSEN.get(self.app, {}).get(self.remembered_key)
        return last if last in {v for _, v in self.formats} else self.formats[0][1]

    def remember(self, fmt: str) -> None:
        _CHOSEN.setdefault(self.app, {})[self.remembered_key] = fmt

    def compose(self) -> ComposeResult:
        first = self.first_format
        with Vertical(id="export-dialog", classes="dialog-frame"):
            yield Label(self.title_text, id="export-title", classes="dialog-title",
                        markup=False)
            yield Input(str(self.folder / f"{self.stem}.{first}"), id="export-path")
            with Horizontal(id="export-options"):
                yield Label("format ", markup=False)
                yield Select(list(self.formats), value=first, allow_blank=False,
                             id="export-format", compact=True)
            yield Static(self.hint, id="export-hint", classes="dialog-hint", markup=False)
            yield button_row("export", "Export")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    @on(Select.Changed, "#export-format")
    def _format_changed(self, event: Select.Changed) -> None:
        path = self.query_one("#export-path", Input)
        current = Path(path.value.strip() or f"{self.stem}.{self.formats[0][1]}")
        if current.suffix in SUFFIXES:
            path.value = str(current.with_suffix(f".{event.value}"))

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-go")
    def _go(self) -> None:
        from engine.results.export import export_files

        field = self.query_one("#export-path", Input)
        raw = field.value.strip()
        if not raw:
            self.notify("Type where to write the export.", severity="warning")
            return
        fmt = str(self.query_one("#export-format", Select).value)

        def answered(answer: str | None, suggestion: Path) -> None:
            if answer == "replace":
                self.remember(fmt)
                self.dismiss((raw, fmt))
            elif answer == "rename":            # the free name, to take or to edit
                field.value = str(suggestion)
                field.cursor_position = len(field.value)
                field.focus()
            elif answer == "cancel":
                self.dismiss(None)
            # Escape: back to this dialog as it was

        if not ask_before_replacing(self.app, Path(raw).expanduser(),
                                    lambda path: export_files(path, fmt), answered):
            self.remember(fmt)
            self.dismiss((raw, fmt))


