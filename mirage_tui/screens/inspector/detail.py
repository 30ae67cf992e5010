"""The inspector's item detail (Enter on a row): the query, its gold answers, the adaptability
pattern, the judge's verdicts, the pool with the oracle marked ★ and every retriever's rank,
and per setting the exact prompt sent, the response (a reasoning model's thinking folded under
it, with its token count: ``r`` unfolds it) and every score, one column per system shown (the
words: :mod:`.item_text`).

:class:`ItemDetail` is the feature: it loads one query's items on demand
(``engine.results.inspector.item_detail``) with the judge's verdicts on the query and their
probabilities, shows a second system beside them (``s``), steps to the next and previous item
of the list (``]`` ``[``), jumps inside them (``o``: the oracle chunk, ``t``: the prompts) and
unfolds the reasoning (``r``) and the verdicts (``j``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Collapsible, Static

from engine.text_safety import visible
from mirage_tui.dialogs.pick_system import PickSystemScreen
from mirage_tui.screens.features import failures_as, store_of
from mirage_tui.screens.inspector.item_text import (pool_heading, setting_text, verdict_lines,
                                                    verdicts_title)
from mirage_tui.screens.inspector.messages import DetailLoaded, ItemFailed, VerdictsFailed
from mirage_tui.widgets.safe_text import safe_line, safe_text

if TYPE_CHECKING:
    from engine.arena.ratings.verdicts import ItemVerdict
    from mirage_tui.screens.inspector.handle import InspectedRun

ORACLE_MARK = "★ oracle"


def pool_card(chunk, shown_settings: set[str]) -> Static:
    """One chunk of the item's pool: ★ for the oracle, support, ranks, where it was given."""
    kind = "oracle" if chunk.is_oracle else ("support" if chunk.support else "distractor")
    badge = Text()
    badge.append(f"{ORACLE_MARK} · supports" if chunk.is_oracle else
                 "✓ supports" if chunk.support else "· distractor",
                 style="bold" if chunk.is_oracle else "")
    if not chunk.in_pool:
        badge.append(" · retrieved from outside the pool")
    if chunk.ranks:
        badge.append(" · ranks " + ", ".join(f"{label.rsplit('#', 1)[0]} #{rank}"
                                             for label, rank in sorted(chunk.ranks.items())))
    given = [s for s in chunk.in_context_of if s in shown_settings] or chunk.in_context_of
    if given:
        badge.append(" · given in " + ", ".join(dict.fromkeys(given)))
    body = Text.assemble(badge, "\n", safe_text(chunk.text))
    card = Static(body, classes=f"pool-chunk {kind}", markup=False)
    position = "—" if chunk.position is None else str(chunk.position + 1)
    card.border_title = safe_line(f"#{position} · {chunk.title or 'untitled'}")
    card.border_subtitle = safe_line(chunk.chunk_id)
    return card


class SettingPanel(Static):
    """One system's item in one setting (:func:`setting_text`), its reasoning folded until
    :meth:`unfold`."""

    def __init__(self, system: str, row, unfolded: bool = False) -> None:
        super().__init__(setting_text(row, unfolded), classes="setting-panel", markup=False)
        self.row = row
        self.border_title = Text(f"{system} · {row.setting if row else '—'}")

    @property
    def has_reasoning(self) -> bool:
        return bool(self.row is not None and self.row.reasoning)

    def unfold(self, unfolded: bool) -> None:
        self.update(setting_text(self.row, unfolded))


def setting_panel(system: str, row, unfolded: bool = False) -> SettingPanel:
    """One system's item in one setting: the prompt as sent, the response, every score."""
    return SettingPanel(system, row, unfolded)


class SettingRow(Horizontal):
    """One setting's panels, one per system shown."""

    def __init__(self, setting: str, *panels: Static) -> None:
        super().__init__(*panels, classes="setting-row")
        self.setting = setting


