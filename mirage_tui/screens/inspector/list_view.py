"""The Inspector's list (:class:`ItemList`): the run's items under the filters applied, one
page at a time (``engine.results.inspector.items_for``, after inspect_ai's sample summaries;
keyset paging, a count once per filter), ``m`` or scrolling near the end for more, and its
order: a click on a column header or ``S`` sorts by a column (again, or ``R``: the other way).
Each change of filters or order reloads it from its first page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from mirage_tui.screens.features import failures_as, store_of
from mirage_tui.screens.inspector.cells import (COLUMN_SORTS, ITEM_COLUMNS, column_label,
                                                item_key, page_caption, page_cells)
from mirage_tui.screens.inspector.filters import Filters, status_line
from mirage_tui.screens.inspector.messages import Counted, ItemsFailed, ItemsLoaded

if TYPE_CHECKING:
    from mirage_tui.screens.inspector.handle import InspectedRun

PAGE_SIZE = 100
LOAD_MORE_MARGIN = 10


@dataclass(frozen=True)
class ViewShown:
    """What the list shows: its filters and order (``sort``: an
    ``engine.results.inspector.SORT_KEYS`` key, None: by system, query and setting;
    ``label``: the order in words, "EM ▼", empty in the default order)."""
    filters: Filters
    sort: str | None
    descending: bool
    label: str


class ItemList(DataTable):
    """The run's items under the filters, in the order asked for (module docstring)."""

    KEYS: ClassVar[list[Binding]] = [
        Binding("m", "load_more", "More"),
        Binding("S", "cycle_sort", "Sort"),
        Binding("R", "reverse_sort", "Reverse", show=False),
    ]
    """Its keys; the screen binds them, so that they act wherever the focus is."""

    class Status(Message):
        """The line above the list, to show (:func:`~.filters.status_line`)."""

        def __init__(self, line: str) -> None:
            super().__init__()
            self.line = line

    def __init__(self, filters: Filters, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.filters = filters
        self.run: InspectedRun | None = None
        self.systems: list[str] = []    # the run's: cells keep them apart by what differs
        self.settings: list[str] = []
        self.rows_loaded: list = []     # ItemRow of the loaded pages, table order
        self.total: int | None = None
        self.exhausted = False
        self.page_loading = False
        self.generation = 0
        self.sort_key: str | None = None  # engine sort key; None: system, query, setting
        self.descending = False

    def hold(self, run: InspectedRun, facets: dict) -> None:
        """The run whose items this lists, and the systems and settings it has."""
        self.run = run
        self.systems, self.settings = facets.get("systems") or [], facets.get("settings") or []

    def keys(self) -> list[tuple[str, int]]:
        """Each loaded item as (system, query rowid), in the list's order."""
        return [(r.system, r.query_rowid) for r in self.rows_loaded]

    def view(self) -> ViewShown:
        return ViewShown(self.filters, self.sort_key, self.descending,
                        self.sort_label() if self.sort_key else "")

    # ------------------------------------------------------------------ pages

    def reset_columns(self) -> None:
        self.clear(columns=True)
        for label in ITEM_COLUMNS:
            self.add_column(column_label(label, self.sort_key, self.descending), key=label)

    def reload(self, filters: Filters | None = None) -> None:
        """From the first page again, under ``filters`` when given."""
        if filters is not None:
            self.filters = filters
        self.generation += 1
        self.rows_loaded, self.total, self.exhausted = [], None, False
        self.reset_columns()
        self._fetch()

    def _fetch(self) -> None:
        store = store_of(self)
        if store is None or self.run is None:
            return
        self.page_loading = True
        self._update_status()
        from engine.results.inspector import item_cursor

        last = self.rows_loaded[-1] if self.rows_loaded else None
        after = item_cursor(last, self.sort_key) if last else None
        self.load_page(store, self.run, self.filters, len(self.rows_loaded), self.generation,
                       after, self.sort_key, self.descending)

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-items",
          name="load items")
    def load_page(self, store, run: InspectedRun, filters: Filters, offset: int,
                  generation: int, after: tuple | None = None, sort: str | None = None,
                  descending: bool = False) -> None:
        from engine.results.inspector import count_items_for, items_for

        args = filters.query_args()
        with failures_as(self, ItemsFailed, store):
            # keyset paging: the page after the last row shown, as fast deep in a run
            rows = items_for(store, run.info, limit=PAGE_SIZE + 1, after=after,
                             sort=sort, descending=descending, **args)
            exhausted = len(rows) <= PAGE_SIZE
            self.post_message(ItemsLoaded(generation, offset, rows[:PAGE_SIZE], exhausted))
            if offset == 0:
                # the engine pages without a count: count once per filter, only when needed
                total = len(rows) if exhausted else count_items_for(store, run.info, **args)
                self.post_message(Counted(generation, total))

    @on(ItemsLoaded)
    def _items_loaded(self, message: ItemsLoaded) -> None:
        if message.generation != self.generation or message.offset != len(self.rows_loaded):
            return  # a page for filters no longer shown
        # the screen's width, not the table's: the table may not be laid out yet, and the
        # columns must not depend on when the first page arrives
        width = self.app.size.width
        self.border_subtitle = page_caption(width, self.systems, self.settings)
        for row, cells in zip(message.rows, page_cells(message.rows, width, self.systems,
                                                       self.settings)):
            if (key := item_key(row)) in self.rows:
                continue
            self.add_row(*cells, key=key)
            self.rows_loaded.append(row)
            # size the columns now, not on the table's next Idle: under load that pass
            # sometimes missed the new rows and left columns as wide as their headers
            for column, cell in zip(self.ordered_columns, cells):
                column.content_width = max(column.content_width, cell.cell_len)
        self.exhausted = message.exhausted
        self.page_loading = False
        if message.exhausted and self.total is None:
            self.total = len(self.rows_loaded)
        self._update_status()

    @on(Counted)
    def _counted(self, message: Counted) -> None:
        if message.generation == self.generation:
            self.total = message.total
            self._update_status()

    @on(ItemsFailed)
    def _failed(self, message: ItemsFailed) -> None:
        self.page_loading = False
        message.tell(self.app)

    def _update_status(self) -> None:
        self.post_message(self.Status(
            status_line(len(self.rows_loaded), self.total, self.page_loading, self.filters,
                        f"sorted by {self.sort_label()}" if self.sort_key else "")))

    def action_load_more(self) -> None:
        if self.page_loading or self.exhausted:
            if self.exhausted:
                self.notify("All matching items are loaded.", timeout=2)
            return
        self._fetch()

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if not self.page_loading and not self.exhausted and \
                event.cursor_row >= len(self.rows_loaded) - LOAD_MORE_MARGIN:
            self._fetch()

    # ------------------------------------------------------------------ order

    def sort_by(self, sort: str | None, descending: bool = False) -> None:
        """Order the list by ``sort`` (``engine.results.inspector.SORT_KEYS``; None: by
        system, query and setting) and reload it from its first page."""
        self.sort_key = None if sort == "system" and not descending else sort
        self.descending = descending
        self.reload()

    @on(DataTable.HeaderSelected)
    def _header_selected(self, event: DataTable.HeaderSelected) -> None:
        sort = COLUMN_SORTS[str(event.column_key.value)]
        same = sort == (self.sort_key or "system")
        self.sort_by(sort, descending=not self.descending if same else False)

    def action_cycle_sort(self) -> None:
        keys = list(COLUMN_SORTS.values())
        self.sort_by(keys[(keys.index(self.sort_key or "system") + 1) % len(keys)])
        self.notify(f"Sorted by {self.sort_label()}.", timeout=2)

    def action_reverse_sort(self) -> None:
        self.sort_by(self.sort_key or "system", descending=not self.descending)
        self.notify(f"Sorted by {self.sort_label()}.", timeout=2)

    def sort_label(self) -> str:
        column = next(c for c, k in COLUMN_SORTS.items() if k == (self.sort_key or "system"))
        return f"{column} {'▼' if self.descending else '▲'}"
