"""New run's ``ctrl+o`` (or the Save TOML button): the form written as the run file
``mirage-tui run --config FILE`` takes (:func:`engine.runs.config.config_toml`), to a path
asked for; an existing file is never overwritten.

A feature widget of :class:`mirage_tui.screens.new_run.NewRunScreen` (:class:`SaveToml`),
which binds its key and hands it the form's configuration; its worker says how it went by
messages (:class:`TomlNotSaved`, :class:`TomlExists` when a file is in the way)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from engine.runs import RunConfig
from mirage_tui.screens.features import Failed


class TomlNotSaved(Failed):
    """The run file could not be written (``error``: the output file's one line)."""

    severity: ClassVar[str] = "error"

    @property
    def title(self) -> str:
        return "Not saved"

    def tell(self, app: App) -> None:
        app.notify(self.error, title=self.title, severity=self.severity, markup=False)


class TomlExists(TomlNotSaved):
    """A file is there already: it is not overwritten."""

    severity = "warning"


class SaveToml(Widget):
    """Save the form as a run file (module docstring). It draws nothing: the dialog and the
    notifications are what is seen of it."""

    KEYS: ClassVar[list[Binding]] = [Binding("ctrl+o", "save_toml", "Save TOML", priority=True)]
    """Its key; the screen binds it, so that it acts wherever the focus is."""

    DEFAULT_CSS = "SaveToml { display: none; }"

    @dataclass
    class Saved(Message):
        """The run file was written at ``path``."""
        path: Path

    def ask(self, config: RunConfig) -> None:
        """Ask where to save ``config``, then save it there."""
        from mirage_tui.dialogs.text_prompt import TextPromptScreen

        def chosen(path: str | None) -> None:
            if path:
                self.save_toml(config, Path(path).expanduser())

        self.app.push_screen(TextPromptScreen(
            "Save the run configuration as TOML", str(Path.cwd() / f"{config.name}.toml"),
            "The file `mirage-tui run --config FILE` takes (its flags still override it). "
            "Enter saves, Esc cancels; an existing file is not overwritten.", "Save"), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="new-run-save",
          name="save the run file")
    def save_toml(self, config: RunConfig, path: Path) -> None:
        from engine.output_files import OutputFileError, OutputFileExists, write_new_text
        from engine.runs.config import config_toml

        try:
            write_new_text(path, config_toml(config, "a run file saved from mirage-tui's New "
                                                     f"run; run it with: mirage-tui run --config "
                                                     f"{path}"))
        except OutputFileExists:
            self.post_message(TomlExists(f"{path} exists already: not overwritten."))
            return
        except OutputFileError as exc:
            self.post_message(TomlNotSaved(str(exc)))
            return
        self.post_message(self.Saved(path))

    @on(Saved)
    def _saved(self, message: Saved) -> None:
        self.notify(f"Saved to {message.path} · mirage-tui run --config {message.path}",
                    title="Run file", markup=False, timeout=10)

    @on(TomlNotSaved)
    def _not_saved(self, message: TomlNotSaved) -> None:
        message.tell(self.app)
