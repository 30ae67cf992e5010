"""The Inspector's detail side: one item in full (Enter on a row), a second system beside it
(``s``), the next and previous item (``]`` ``[``), the jumps inside it (``o``: the oracle
chunk, ``t``: the prompts) and ``r``, a reasoning model's thinking unfolded under its answer.
A part of :class:`~.screen.InspectorScreen` (a mixin; what it uses
of the screen: :class:`ItemViewHost`).

The full item is loaded on demand (``engine.results.inspector.item_detail``) into
:class:`~.detail.ItemDetail`; when the run has arena battles the judge's verdicts on this
query come with it, with their probabilities."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual import work

from mirage_tui.dialogs.pick_system import PickSystemScreen
from mirage_tui.screens.base import WorkerFailed
from mirage_tui.screens.hosts import ScreenHost
from mirage_tui.screens.inspector.detail import ItemDetail
from mirage_tui.screens.inspector.messages import DetailLoaded

if TYPE_CHECKING:
    from engine.arena.ratings.verdicts import Verdict
    from mirage_tui.screens.inspector.filters import Filters


class ItemViewHost(ScreenHost, Protocol):
    """What :class:`ItemView` uses of its host beyond a screen's own (``ScreenHost``)."""

    run_name: str
    filters: Filters
    facets: dict
    rows: list
    current: tuple[str, int] | None = None
    second: str | None = None
    detail_generation: int = 0

    @property
    def shown_verdicts(self) -> list[Verdict]: ...

    @shown_verdicts.setter
    def shown_verdicts(self, verdicts: list[Verdict]) -> None: ...


if TYPE_CHECKING:
    _Host = ItemViewHost
else:
    _Host = object


class ItemView(_Host):
    """One item in full, side by side, stepping through the list (module docstring)."""

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-detail",
          name="load item")
    def load_detail(self, store, systems: list[str], query: str | int, generation: int) -> None:
        from engine.results.inspector import item_detail
        from engine.runs.lookup import load_run

        with self.worker_errors("the item", store):
            run = load_run(store, self.run_name)
            details = [item_detail(store, run, s, query) for s in systems]
            verdicts, human = [], {}
            try:
                from engine.arena.trust.human_verdicts import human_verdicts_for
                from engine.arena.ratings.verdicts import verdicts_for

                verdicts = verdicts_for(store, run, details[0].query_rowid)
                human = human_verdicts_for(store, run, details[0].query_rowid)
            except Exception as exc:  # no arena tables or a broken row: the item still shows
                self.post_message(WorkerFailed("judge verdicts",
                                               f"{type(exc).__name__}: {exc}"))
            self.post_message(DetailLoaded(generation, details, verdicts, human))

    @property
    def detail_shown(self) -> bool:
        return self.query_one("#insp-detail").display

    def show_view(self, view: str) -> None:
        # the list and the detail share the space below the filters; one shows at a time
        self.query_one("#insp-items").display = view == "insp-items"
        self.query_one("#insp-detail").display = view == "insp-detail"
        self.refresh_bindings()         # the verdict keys: only on an open, judged item

    def show_item(self, system: str, query: str | int) -> None:
        store = self.store
        if store is None:
            return
        self.detail_generation += 1
        systems = [system] + ([self.second] if self.second and self.second != system else [])
        self.query_one(ItemDetail).show_loading()
        self.show_view("insp-detail")
        self.load_detail(store, systems, query, self.detail_generation)

    async def on_detail_loaded(self, message: DetailLoaded) -> None:
        if message.generation != self.detail_generation:
            return
        first = message.details[0]
        self.current = (first.system, first.query_rowid)
        self.shown_verdicts = message.verdicts
        self.refresh_bindings()
        await self.query_one(ItemDetail).show_items(message.details, message.verdicts,
                                                    message.human)

    def action_second_system(self) -> None:
        if self.second is not None:
            self.second = None
            self._refresh_detail()
            return
        shown = self.current[0] if self.current else self.filters.system
        others = [s for s in self.facets.get("systems", []) if s != shown]
        if not others:
            self.notify("This run has no other system to compare with.", timeout=3)
            return
        if len(others) == 1:
            self._set_second(others[0])
            return
        self.app.push_screen(PickSystemScreen(others, f"Show beside {shown or 'the item'}:"),
                             self._set_second)

    def _set_second(self, system: str | None) -> None:
        if system is None:
            return
        self.second = system
        self._refresh_detail()

    def _refresh_detail(self) -> None:
        if self.current is not None and self.detail_shown:
            self.show_item(*self.current)

    def _step(self, delta: int) -> None:
        if self.current is None or not self.rows:
            return
        keys = [(r.system, r.query_rowid) for r in self.rows]
        unique = list(dict.fromkeys(keys))
        if self.current not in unique:
            return
        index = unique.index(self.current) + delta
        if not 0 <= index < len(unique):
            self.notify("No more items loaded in that direction.", timeout=2)
            return
        self.show_item(*unique[index])

    def action_next_item(self) -> None:
        self._step(+1)

    def action_previous_item(self) -> None:
        self._step(-1)

    def action_jump_to_oracle(self) -> None:
        if self.detail_shown:
            self.query_one(ItemDetail).jump_to_oracle()

    def action_jump_to_settings(self) -> None:
        if self.detail_shown:
            self.query_one(ItemDetail).jump_to_settings()

    def action_toggle_verdicts(self) -> None:
        if not self.detail_shown:
            self.notify("Open an item (Enter) to see the judge's verdicts on it.", timeout=3)
        elif not self.query_one(ItemDetail).toggle_verdicts():
            self.notify("No arena judged a pair of the answers shown on this query.", timeout=4)

    def action_toggle_reasoning(self) -> None:
        if not self.detail_shown:
            self.notify("Open an item (Enter) to see its reasoning.", timeout=3)
        elif not self.query_one(ItemDetail).toggle_reasoning():
            self.notify("No answer shown has reasoning: the model did not think, or the "
                        "server did not return its thinking.", timeout=4)
