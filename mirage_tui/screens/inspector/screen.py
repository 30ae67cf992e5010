"""The inspector: the run items behind a report's numbers, filtered, and one item in full.

The list is thin (``engine.results.inspector.items_for``, one page at a time, after inspect_ai's
sample summaries; keyset paging, a count once per filter): this module. Its parts are mixed in,
one idea each: the filters, search and sort (:mod:`.list_view`; the filter rows themselves in
:mod:`.filters`), one item in full with a second system beside it (:mod:`.item_view`; the view
in :mod:`.detail`), your own verdict on its judged battle (:mod:`.human`), and ``E``, the
export of the view shown (:mod:`.export_view`).
"""

from __future__ import annotations


from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Header, Static

from mirage_tui.commands import PaletteCommand
from mirage_tui.screens.base import BaseScreen, WorkerFailed
from mirage_tui.screens.inspector.cells import (ITEM_COLUMNS, column_label, item_key,
                                                page_caption, page_cells)
from mirage_tui.screens.inspector.detail import ItemDetail
from mirage_tui.screens.inspector.export_view import ViewExportKeys
from mirage_tui.screens.inspector.filters import FilterBar, Filters, run_facets, status_line
from mirage_tui.screens.inspector.human import VERDICT_BINDINGS, HumanVerdictKeys
from mirage_tui.screens.inspector.item_view import ItemView
from mirage_tui.screens.inspector.list_view import FilterSortKeys
from mirage_tui.screens.inspector.messages import Counted, FacetsLoaded, ItemsLoaded
from mirage_tui.widgets.footer import Footer

PAGE_SIZE = 100
LOAD_MORE_MARGIN = 10


