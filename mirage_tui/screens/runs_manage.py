"""The Runs screen's keys that change a run or show its history (:class:`RunManage`): ``R``
renames the highlighted run, ``D`` deletes it after a question (its cached generations stay
unless asked; a running run is refused) and ``L`` shows its log (``engine.runs.manage``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Collection

from textual import on, work
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from mirage_tui.screens.features import failures_as, store_of
from mirage_tui.screens.runs_messages import ChangeFailed, LogFailed


class RunManage(Widget):
    """Rename, delete, log of a run (module docstring). It draws nothing: the dialogs and the
    notifications are what is seen of it; :class:`Managed` tells the screen a run changed."""

    KEYS: ClassVar[list[Binding]] = [Binding("R", "rename", "Rename", show=False),
                                     Binding("D", "delete", "Delete", show=False),
                                     Binding("L", "log", "Log", show=False)]
    """Its keys; the screen binds them, so that they act wherever the focus is."""

    DEFAULT_CSS = "RunManage { display: none; }"

    @dataclass
    class Managed(Message):
        """Run ``old`` was renamed to ``new`` or deleted (``new`` None); ``note`` says so."""
        note: str
        old: str
        new: str | None = None

    @dataclass
    class LogLoaded(Message):
        run: str
        lines: list

    def rename(self, name: str, taken_names: Collection[str]) -> None:
        """Ask for ``name``'s new name (none of ``taken_names``), then rename it."""
        from mirage_tui.dialogs.text_prompt import TextPromptScreen

        def taken(new: str) -> str | None:
            return f"A run named {new} exists already." if new in taken_names and new != name \
                else None

        def chosen(new: str | None) -> None:
            store = store_of(self)
            if new and new != name and store is not None:
                self.manage(store, "rename", name, new)

        self.app.push_screen(TextPromptScreen(
            f"Rename run {name}", name, "Enter renames, Esc cancels. Items, scores, arenas "
            "and the log stay with the run.", "Rename", check=taken), chosen)

    def delete(self, name: str) -> None:
        """Ask whether to delete ``name`` (and purge its generations), then do so."""
        from mirage_tui.dialogs.choice import Choice, ChoiceModal

        def chosen(answer: str | None) -> None:
            store = store_of(self)
            if answer in ("keep", "purge") and store is not None:
                self.manage(store, answer, name)

        self.app.push_screen(ChoiceModal(
            f"Delete run {name}?",
            "Its items, arenas and log go. Its generations stay in the shared cache (another "
            "run, or the same configuration run again, finds them) unless you also purge the "
            "ones no other run uses.",
            [Choice("keep", "Delete", "d", "error"),
             Choice("purge", "Delete + purge generations", "p", "error"),
             Choice("cancel", "Cancel", "c", "primary")], id="delete-run-modal"), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-manage",
          name="rename or delete a run")
    def manage(self, store, what: str, name: str, new: str | None = None) -> None:
        from engine.runs.manage import delete_run, rename_run

        with failures_as(self, ChangeFailed, store):
            if what == "rename":
                new = rename_run(store, name, new or "")
                self.post_message(self.Managed(f"Renamed {name} to {new}.", name, new))
            else:
                gone = delete_run(store, name, purge_generations=what == "purge")
                cache = (f"; {gone.generations} cached generations no other run used were "
                         "dropped" if what == "purge" else "; its cached generations stay")
                self.post_message(self.Managed(f"Deleted {name} ({gone.items} items){cache}.",
                                               name))

    def log(self, name: str) -> None:
        """Show ``name``'s log."""
        store = store_of(self)
        if store is not None:
            self.load_log(store, name)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-log", name="run log")
    def load_log(self, store, name: str) -> None:
        from engine.runs.manage import run_log

        with failures_as(self, LogFailed, store):
            self.post_message(self.LogLoaded(name, run_log(store, name)))

    @on(LogLoaded)
    def _log_loaded(self, message: LogLoaded) -> None:
        from mirage_tui.dialogs.run_log import RunLogScreen

        self.app.push_screen(RunLogScreen(message.run, message.lines))

    @on(ChangeFailed)
    @on(LogFailed)
    def _failed(self, message: ChangeFailed | LogFailed) -> None:
        message.tell(self.app)
