"""New run's ``ctrl+o`` (or the Save TOML button): the form written as the run file
``mirage-tui run --config FILE`` takes (:func:`engine.runs.config.config_toml`), to a path
asked for; an existing file is never overwritten.

Mixed into :class:`mirage_tui.screens.new_run.NewRunScreen` (what it uses of the screen:
:class:`SaveTomlKeysHost`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from textual import work
from textual.widgets import Button

from engine.runs import RunConfig
from mirage_tui.screens.hosts import ScreenHost


class SaveTomlKeysHost(ScreenHost, Protocol):
    """What :class:`SaveTomlKeys` uses of its host beyond a screen's own (``ScreenHost``)."""

    def config_or_why(self, what: str) -> RunConfig | None: ...


if TYPE_CHECKING:
    _Host = SaveTomlKeysHost
else:
    _Host = object


class SaveTomlKeys(_Host):
    """Save the form as a run file (module docstring)."""

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "run-save-toml":
            self.action_save_toml()

    def action_save_toml(self) -> None:
        config = self.config_or_why("Cannot save")
        if config is None:
            return
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
    def save_toml(self, config: RunConfig, path) -> None:
        from engine.output_files import OutputFileError, OutputFileExists, write_new_text
        from engine.runs.config import config_toml

        try:
            write_new_text(path, config_toml(config, "a run file saved from mirage-tui's New "
                                                     f"run; run it with: mirage-tui run --config "
                                                     f"{path}"))
        except OutputFileExists:
            self.app.call_from_thread(self.notify, f"{path} exists already: not overwritten.",
                                      title="Not saved", severity="warning", markup=False)
            return
        except OutputFileError as exc:
            self.app.call_from_thread(self.notify, str(exc), title="Not saved",
                                      severity="error", markup=False)
            return
        self.app.call_from_thread(self.notify, f"Saved to {path} · mirage-tui run --config "
                                  f"{path}", title="Run file", markup=False, timeout=10)
