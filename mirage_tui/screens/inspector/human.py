"""Your own verdict in the Inspector: ``a`` (answer A better), ``b`` (answer B better) or ``e``
(a tie, "even") opens :class:`~mirage_tui.dialogs.human_verdict.HumanVerdictModal` on the pair
on screen, which names the two answers and the arena and lets you pick others; the verdict is
stored on exactly the pair the dialog names (``engine.arena.trust.human_verdicts``), beside the
judge's, never over it.

The pair on screen (``engine.arena.ratings.verdicts.VerdictChoices.pair_on_screen``): with a second
system beside the item (``s``), both systems in the setting whose panels are in view; with one,
the panel in view against its partner in the arena. The arena is the one the Leaderboard showed
when it opened the Inspector, else the run's newest. The three keys are in the footer while an
item with a judged battle is open (:data:`VERDICT_BINDINGS`); pressed on another open item, a
hidden binding of the same key opens the dialog too (it says that no arena judged the pair), and
with no item open it says why."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual import work
from textual.binding import Binding

from mirage_tui.dialogs.human_verdict import HumanVerdictModal, VerdictEntry, verdict_words
from mirage_tui.screens.hosts import ScreenHost
from mirage_tui.screens.inspector.detail import ItemDetail

VERDICT_BINDINGS = [
    Binding("a", "human_verdict('a')", "Mine: A"),
    Binding("e", "human_verdict('tie')", "Mine: tie"),
    Binding("b", "human_verdict('b')", "Mine: B"),
    # not in the footer when the item has no judged battle: the same keys still act, or say why
    Binding("a", "verdict_why('a')", "Mine: A", show=False),
    Binding("e", "verdict_why('tie')", "Mine: tie", show=False),
    Binding("b", "verdict_why('b')", "Mine: B", show=False),
]


class HumanVerdictKeysHost(ScreenHost, Protocol):
    """What :class:`HumanVerdictKeys` uses of its host beyond a screen's own (``ScreenHost``)."""

    run_name: str
    arena: str | None
    current: tuple[str, int] | None
    second: str | None

    @property
    def detail_shown(self) -> bool: ...

    def show_item(self, system: str, query: str | int) -> None: ...


if TYPE_CHECKING:
    _Host = HumanVerdictKeysHost
else:
    _Host = object


class HumanVerdictKeys(_Host):
    """Mixed into the InspectorScreen: the ``human_verdict`` action, its dialog and workers.
    What it uses of the screen: :class:`HumanVerdictKeysHost`."""

    shown_verdicts: list = []

    def shown_systems(self) -> list[str]:
        """The item's system, then the one beside it."""
        if self.current is None:
            return []
        first = self.current[0]
        return [first] + ([self.second] if self.second and self.second != first else [])

    def judged_here(self) -> bool:
        """A judge's battle on this query took part in a system shown."""
        systems = self.shown_systems()
        return any(v.involves(s) for v in self.shown_verdicts for s in systems)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "human_verdict":
            return self.current is not None and self.detail_shown and self.judged_here()
        return True

    def action_verdict_why(self, verdict: str) -> None:
        self.action_human_verdict(verdict)

    def action_human_verdict(self, verdict: str) -> None:
        if self.current is None or not self.detail_shown or self.store is None:
            self.notify("Open an item first (Enter on a row).", timeout=3)
            return
        # what is on screen now, before the worker: the view may scroll meanwhile
        setting = self.query_one(ItemDetail).setting_in_view()
        self.find_verdict_choices(self.store, self.current, self.shown_systems(), setting,
                                  verdict)

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-human",
          name="verdict choices")
    def find_verdict_choices(self, store, current: tuple[str, int], systems: list[str],
                             setting: str | None, verdict: str) -> None:
        from engine.arena.ratings.verdicts import verdict_choices
        from engine.runs.lookup import load_run

        with self.worker_errors("your verdict", store):
            choices = verdict_choices(store, load_run(store, self.run_name), current[1])
            self.app.call_from_thread(self._open_verdict_dialog, choices, current, systems,
                                      setting, verdict)

    def _open_verdict_dialog(self, choices, current: tuple[str, int], systems: list[str],
                             setting: str | None, verdict: str) -> None:
        if self.current != current:
            return                      # another item is shown now
        arena = choices.arena_or_newest(self.arena)
        pair = choices.pair_on_screen(systems, setting, arena)
        if pair is None:
            self.notify("The run has fewer than two answers to this query: nothing to compare.",
                        timeout=4)
            return

        def save(entry: VerdictEntry | None) -> None:
            if entry is not None and self.store is not None:
                self.save_human_verdict(self.store, entry, current)

        self.app.push_screen(HumanVerdictModal(choices, pair, arena, verdict), save)

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-human",
          name="save verdict")
    def save_human_verdict(self, store, entry: VerdictEntry, current: tuple[str, int]) -> None:
        from engine.arena.trust.human_verdicts import record_human_verdict
        from engine.runs.lookup import load_run

        with self.worker_errors("your verdict", store):
            name = record_human_verdict(store, load_run(store, self.run_name), current[1],
                                        entry.system_a, entry.system_b, entry.verdict,
                                        entry.note)
            self.app.call_from_thread(self._human_verdict_saved, name, entry, current)

    def _human_verdict_saved(self, dataset: str, entry: VerdictEntry,
                             current: tuple[str, int]) -> None:
        said = verdict_words(entry.verdict, entry.system_a, entry.system_b)
        self.notify(f"Stored: {said}. Your verdicts are labels dataset {dataset} (use it with "
                    f"`mirage-tui judge calibrate --labels '{dataset}'`).", timeout=5,
                    markup=False)
        if self.current == current:
            self.show_item(*current)
