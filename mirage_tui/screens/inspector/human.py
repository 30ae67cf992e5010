"""Your own verdict in the Inspector (:class:`HumanVerdicts`): ``a`` (answer A better), ``b``
(answer B better) or ``e`` (a tie, "even") opens
:class:`~mirage_tui.dialogs.human_verdict.HumanVerdictModal` on the pair on screen, which names
the two answers and the arena and lets you pick others; the verdict is stored on exactly the
pair the dialog names (``engine.arena.trust.human_verdicts``), beside the judge's, never over
it.

The pair on screen (``engine.arena.ratings.verdicts.VerdictChoices.pair_on_screen``): with a
second system beside the item (``s``), both systems in the setting whose panels are in view;
with one, the panel in view against its partner in the arena. The arena is the one the
Leaderboard showed when it opened the Inspector, else the run's newest. The three keys are in
the footer while an item with a judged battle is open (:data:`VERDICT_BINDINGS`); pressed on
another open item, a hidden binding of the same key opens the dialog too (it says that no arena
judged the pair), and with no item open it says why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from mirage_tui.dialogs.human_verdict import HumanVerdictModal, VerdictEntry, verdict_words
from mirage_tui.screens.features import failures_as, store_of
from mirage_tui.screens.inspector.messages import YourVerdictFailed

if TYPE_CHECKING:
    from mirage_tui.screens.inspector.detail import ItemDetail
    from mirage_tui.screens.inspector.handle import InspectedRun

VERDICT_BINDINGS = [
    Binding("a", "human_verdict('a')", "Mine: A"),
    Binding("e", "human_verdict('tie')", "Mine: tie"),
    Binding("b", "human_verdict('b')", "Mine: B"),
    # not in the footer when the item has no judged battle: the same keys still act, or say why
    Binding("a", "verdict_why('a')", "Mine: A", show=False),
    Binding("e", "verdict_why('tie')", "Mine: tie", show=False),
    Binding("b", "verdict_why('b')", "Mine: B", show=False),
]


class HumanVerdicts(Widget):
    """Your verdict on the pair of answers on screen (module docstring), for the run it holds
    and beside ``arena`` (None: the run's newest). It draws nothing: the dialog and the
    notifications are what is seen of it."""

    KEYS: ClassVar[list[Binding]] = VERDICT_BINDINGS
    """Its keys; the screen binds them, so that they act wherever the focus is."""

    DEFAULT_CSS = "HumanVerdicts { display: none; }"

    @dataclass
    class Saved(Message):
        """A verdict on the item ``current`` (system, query rowid) is stored."""
        current: tuple[str, int]

    def __init__(self, arena: str | None) -> None:
        super().__init__()
        self.arena = arena
        self.run: InspectedRun | None = None

    def ask(self, verdict: str, detail: ItemDetail) -> None:
        """The verdict dialog on the pair ``detail`` shows, ``verdict`` picked."""
        store = store_of(self)
        if detail.current is None or not detail.display or store is None or self.run is None:
            self.notify("Open an item first (Enter on a row).", timeout=3)
            return
        # what is on screen now, before the worker: the view may scroll meanwhile
        self.find_choices(store, self.run, detail, detail.current, detail.shown_systems(),
                          detail.setting_in_view(), verdict)

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-human",
          name="verdict choices")
    def find_choices(self, store, run: InspectedRun, detail: ItemDetail,
                     current: tuple[str, int], systems: list[str], setting: str | None,
                     verdict: str) -> None:
        from engine.arena.ratings.verdicts import verdict_choices

        with failures_as(self, YourVerdictFailed, store):
            choices = verdict_choices(store, run.info, current[1])
            self.app.call_from_thread(self._open_dialog, choices, detail, current, systems,
                                      setting, verdict)

    def _open_dialog(self, choices, detail: ItemDetail, current: tuple[str, int],
                     systems: list[str], setting: str | None, verdict: str) -> None:
        if detail.current != current:
            return                      # another item is shown now
        arena = choices.arena_or_newest(self.arena)
        pair = choices.pair_on_screen(systems, setting, arena)
        if pair is None:
            self.notify("The run has fewer than two answers to this query: nothing to compare.",
                        timeout=4)
            return

        def save(entry: VerdictEntry | None) -> None:
            store = store_of(self)
            if entry is not None and store is not None and self.run is not None:
                self.save(store, self.run, entry, current)

        self.app.push_screen(HumanVerdictModal(choices, pair, arena, verdict), save)

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-human",
          name="save verdict")
    def save(self, store, run: InspectedRun, entry: VerdictEntry,
             current: tuple[str, int]) -> None:
        from engine.arena.trust.human_verdicts import record_human_verdict

        with failures_as(self, YourVerdictFailed, store):
            name = record_human_verdict(store, run.info, current[1], entry.system_a,
                                        entry.system_b, entry.verdict, entry.note)
            self.app.call_from_thread(self._saved, name, entry, current)

    def _saved(self, dataset: str, entry: VerdictEntry, current: tuple[str, int]) -> None:
        said = verdict_words(entry.verdict, entry.system_a, entry.system_b)
        self.notify(f"Stored: {said}. Your verdicts are labels dataset {dataset} (use it with "
                    f"`mirage-tui judge calibrate --labels '{dataset}'`).", timeout=5,
                    markup=False)
        self.post_message(self.Saved(current))

    @on(YourVerdictFailed)
    def _failed(self, message: YourVerdictFailed) -> None:
        message.tell(self.app)
