"""The Inspector's filters and sorting of its list: the filter rows (``f``; ``x`` clears
them), the search box (``/``: Enter applies, Escape clears; the engine's trigram indexes), a
click on a column header or ``S`` to sort by a column (again, or ``R``: the other way). A part
of :class:`~.screen.InspectorScreen` (a mixin; what it uses of the screen:
:class:`FilterSortKeysHost`); each change reloads the list from its first page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual.widgets import DataTable, Input, Select

from mirage_tui.screens.hosts import ScreenHost
from mirage_tui.screens.inspector.cells import COLUMN_SORTS
from mirage_tui.screens.inspector.filters import FilterBar, Filters

if TYPE_CHECKING:
    from textual.timer import Timer


class FilterSortKeysHost(ScreenHost, Protocol):
    """What :class:`FilterSortKeys` uses of its host beyond a screen's own (``ScreenHost``)."""

    sort: str | None = None
    descending: bool = False

    @property
    def filters(self) -> Filters: ...

    @filters.setter
    def filters(self, filters: Filters) -> None: ...

    def show_view(self, view: str) -> None: ...

    def reload_items(self) -> None: ...


if TYPE_CHECKING:
    _Host = FilterSortKeysHost
else:
    _Host = object


class FilterSortKeys(_Host):
    """The list's filters, search and sort (module docstring)."""

    _timer: Timer | None = None
    """The range boxes' pause: the filters apply once typing rests."""

    # ------------------------------------------------------------------ filters

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id and event.select.id.startswith("f-"):
            self._apply_filters()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.has_class("range"):
            if self._timer is not None:
                self._timer.stop()
            self._timer = self.set_timer(0.4, self._apply_filters)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.has_class("range") or event.input.id == "f-search":
            self._apply_filters()
            self.query_one("#insp-items", DataTable).focus()

    def action_focus_search(self) -> None:
        self.show_view("insp-items")
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
        self.show_view("insp-items")
        self.query_one("#f-category", Select).focus()

    # ------------------------------------------------------------------ sorting

    def sort_by(self, sort: str | None, descending: bool = False) -> None:
        """Order the list by ``sort`` (``engine.results.inspector.SORT_KEYS``; None: by
        system, query and setting) and reload it from its first page."""
        self.sort = None if sort == "system" and not descending else sort
        self.descending = descending
        self.reload_items()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        if event.data_table.id != "insp-items":
            return
        sort = COLUMN_SORTS[str(event.column_key.value)]
        same = sort == (self.sort or "system")
        self.sort_by(sort, descending=not self.descending if same else False)

    def action_cycle_sort(self) -> None:
        keys = list(COLUMN_SORTS.values())
        self.sort_by(keys[(keys.index(self.sort or "system") + 1) % len(keys)])
        self.notify(f"Sorted by {self.sort_label()}.", timeout=2)

    def action_reverse_sort(self) -> None:
        self.sort_by(self.sort or "system", descending=not self.descending)
        self.notify(f"Sorted by {self.sort_label()}.", timeout=2)

    def sort_label(self) -> str:
        column = next(c for c, k in COLUMN_SORTS.items() if k == (self.sort or "system"))
        return f"{column} {'▼' if self.descending else '▲'}"