class ItemDetail(VerticalScroll):
    """One query's items (``engine.results.inspector.item_detail``, one per system) in full,
    loaded for the run it holds (module docstring)."""

    KEYS: ClassVar[list[Binding]] = [
        Binding("s", "second_system", "Side by side"),
        Binding("right_square_bracket", "next_item", "Next", show=False),  # n: New run
        Binding("left_square_bracket", "previous_item", "Previous", show=False),
        Binding("o", "jump_to_oracle", "Oracle", show=False),
        Binding("t", "jump_to_settings", "Prompts", show=False),
        Binding("r", "toggle_reasoning", "Reasoning", show=False),
        Binding("j", "toggle_verdicts", "Judge pairs", show=False),
    ]
    """Its keys; the screen binds them, so that they act wherever the focus is."""

    DEFAULT_CSS = """
    ItemDetail #d-query { margin-top: 1; padding: 0 1; background: $boost; text-style: bold; }
    ItemDetail #d-meta { color: $text-muted; padding: 0 1; }
    ItemDetail .d-block { padding: 0 1; margin-top: 1; }
    ItemDetail .d-heading { margin-top: 1; padding: 0 1; text-style: bold;
        color: $text-primary; }
    ItemDetail #d-pool, ItemDetail #d-settings { height: auto; }
    ItemDetail .pool-chunk { height: auto; padding: 0 1; border: round $primary 40%; }
    ItemDetail .pool-chunk.oracle { border: round $accent; }
    ItemDetail .setting-row { height: auto; }
    ItemDetail .setting-panel { width: 1fr; height: auto; padding: 0 1;
        border: round $secondary 60%; }
    """

    reasoning_unfolded = False
    """Whether the reasoning under each answer is shown whole (``r``), for every item opened
    until it is folded again."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run: InspectedRun | None = None
        self.systems: list[str] = []                    # the run's: the ones to put beside
        self.current: tuple[str, int] | None = None     # (system, query_rowid) shown
        self.second: str | None = None
        self.verdicts: list[ItemVerdict] = []           # the judge's, on the query shown
        self.generation = 0

    def compose(self) -> ComposeResult:
        # the answers first, right under the question; the judge's pairs (66 on a query of a
        # 12-contestant arena, pages long) folded under one counted line
        yield Static("", id="d-query", markup=False)
        yield Static("", id="d-meta", markup=False)
        yield Static("", id="d-answers", classes="d-block", markup=False)
        yield Vertical(id="d-settings")
        yield Static("", id="d-adapt", classes="d-block", markup=False)
        yield Collapsible(Static("", id="d-verdicts", markup=False), id="d-verdicts-fold",
                          title="Judge verdicts", collapsed=True)
        yield Static("", id="d-pool-heading", classes="d-heading", markup=False)
        yield Vertical(id="d-pool")

    def hold(self, run: InspectedRun, systems: list[str]) -> None:
        """The run whose items this shows, and its systems."""
        self.run, self.systems = run, list(systems)

    # ------------------------------------------------------------------ loading

    def open(self, system: str, query: str | int) -> bool:
        """Load ``system``'s item of ``query`` (and the second system's beside it); False when
        there is no store or no run yet."""
        store = store_of(self)
        if store is None or self.run is None:
            return False
        self.generation += 1
        systems = [system] + ([self.second] if self.second and self.second != system else [])
        self.show_loading()
        self.load(store, self.run, systems, query, self.generation)
        return True

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-detail",
          name="load item")
    def load(self, store, run: InspectedRun, systems: list[str], query: str | int,
             generation: int) -> None:
        from engine.results.inspector import item_detail

        with failures_as(self, ItemFailed, store):
            details = [item_detail(store, run.info, s, query) for s in systems]
            verdicts, human = [], {}
            try:
                from engine.arena.trust.human_verdicts import human_verdicts_for
                from engine.arena.ratings.verdicts import verdicts_for

                verdicts = verdicts_for(store, run.info, details[0].query_rowid)
                human = human_verdicts_for(store, run.info, details[0].query_rowid)
            except Exception as exc:  # no arena tables or a broken row: the item still shows
                self.post_message(VerdictsFailed(f"{type(exc).__name__}: {exc}"))
            self.post_message(DetailLoaded(generation, details, verdicts, human))

    @on(DetailLoaded)
    async def _loaded(self, message: DetailLoaded) -> None:
        if message.generation != self.generation:
            return
        first = message.details[0]
        self.current = (first.system, first.query_rowid)
        self.verdicts = message.verdicts
        self.refresh_bindings()         # the verdict keys: only on an open, judged item
        await self.show_items(message.details, message.verdicts, message.human)

    @on(ItemFailed)
    def _failed(self, message: ItemFailed) -> None:
        self.show_error(message.error)
        message.tell(self.app)

    @on(VerdictsFailed)
    def _verdicts_failed(self, message: VerdictsFailed) -> None:
        message.tell(self.app)

    # ------------------------------------------------------------------ keys

    def shown_systems(self) -> list[str]:
        """The item's system, then the one beside it."""
        if self.current is None:
            return []
        first = self.current[0]
        return [first] + ([self.second] if self.second and self.second != first else [])

    def judged_here(self) -> bool:
        """An item is open and a judge's battle on its query took part in a system shown."""
        systems = self.shown_systems()
        return self.display and any(v.involves(s) for v in self.verdicts for s in systems)

    def pick_second(self, filtered: str | None) -> None:
        """``s``: a second system beside the item (asked for among several), or none again;
        ``filtered``: the system the list is filtered to, named while no item is open."""
        if self.second is not None:
            self.second = None
            self._reopen()
            return
        shown = self.current[0] if self.current else filtered
        others = [s for s in self.systems if s != shown]
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
        self._reopen()

    def _reopen(self) -> None:
        if self.current is not None and self.display:
            self.open(*self.current)

    def step(self, delta: int, keys: list[tuple[str, int]]) -> tuple[str, int] | None:
        """The item ``delta`` places from the one shown among ``keys`` (the list's, in its
        order); None (said when it is past an end) when there is none."""
        if self.current is None or not keys:
            return None
        unique = list(dict.fromkeys(keys))
        if self.current not in unique:
            return None
        index = unique.index(self.current) + delta
        if not 0 <= index < len(unique):
            self.notify("No more items loaded in that direction.", timeout=2)
            return None
        return unique[index]

    def action_jump_to_oracle(self) -> None:
        if self.display:
            self.jump_to_oracle()

    def action_jump_to_settings(self) -> None:
        if self.display:
            self.jump_to_settings()

    def action_toggle_verdicts(self) -> None:
        if not self.display:
            self.notify("Open an item (Enter) to see the judge's verdicts on it.", timeout=3)
        elif not self.toggle_verdicts():
            self.notify("No arena judged a pair of the answers shown on this query.", timeout=4)

    def action_toggle_reasoning(self) -> None:
        if not self.display:
            self.notify("Open an item (Enter) to see its reasoning.", timeout=3)
        elif not self.toggle_reasoning():
            self.notify("No answer shown has reasoning: the model did not think, or the "
                        "server did not return its thinking.", timeout=4)

    # ------------------------------------------------------------------ drawing

    def show_loading(self) -> None:
        self.query_one("#d-query", Static).update("Loading the item…")

    def show_error(self, error: str) -> None:
        self.query_one("#d-query", Static).update(f"Could not load the item: {error}")

    async def show_items(self, details: list, verdicts: list, human: dict | None = None) -> None:
        """Draw ``details`` (the first system's, then the second's) and the verdicts on
        this query, then scroll to the top and take the focus."""
        first = details[0]
        systems = [d.system for d in details]
        self.query_one("#d-query", Static).update(safe_text(first.query, style="bold"))
        self.query_one("#d-meta", Static).update(
            f"{first.query_id} · language {first.language or '—'} · source "
            f"{first.source or '—'} · run {first.run} · " + "  vs  ".join(systems))
        answers = Text("Gold answers: ", style="bold")
        answers.append(visible(" | ".join(first.answers) if first.answers else "(none)"),
                       style="not bold")
        if first.reference_answer:
            answers.append("\nReference answer: ", style="bold")
            answers.append(visible(first.reference_answer), style="not bold")
        self.query_one("#d-answers", Static).update(answers)
        adapt = Text()
        for d in details:
            for mixed, a in d.adaptability.items():
                adapt.append(f"{d.system} · {mixed}: ", style="bold")
                adapt.append(f"{a['pattern']} · {a['label']}\n")
        self.query_one("#d-adapt", Static).update(adapt or Text("No adaptability pattern: "
                                                                "base, oracle or mixed missing."))
        lines = verdict_lines(verdicts, systems, human)
        fold = self.query_one("#d-verdicts-fold", Collapsible)
        fold.display = bool(lines)
        fold.title = verdicts_title(verdicts, systems, human)
        if lines:
            self.query_one("#d-verdicts", Static).update(
                Text.assemble(("Judge verdicts on this query\n", "bold"), lines))
        self.query_one("#d-pool-heading", Static).update(pool_heading(first.pool))
        shown = {s.setting for d in details for s in d.settings}
        pool = self.query_one("#d-pool", Vertical)
        await pool.remove_children()
        await pool.mount_all([pool_card(c, shown) for c in first.pool])
        blocks = self.query_one("#d-settings", Vertical)
        await blocks.remove_children()
        order = list(dict.fromkeys(s.setting for d in details for s in d.settings))
        widgets = []
        for setting in order:
            widgets.append(Static(Text(f"Setting {setting}"), classes="d-heading"))
            panels = [setting_panel(d.system, next((s for s in d.settings
                                                    if s.setting == setting), None),
                                    self.reasoning_unfolded)
                      for d in details]
            widgets.append(SettingRow(setting, *panels))
        await blocks.mount_all(widgets)
        self.scroll_home(animate=False)
        self.focus()

    def toggle_reasoning(self) -> bool:
        """Unfold the reasoning under every answer shown, or fold it again; False (nothing
        changed) when no answer shown has any."""
        panels = list(self.query(SettingPanel))
        if not any(p.has_reasoning for p in panels):
            return False
        self.reasoning_unfolded = not self.reasoning_unfolded
        for panel in panels:
            panel.unfold(self.reasoning_unfolded)
        return True

    def setting_in_view(self) -> str | None:
        """The setting whose panels are most in view: the row showing the most lines (the
        topmost of equals), so the tail of one setting above another that fills the screen
        does not count; None when no setting row is in view."""
        view = self.region
        seen = [(row.region.intersection(view).height, -i, row.setting)
                for i, row in enumerate(self.query(SettingRow))]
        best = max(seen, default=(0, 0, None))
        return best[2] if best[0] > 0 else None

    def toggle_verdicts(self) -> bool:
        """Unfold the judge's verdicts on this query, or fold them; False when there are
        none."""
        fold = self.query_one("#d-verdicts-fold", Collapsible)
        if not fold.display:
            return False
        fold.collapsed = not fold.collapsed
        if not fold.collapsed:
            self.scroll_to_widget(fold, top=True, animate=False)
        return True

    def jump_to_oracle(self) -> None:
        cards = self.query(".pool-chunk.oracle")
        if cards:
            self.scroll_to_widget(cards.first(), top=True, animate=False)

    def jump_to_settings(self) -> None:
        self.scroll_to_widget(self.query_one("#d-settings"), top=True, animate=False)
