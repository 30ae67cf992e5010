"""The Runs screen's keys that change a run or show its history: ``R`` renames the
highlighted run, ``D`` deletes it after a question (its cached generations stay unless asked;
a running run is refused) and ``L`` shows its log (``engine.runs.manage``).

Mixed into :class:`mirage_tui.screens.runs.RunsScreen`; what it uses of the screen is
:class:`RunManageKeysHost` (it sets the screen's ``_keep``: the run to highlight after the next
load)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol

from textual import work
from textual.message import Message

from mirage_tui.screens.hosts import ScreenHost

if TYPE_CHECKING:
    from engine.results.comparison import RunRow


class RunManageKeysHost(ScreenHost, Protocol):
    """What :class:`RunManageKeys` uses of its host beyond a screen's own (``ScreenHost``)."""

    runs: dict[str, RunRow]
    marked: str | None = None
    _keep: str | None = None
    Managed: Callable[..., Message]
    LogLoaded: Callable[..., Message]

    def need_run(self) -> str | None: ...

    def action_refresh(self) -> None: ...


if TYPE_CHECKING:
    _Host = RunManageKeysHost
else:
    _Host = object


class RunManageKeys(_Host):
    """Rename, delete, log of the highlighted run (module docstring)."""

    def action_rename(self) -> None:
        name = self.need_run()
        if name is None:
            return
        from mirage_tui.dialogs.text_prompt import TextPromptScreen

        def taken(new: str) -> str | None:
            return f"A run named {new} exists already." if new in self.runs and new != name \
                else None

        def chosen(new: str | None) -> None:
            store = self.store
            if new and new != name and store is not None:
                self.manage(store, "rename", name, new)

        self.app.push_screen(TextPromptScreen(
            f"Rename run {name}", name, "Enter renames, Esc cancels. Items, scores, arenas "
            "and the log stay with the run.", "Rename", check=taken), chosen)

    def action_delete(self) -> None:
        name = self.need_run()
        if name is None:
            return
        from mirage_tui.dialogs.choice import Choice, ChoiceModal

        def chosen(answer: str | None) -> None:
            store = self.store
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

        with self.worker_errors("the change", store):
            if what == "rename":
                new = rename_run(store, name, new or "")
                self.post_message(self.Managed(f"Renamed {name} to {new}.", name, new))
            else:
                gone = delete_run(store, name, purge_generations=what == "purge")
                cache = (f"; {gone.generations} cached generations no other run used were "
                         "dropped" if what == "purge" else "; its cached generations stay")
                self.post_message(self.Managed(f"Deleted {name} ({gone.items} items){cache}.",
                                               name))

    def on_runs_screen_managed(self, message: Message) -> None:
        if self.marked == message.old:
            self.marked = message.new
        self.app.notify(message.note, title="Runs", markup=False, timeout=6)
        self._keep = message.new
        self.action_refresh()

    def action_log(self) -> None:
        name = self.need_run()
        store = self.store
        if name is not None and store is not None:
            self.load_log(store, name)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-log", name="run log")
    def load_log(self, store, name: str) -> None:
        from engine.runs.manage import run_log

        with self.worker_errors("the log", store):
            self.post_message(self.LogLoaded(name, run_log(store, name)))

    def on_runs_screen_log_loaded(self, message: Message) -> None:
        from mirage_tui.dialogs.run_log import RunLogScreen

        self.app.push_screen(RunLogScreen(message.run, message.lines))
