"""The inspector: the run items behind a report's numbers, filtered, and one item in full.

The list is thin (``engine.results.inspector.items_for``, one page at a time, after inspect_ai's
sample summaries); Enter loads the full item on demand (``item_detail``) into the detail view
(:class:`~.detail.ItemDetail`). ``s`` puts a second system beside the first on the same query
(two columns, setting by setting), and when the run has arena battles the judge's verdicts on
this query are shown with their probabilities. The filters live in :mod:`.filters`.

``/`` searches the questions and responses (Enter applies, Escape clears; the engine's trigram
indexes), a click on a column header or ``S`` sorts by a column (again, or ``R``: the other
way), and ``E`` exports the items the list shows, filtered and sorted, as CSV or JSON lines
(``engine.results.export.export_run`` with the view).
"""

from __future__ import annotations


from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Header, Input, Select, Static

from mirage_tui.commands import PaletteCommand
from mirage_tui.dialogs.pick_system import PickSystemScreen
from mirage_tui.screens.base import BaseScreen, WorkerFailed
from mirage_tui.screens.inspector.cells import (COLUMN_SORTS, ITEM_COLUMNS, column_label,
                                               item_key, page_cells)
from mirage_tui.screens.inspector.detail import ItemDetail
from mirage_tui.screens.inspector.export_view import ViewExportKeys
from mirage_tui.screens.inspector.human import VERDICT_BINDINGS, HumanVerdictKeys
from mirage_tui.screens.inspector.filters import FilterBar, Filters, run_facets, status_line
from mirage_tui.screens.inspector.messages import (Counted, DetailLoaded, FacetsLoaded,
                                                   ItemsLoaded)

PAGE_SIZE = 100
LOAD_MORE_MARGIN = 10


class InspectorScreen(ViewExportKeys, HumanVerdictKeys, BaseScreen):
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
                 query: str | None = None) -> None:
        super().__init__()
        self.run_name = run_name
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
        self._timer: Timer | None = None

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
                from engine.arena.human_verdicts import human_verdicts_for
                from engine.arena.verdicts import verdicts_for

                verdicts = verdicts_for(store, self.run_name, details[0].query_rowid)
                human = human_verdicts_for(store, self.run_name, details[0].query_rowid)
            except Exception as exc:  # no arena tables or a broken row: the item still shows
                self.post_message(WorkerFailed("judge verdicts",
                                               f"{type(exc).__name__}: {exc}"))
            self.post_message(DetailLoaded(generation, details, verdicts, human))

    # ------------------------------------------------------------------ facets and filters

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

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        if event.select.id and event.select.id.startswith("f-"):
            self._apply_filters()

    @on(Input.Changed, ".range")
    def _range_changed(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(0.4, self._apply_filters)

    @on(Input.Submitted, ".range")
    @on(Input.Submitted, "#f-search")
    def _range_submitted(self) -> None:
        self._apply_filters()
        self.query_one("#insp-items", DataTable).focus()

    def action_focus_search(self) -> None:
        self._show_view("insp-items")
        self.query_one("#f-search", Input).focus()

    def _clear_search(self) -> None:
        """Escape in the search box: empty it (and show every item again)."""
        search = self.query_one("#f-search", Input)
        if search.value:
            search.value = ""
            self._apply_filters()

    def _apply_filters(self) -> None:
        new = self.query_one(FilterBar).read()
        if new.metric is None and (new.min_value is not None or new.max_value is not None):
            self.notify("Pick a metric for the min / max range.", timeout=3)
        if new != self.filters:
            setting_changed = new.setting != self.filters.setting
            self.filters = new
            if setting_changed:
                self.query_one(FilterBar).relabel_categories(new.setting)
            self.reload_items()

    def action_clear_filters(self) -> None:
        bar = self.query_one(FilterBar)
        bar.clear()
        self.filters = Filters()
        bar.relabel_categories(None)
        self.reload_items()

    def action_focus_filters(self) -> None:
        self._show_view("insp-items")
        self.query_one("#f-category", Select).focus()

    # ------------------------------------------------------------------ the list

    def _reset_table(self) -> None:
        table = self.query_one("#insp-items", DataTable)
        table.clear(columns=True)
        for label in ITEM_COLUMNS:
            table.add_column(column_label(label, self.sort, self.descending), key=label)

    # ------------------------------------------------------------------ sorting

    def sort_by(self, sort: str | None, descending: bool = False) -> None:
        """Order the list by ``sort`` (``engine.results.inspector.SORT_KEYS``; None: by
        system, query and setting) and reload it from its first page."""
        self.sort = None if sort == "system" and not descending else sort
        self.descending = descending
        self.reload_items()

    @on(DataTable.HeaderSelected, "#insp-items")
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        sort = COLUMN_SORTS[str(event.column_key.value)]
        same = sort == (self.sort or "system")
        self.sort_by(sort, descending=not self.descending if same else False)

    def action_cycle_sort(self) -> None:
        keys = list(COLUMN_SORTS.values())
        self.sort_by(keys[(keys.index(self.sort or "system") + 1) % len(keys)])
        self.notify(f"Sorted by {self._sort_label()}.", timeout=2)

    def action_reverse_sort(self) -> None:
        self.sort_by(self.sort or "system", descending=not self.descending)
        self.notify(f"Sorted by {self._sort_label()}.", timeout=2)

    def _sort_label(self) -> str:
        column = next(c for c, k in COLUMN_SORTS.items() if k == (self.sort or "system"))
        return f"{column} {'▼' if self.descending else '▲'}"

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
        for row, cells in zip(message.rows, page_cells(message.rows, width)):
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
                        f"sorted by {self._sort_label()}" if self.sort else ""))

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

    # ------------------------------------------------------------------ the detail

    @property
    def detail_shown(self) -> bool:
        return self.query_one("#insp-detail").display

    def _show_view(self, view: str) -> None:
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
        self._show_view("insp-detail")
        self.load_detail(store, systems, query, self.detail_generation)

    @on(DetailLoaded)
    async def _detail_loaded(self, message: DetailLoaded) -> None:
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

    def action_back(self) -> None:
        if self.detail_shown:
            self._show_view("insp-items")
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
