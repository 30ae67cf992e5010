"""The inspector: the run items behind a report's numbers, filtered, and one item in full.

The screen looks the run up once (:mod:`.handle`) and hands it to its parts, widgets that each
hold their own state and say what happened by messages: the filters and search
(:class:`~.filters.FilterBar`), the list with its paging and sort (:class:`~.list_view.ItemList`),
one item in full with a second system beside it (:class:`~.detail.ItemDetail`), your own
verdict on its judged battle (:class:`~.human.HumanVerdicts`) and ``E``, the export of the view
shown (:class:`~.export_view.ViewExport`). Their keys are bound here, in the footer's order, so
that each acts wherever the focus is; the screen switches between the list and the item.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Header, Static

from mirage_tui.commands import PaletteCommand
from mirage_tui.screens.base import BaseScreen
from mirage_tui.screens.features import failures_as, in_footer_order
from mirage_tui.screens.inspector.detail import ItemDetail
from mirage_tui.screens.inspector.export_view import ViewExport
from mirage_tui.screens.inspector.filters import FilterBar, Filters, run_facets
from mirage_tui.screens.inspector.handle import InspectedRun, inspected_run
from mirage_tui.screens.inspector.human import HumanVerdicts
from mirage_tui.screens.inspector.list_view import PAGE_SIZE, ItemList
from mirage_tui.screens.inspector.messages import RunFailed, RunOpened
from mirage_tui.widgets.footer import Footer

__all__ = ["PAGE_SIZE", "InspectorScreen"]

FOOTER_ORDER = ("back", "human_verdict", "verdict_why", "second_system", "focus_filters",
                "clear_filters", "load_more", "focus_search", "cycle_sort", "reverse_sort",
                "export_view", "next_item", "previous_item", "jump_to_oracle",
                "jump_to_settings", "toggle_reasoning", "toggle_verdicts")
"""The parts' keys in the footer: the verdict keys right after Back (shown only while an
item with a judged battle is open, and a footer at 120 columns had no room left for them at
the end)."""


class InspectorScreen(BaseScreen):
    """A run's items, filtered; Enter opens one; Escape goes back."""

    AUTO_FOCUS = "#insp-items"

    BINDINGS = in_footer_order(FOOTER_ORDER, [Binding("escape", "back", "Back")],
                               HumanVerdicts.KEYS, ItemDetail.KEYS, FilterBar.KEYS,
                               ItemList.KEYS, ViewExport.KEYS)

    PALETTE = (
        PaletteCommand("query: jump to oracle", "Scroll the query's pool to its oracle chunk",
                       "jump_to_oracle"),
        PaletteCommand("inspector: search", "Search the questions and responses (/)",
                       "focus_search"),
        PaletteCommand("inspector: sort by the next column", "Cycle the list's sort column (S)",
                       "cycle_sort"),
        PaletteCommand("inspector: reverse the sort", "Sort the list the other way (R)",
                       "reverse_sort"),
        PaletteCommand("inspector: unfold the reasoning",
                       "Show (or fold) a reasoning model's thinking under each answer (r)",
                       "toggle_reasoning"),
        PaletteCommand("inspector: unfold the judge's verdicts",
                       "Show (or fold) the judge's pairs on the item's query (j)",
                       "toggle_verdicts"),
        PaletteCommand("inspector: export this view",
                       "Write the filtered, sorted items as CSV or JSON lines (E)",
                       "export_view"),
    )
    PALETTE_AFTER = "show_datasets"  # where the query commands are listed

    # the filter rows and the detail view bring their own (FilterBar, ItemDetail)
    DEFAULT_CSS = """
    InspectorScreen #insp-status { height: 1; padding: 0 1; color: $text-muted;
        text-wrap: nowrap; text-overflow: ellipsis; }
    InspectorScreen #insp-views { height: 1fr; }
    InspectorScreen #insp-items { height: 1fr; border: round $primary 50%; }
    InspectorScreen #insp-items:focus { border: round $accent; }
    InspectorScreen #insp-detail { padding: 0 1; display: none; }
    """

    def __init__(self, run_name: str, *, system: str | None = None, setting: str | None = None,
                 category: str | None = None, pattern: str | None = None,
                 language: str | None = None, source: str | None = None,
                 query: str | None = None, arena: str | None = None) -> None:
        super().__init__()
        self.run_name = run_name
        self.arena = arena              # the arena a verdict is read beside (None: the newest)
        self.run: InspectedRun | None = None    # looked up once, when the screen opens
        self.open_query = query
        filters = Filters(system, setting, category, pattern, language, source)
        self.bar = FilterBar(filters)
        self.items = ItemList(filters, id="insp-items")
        self.detail = ItemDetail(id="insp-detail")
        self.verdicts = HumanVerdicts(arena)
        self.export = ViewExport()

    # ------------------------------------------------------------------ the parts' state

    @property
    def filters(self) -> Filters:
        return self.bar.filters

    @property
    def rows(self) -> list:
        return self.items.rows_loaded

    @property
    def total(self) -> int | None:
        return self.items.total

    @property
    def exhausted(self) -> bool:
        return self.items.exhausted

    @property
    def sort(self) -> str | None:
        return self.items.sort_key

    @property
    def descending(self) -> bool:
        return self.items.descending

    @property
    def current(self) -> tuple[str, int] | None:
        return self.detail.current

    @property
    def second(self) -> str | None:
        return self.detail.second

    @property
    def shown_verdicts(self) -> list:
        return self.detail.verdicts

    @property
    def detail_shown(self) -> bool:
        return self.detail.display

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Header()
        yield self.bar
        yield Static("Loading the run…", id="insp-status", markup=False)
        with Vertical(id="insp-views"):
            yield self.items
            yield self.detail
        yield Footer()
        yield self.verdicts
        yield self.export

    def on_mount(self) -> None:
        self.sub_title = f"inspector · {self.run_name}"
        self.items.border_title = Text(f"Items of {self.run_name}")
        self.items.reset_columns()
        self.items.focus()
        self._start()

    def _start(self) -> None:
        store = self.store_or_retry(self._start)
        if store is not None:
            self.open_run(store, self.run_name)

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-facets",
          name="load run")
    def open_run(self, store, run_name: str) -> None:
        with failures_as(self, RunFailed, store):  # RunNotFound, sqlite errors
            run = inspected_run(store, run_name)
            self.post_message(RunOpened(run, run_facets(store, run.info)))

    @on(RunOpened)
    def _run_opened(self, message: RunOpened) -> None:
        self.run, facets = message.run, message.facets
        self.items.hold(self.run, facets)
        self.detail.hold(self.run, facets["systems"])
        self.verdicts.run = self.export.run = self.run
        self.bar.set_facets(facets)
        self.items.reload()
        if self.open_query is not None:
            system = self.filters.system or (facets["systems"][0] if facets["systems"]
                                             else None)
            if system is not None:
                self.show_item(system, self.open_query)
            self.open_query = None

    @on(RunFailed)
    def _run_failed(self, message: RunFailed) -> None:
        self.query_one("#insp-status", Static).update(f"Cannot open the run: {message.error}")
        message.tell(self.app)

    # ------------------------------------------------------------------ between the parts

    @on(FilterBar.Changed)
    def _filters_changed(self, message: FilterBar.Changed) -> None:
        self.items.reload(message.filters)

    @on(FilterBar.Done)
    def _filters_done(self) -> None:
        self.items.focus()

    @on(ItemList.Status)
    def _list_status(self, message: ItemList.Status) -> None:
        self.query_one("#insp-status", Static).update(message.line)

    @on(DataTable.RowSelected, "#insp-items")
    def _selected(self, event: DataTable.RowSelected) -> None:
        system, _, rowid = event.row_key.value.split("\t")
        self.show_item(system, int(rowid))

    @on(HumanVerdicts.Saved)
    def _verdict_saved(self, message: HumanVerdicts.Saved) -> None:
        if self.detail.current == message.current:
            self.show_item(*message.current)

    def show_view(self, view: str) -> None:
        # the list and the detail share the space below the filters; one shows at a time
        self.items.display = view == "insp-items"
        self.detail.display = view == "insp-detail"
        self.refresh_bindings()         # the verdict keys: only on an open, judged item

    def show_item(self, system: str, query: str | int) -> None:
        if self.detail.open(system, query):
            self.show_view("insp-detail")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "human_verdict":
            return self.detail.judged_here()
        return True

    # ------------------------------------------------------------------ keys

    def action_back(self) -> None:
        if self.detail_shown:
            self.show_view("insp-items")
            self.items.focus()
        elif self.focused is not None and self.focused.id and \
                self.focused.id.startswith("f-"):
            if self.focused.id == "f-search":
                self.bar.clear_search()
            self.items.focus()
        else:
            self.app.pop_screen()

    def action_focus_filters(self) -> None:
        self.show_view("insp-items")
        self.bar.focus_filters()

    def action_focus_search(self) -> None:
        self.show_view("insp-items")
        self.bar.focus_search()

    def action_clear_filters(self) -> None:
        self.bar.clear_filters()

    def action_load_more(self) -> None:
        self.items.action_load_more()

    def action_cycle_sort(self) -> None:
        self.items.action_cycle_sort()

    def action_reverse_sort(self) -> None:
        self.items.action_reverse_sort()

    def action_export_view(self) -> None:
        self.export.ask(self.items.view())

    def action_second_system(self) -> None:
        self.detail.pick_second(self.filters.system)

    def action_next_item(self) -> None:
        if (item := self.detail.step(+1, self.items.keys())) is not None:
            self.show_item(*item)

    def action_previous_item(self) -> None:
        if (item := self.detail.step(-1, self.items.keys())) is not None:
            self.show_item(*item)

    def action_jump_to_oracle(self) -> None:
        self.detail.action_jump_to_oracle()

    def action_jump_to_settings(self) -> None:
        self.detail.action_jump_to_settings()

    def action_toggle_reasoning(self) -> None:
        self.detail.action_toggle_reasoning()

    def action_toggle_verdicts(self) -> None:
        self.detail.action_toggle_verdicts()

    def action_human_verdict(self, verdict: str) -> None:
        self.verdicts.ask(verdict, self.detail)

    def action_verdict_why(self, verdict: str) -> None:
        self.verdicts.ask(verdict, self.detail)