class InspectorScreen(ItemView, FilterSortKeys, ViewExportKeys, HumanVerdictKeys,
                      BaseScreen):
    """A run's items, filtered; Enter opens one; Escape goes back."""

    AUTO_FOCUS = "#insp-items"

    # the verdict keys right after Back: shown only while an item with a judged battle is
    # open, and a footer at 120 columns had no room left for them at the end
    BINDINGS = [Binding("escape", "back", "Back")] + VERDICT_BINDINGS + [
        Binding("s", "second_system", "Side by side"),
        Binding("f", "focus_filters", "Filters"),
        Binding("x", "clear_filters", "Clear filters"),
        Binding("m", "load_more", "More"),
        Binding("slash", "focus_search", "Search", key_display="/"),
        Binding("S", "cycle_sort", "Sort"),
        Binding("R", "reverse_sort", "Reverse", show=False),
        Binding("E", "export_view", "Export"),
        Binding("right_square_bracket", "next_item", "Next", show=False),  # n: New run
        Binding("left_square_bracket", "previous_item", "Previous", show=False),
        Binding("o", "jump_to_oracle", "Oracle", show=False),
        Binding("t", "jump_to_settings", "Prompts", show=False),
        Binding("r", "toggle_reasoning", "Reasoning", show=False),
        Binding("j", "toggle_verdicts", "Judge pairs", show=False),
    ]

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
        self.filters = Filters(system, setting, category, pattern, language, source)
        self.open_query = query
        self.facets: dict = {}
        self.rows: list = []            # ItemRow of the loaded pages, table order
        self.total: int | None = None
        self.exhausted = False
        self.page_loading = False
        self.generation = 0
        self.detail_generation = 0
        self.current: tuple[str, int] | None = None    # (system, query_rowid) shown
        self.second: str | None = None
        self.sort: str | None = None          # engine sort key; None: system, query, setting
        self.descending = False

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Header()
        yield FilterBar()
        yield Static("Loading the run…", id="insp-status", markup=False)
        with Vertical(id="insp-views"):
            yield DataTable(id="insp-items", cursor_type="row", zebra_stripes=True)
            yield ItemDetail(id="insp-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"inspector · {self.run_name}"
        self.query_one("#insp-items", DataTable).border_title = Text(f"Items of {self.run_name}")
        self.query_one(FilterBar).preset(self.filters)
        self._reset_table()
        self.query_one("#insp-items", DataTable).focus()
        self._start()

    def _start(self) -> None:
        store = self.store_or_retry(self._start)
        if store is not None:
            self.load_facets(store, self.run_name)

    # ------------------------------------------------------------------ workers

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-facets",
          name="load run")
    def load_facets(self, store, run_name: str) -> None:
        with self.worker_errors("the run", store):  # RunNotFound, sqlite errors
            self.post_message(FacetsLoaded(run_facets(store, run_name)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-items",
          name="load items")
    def load_items_page(self, store, filters: Filters, offset: int, generation: int,
                        after: tuple | None = None, sort: str | None = None,
                        descending: bool = False) -> None:
        from engine.results.inspector import count_items_for, items_for
        from engine.runs.lookup import load_run

        args = filters.query_args()
        with self.worker_errors("items", store):
            run = load_run(store, self.run_name)
            # keyset paging: the page after the last row shown, as fast deep in a run
            rows = items_for(store, run, limit=PAGE_SIZE + 1, after=after,
                             sort=sort, descending=descending, **args)
            exhausted = len(rows) <= PAGE_SIZE
            self.post_message(ItemsLoaded(generation, offset, rows[:PAGE_SIZE], exhausted))
            if offset == 0:
                # the engine pages without a count: count once per filter, only when needed
                total = len(rows) if exhausted else count_items_for(store, run, **args)
                self.post_message(Counted(generation, total))

    # ------------------------------------------------------------------ facets

    @on(FacetsLoaded)
    def _facets_loaded(self, message: FacetsLoaded) -> None:
        self.facets = f = message.facets
        bar = self.query_one(FilterBar)
        bar.set_facets(f, self.filters)
        bar.relabel_categories(self.filters.setting)
        self.reload_items()
        if self.open_query is not None:
            system = self.filters.system or (f["systems"][0] if f["systems"] else None)
            if system is not None:
                self.show_item(system, self.open_query)
            self.open_query = None

    # ------------------------------------------------------------------ the list

    def _reset_table(self) -> None:
        table = self.query_one("#insp-items", DataTable)
        table.clear(columns=True)
        for label in ITEM_COLUMNS:
            table.add_column(column_label(label, self.sort, self.descending), key=label)

    def reload_items(self) -> None:
        self.generation += 1
        self.rows, self.total, self.exhausted = [], None, False
        self._reset_table()
        self._fetch()

    def _fetch(self) -> None:
        store = self.store
        if store is None:
            return
        self.page_loading = True
        self._update_status()
        from engine.results.inspector import item_cursor

        last = self.rows[-1] if self.rows else None
        after = item_cursor(last, self.sort) if last else None
        self.load_items_page(store, self.filters, len(self.rows), self.generation, after,
                             self.sort, self.descending)

    @on(ItemsLoaded)
    def _items_loaded(self, message: ItemsLoaded) -> None:
        if message.generation != self.generation or message.offset != len(self.rows):
            return  # a page for filters no longer shown
        table = self.query_one("#insp-items", DataTable)
        # the screen's width, not the table's: the table may not be laid out yet, and the
        # columns must not depend on when the first page arrives
        width = self.app.size.width
        facets = self.facets or {}
        systems, settings = facets.get("systems") or [], facets.get("settings") or []
        table.border_subtitle = page_caption(width, systems, settings)
        for row, cells in zip(message.rows, page_cells(message.rows, width, systems,
                                                       settings)):
            if (key := item_key(row)) in table.rows:
                continue
            table.add_row(*cells, key=key)
            self.rows.append(row)
            # size the columns now, not on the table's next Idle: under load that pass
            # sometimes missed the new rows and left columns as wide as their headers
            for column, cell in zip(table.ordered_columns, cells):
                column.content_width = max(column.content_width, cell.cell_len)
        self.exhausted = message.exhausted
        self.page_loading = False
        if message.exhausted and self.total is None:
            self.total = len(self.rows)
        self._update_status()

    @on(Counted)
    def _counted(self, message: Counted) -> None:
        if message.generation == self.generation:
            self.total = message.total
            self._update_status()

    def _update_status(self) -> None:
        self.query_one("#insp-status", Static).update(
            status_line(len(self.rows), self.total, self.page_loading, self.filters,
                        f"sorted by {self.sort_label()}" if self.sort else ""))

    def action_load_more(self) -> None:
        if self.page_loading or self.exhausted:
            if self.exhausted:
                self.notify("All matching items are loaded.", timeout=2)
            return
        self._fetch()

    @on(DataTable.RowHighlighted, "#insp-items")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if not self.page_loading and not self.exhausted and \
                event.cursor_row >= len(self.rows) - LOAD_MORE_MARGIN:
            self._fetch()

    @on(DataTable.RowSelected, "#insp-items")
    def _selected(self, event: DataTable.RowSelected) -> None:
        system, _, rowid = event.row_key.value.split("\t")
        self.show_item(system, int(rowid))

    def action_back(self) -> None:
        if self.detail_shown:
            self.show_view("insp-items")
            self.query_one("#insp-items", DataTable).focus()
        elif self.focused is not None and self.focused.id and \
                self.focused.id.startswith("f-"):
            if self.focused.id == "f-search":
                self._clear_search()
            self.query_one("#insp-items", DataTable).focus()
        else:
            self.app.pop_screen()

    # ------------------------------------------------------------------ errors

    @on(WorkerFailed)
    def _failed(self, message: WorkerFailed) -> None:
        self.page_loading = False
        if message.what == "the export":
            self.app.notify(message.error, title="Could not export this view",
                            severity="error", markup=False, timeout=10)
            return
        if message.what == "the run":
            self.query_one("#insp-status", Static).update(f"Cannot open the run: {message.error}")
        elif message.what == "the item":
            self.query_one(ItemDetail).show_error(message.error)
        self.app.notify(message.error, title=f"Could not load {message.what}",
                        severity="error", markup=False, timeout=10)
