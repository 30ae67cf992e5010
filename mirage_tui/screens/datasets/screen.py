"""The datasets screen: the workspace's datasets with their counts, and a dataset's queries.

Queries are paged (``list_queries`` with limit/offset): a page is loaded when a dataset is
opened or a filter changes, and the next one when the cursor or the scroll nears the end, so
XQuAD's 9,520 or MIRAGE's 7,560 queries never load at once and no pool is read until a query
is opened. Importing goes through :mod:`mirage_tui.dialogs.import_dataset`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Header, Input, Select, Static

from engine.datasets.catalog import (DatasetSummary, datasets_fingerprint, list_datasets,
                                     list_queries)
from engine.datasets.importing import ImportResult
from mirage_tui.commands import PaletteCommand
from mirage_tui.dialogs.import_dataset import ImportDatasetScreen
from mirage_tui.screens.base import BaseScreen, WorkerFailed
from mirage_tui.screens.datasets.queries import (PAGE_SIZE, QueriesShown, QueryFilter,
                                                 column_widths, languages_cell, number,
                                                 plain, query_cells, status_line)
from mirage_tui.widgets.footer import Footer
from mirage_tui.widgets.tables import highlighted_key


class DatasetsScreen(BaseScreen):
    """Datasets (top) and the opened dataset's queries (below), with search and language."""

    BINDINGS = [
        Binding("i", "import_dataset", "Import"),
        Binding("r", "refresh_datasets", "Refresh"),
        Binding("slash", "focus_search", "Search", key_display="/"),
        Binding("m", "load_more_queries", "More", show=False),
        Binding("escape", "back", "Back", show=False),
    ]

    PALETTE = (
        PaletteCommand("datasets: import file…",
                       "Import a dataset file or folder into the workspace", "import_dataset"),
        PaletteCommand("datasets: refresh", "Reload the dataset list from the workspace",
                       "refresh_datasets"),
        PaletteCommand("datasets: open selected", "Show the queries of the highlighted dataset",
                       "open_dataset"),
        PaletteCommand("queries: search", "Focus the query search box", "focus_search"),
        PaletteCommand("queries: load more", "Load the next page of queries",
                       "load_more_queries"),
    )
    PALETTE_AFTER = "show_datasets"

    @dataclass
    class DatasetsLoaded(Message):
        datasets: list[DatasetSummary]
        fingerprint: object = None
        """The store's dataset fingerprint, read before the list (what the watch saw)."""

    @dataclass
    class QueriesLoaded(Message):
        generation: int
        offset: int
        rows: list[dict]
        exhausted: bool

    @dataclass
    class LoadFailed(WorkerFailed):
        generation: int | None = None

    def __init__(self) -> None:
        super().__init__()
        self.datasets: dict[str, DatasetSummary] = {}
        self.shown = QueriesShown()
        self._search_timer: Timer | None = None
        self._open_after_load: str | None = None  # a just-imported dataset to show

    def compose(self) -> ComposeResult:
        yield Header()
        datasets = DataTable(id="datasets", cursor_type="row", zebra_stripes=True)
        datasets.border_title = "Datasets"
        yield datasets
        yield Static("", id="datasets-welcome", markup=False)
        with Vertical(id="queries-pane"):
            with Horizontal(id="query-filters"):
                yield Input(placeholder="search questions and ids  (/)", id="query-search",
                            compact=True)
                yield Select([], prompt="all languages", id="query-language", compact=True)
            yield Static("Opening the workspace…", id="queries-status", markup=False)
            queries = DataTable(id="queries", cursor_type="row", zebra_stripes=True)
            queries.border_title = "Queries"
            yield queries
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#datasets", DataTable)
        for label, key in (("dataset", "label"), ("kind", "kind"), ("queries", "queries"),
                           ("chunks", "chunks"), ("languages", "languages"),
                           ("sources", "sources"), ("format", "format")):
            table.add_column(label, key=key)
        queries = self.query_one("#queries", DataTable)
        self._reset_queries_table()
        self.watch(queries, "scroll_y", self._queries_scrolled, init=False)
        table.focus()
        # live: a dataset imported from the command line appears without r
        self._watch = self.watch_store(datasets_fingerprint, self.action_refresh_datasets)

    # ------------------------------------------------------------------ datasets

    def action_refresh_datasets(self) -> None:
        store = self.store
        if store is None:
            self.notify("The workspace is still opening.", severity="warning")
            return
        self.load_datasets(store)

    @work(thread=True, exclusive=True, exit_on_error=False, group="datasets",
          name="load datasets")
    def load_datasets(self, store) -> None:
        try:
            fingerprint = datasets_fingerprint(store)      # first: a write after it is news
            self.post_message(self.DatasetsLoaded(list_datasets(store), fingerprint))
        except Exception as exc:
            self.post_message(self.LoadFailed("datasets", f"{type(exc).__name__}: {exc}"))
        finally:
            store.close()

    def on_datasets_screen_datasets_loaded(self, message: DatasetsLoaded) -> None:
        self._watch.saw(message.fingerprint)
        table = self.query_one("#datasets", DataTable)
        keep = self._highlighted_dataset()
        self.datasets = {d.label: d for d in message.datasets}
        table.clear()
        for d in message.datasets:
            qa = d.kind == "qa"
            items = (d.queries if qa else f"{d.queries:,} pairs" if d.kind == "labels"
                     else "—")
            table.add_row(plain(d.label), d.kind, number(items),
                          number(d.chunks), plain(languages_cell(d.languages)),
                          number(f"{len(d.sources)}+" if len(d.sources) >= 50
                                 else len(d.sources)),
                          plain(d.format), key=d.label)
        table.border_subtitle = Text(f"{len(message.datasets)} in {self.app.sub_title}")
        if not message.datasets:
            self._set_status("No datasets yet: press i to import a file or folder.")
            return
        if keep in self.datasets:
            table.move_cursor(row=table.get_row_index(keep))
        shown = self.shown.dataset
        wanted, self._open_after_load = self._open_after_load, None
        if wanted in self.datasets:
            table.move_cursor(row=table.get_row_index(wanted))
            self.open_dataset(self.datasets[wanted])
        elif shown is None or shown.label not in self.datasets:
            first = next((d for d in message.datasets if d.kind == "qa"), message.datasets[0])
            table.move_cursor(row=table.get_row_index(first.label))
            self.open_dataset(first)
        else:
            self.shown.dataset = self.datasets[shown.label]
            self._update_status()

    def _highlighted_dataset(self) -> str | None:
        return highlighted_key(self.query_one("#datasets", DataTable))

    @on(DataTable.RowSelected, "#datasets")
    def _dataset_selected(self, event: DataTable.RowSelected) -> None:
        dataset = self.datasets.get(event.row_key.value)
        if dataset is not None:
            self.open_dataset(dataset)
            self.query_one("#queries", DataTable).focus()

    def action_open_dataset(self) -> None:
        label = self._highlighted_dataset()
        if label in self.datasets:
            self.open_dataset(self.datasets[label])
            self.query_one("#queries", DataTable).focus()

    def open_dataset(self, dataset: DatasetSummary) -> None:
        changed = self.shown.dataset is None or self.shown.dataset.label != dataset.label
        self.shown.dataset = dataset
        if changed:
            self.shown.filter.language = None
            select = self.query_one("#query-language", Select)
            with select.prevent(Select.Changed):
                select.set_options([(f"{lang} ({n})", lang)
                                    for lang, n in dataset.languages.items()])
        self.query_one("#queries", DataTable).border_title = Text(f"Queries of {dataset.label}")
        self.reload_queries()

    def show_welcome(self, text: str) -> None:
        """The first launch's hints, on a line of their own under the datasets (the app
        calls this once the workspace is open); nothing shown when ``text`` is empty."""
        welcome = self.query_one("#datasets-welcome", Static)
        welcome.update(text)
        welcome.display = bool(text)

    def show_store_error(self, error: str) -> None:
        self._set_status(f"No workspace: {error}")

    # ------------------------------------------------------------------ queries

    def reload_queries(self) -> None:
        shown = self.shown
        shown.generation += 1
        shown.ids = []
        shown.exhausted = False
        self._reset_queries_table()
        if shown.dataset is None:
            return
        if shown.dataset.kind != "qa" or shown.dataset.queries == 0:
            shown.exhausted = True
            self._update_status()
            return
        self._fetch_page()

    def _reset_queries_table(self) -> None:
        # columns too: a column keeps the widest width it has seen, even across clear()
        queries = self.query_one("#queries", DataTable)
        queries.clear(columns=True)
        for label, key in (("id", "id"), ("lang", "language"), ("source", "source"),
                           ("question", "question"), ("answers", "answers")):
            queries.add_column(label, key=key)

    def _fetch_page(self) -> None:
        store = self.store
        shown = self.shown
        if store is None or shown.dataset is None:
            return
        shown.loading = True
        self._update_status()
        self.load_queries(store, shown.dataset.label, shown.filter.language,
                          shown.filter.search, len(shown.ids), shown.generation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="queries",
          name="load queries")
    def load_queries(self, store, ref: str, language: str | None, search: str, offset: int,
                     generation: int) -> None:
        try:
            # one row past the page tells whether another page exists, without a COUNT
            rows = list_queries(store, ref, language=language, search=search or None,
                                limit=PAGE_SIZE + 1, offset=offset)
        except Exception as exc:
            self.post_message(self.LoadFailed("queries", f"{type(exc).__name__}: {exc}",
                                              generation))
            return
        finally:
            store.close()
        self.post_message(self.QueriesLoaded(generation, offset, rows[:PAGE_SIZE],
                                             len(rows) <= PAGE_SIZE))

    def on_datasets_screen_queries_loaded(self, message: QueriesLoaded) -> None:
        shown = self.shown
        if message.generation != shown.generation or message.offset != len(shown.ids):
            return  # a page for a filter or dataset that is no longer shown
        table = self.query_one("#queries", DataTable)
        if message.offset == 0 or shown.widths is None:
            shown.widths = column_widths(message.rows, table.size.width or self.app.size.width)
        for row in message.rows:
            qid = row["query_id"]
            if qid in table.rows:
                continue
            table.add_row(*query_cells(row, shown.widths), key=qid)
            shown.ids.append(qid)
        shown.exhausted = message.exhausted
        shown.loading = False
        self._update_status()

    def on_datasets_screen_load_failed(self, message: LoadFailed) -> None:
        if message.generation is not None and message.generation == self.shown.generation:
            self.shown.loading = False
        self.notify_failed(message)
        self._update_status()

    def action_load_more_queries(self) -> None:
        shown = self.shown
        if shown.loading:
            return
        if shown.exhausted:
            self.notify("All matching queries are loaded.", timeout=2)
            return
        self._fetch_page()

    def _maybe_load_more(self, near_row: int) -> None:
        if self.shown.wants_more(near_row):
            self._fetch_page()

    @on(DataTable.RowHighlighted, "#queries")
    def _query_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._maybe_load_more(event.cursor_row)

    def _queries_scrolled(self, scroll_y: float) -> None:
        table = self.query_one("#queries", DataTable)
        if table.max_scroll_y and scroll_y >= table.max_scroll_y - 3:
            self._maybe_load_more(len(self.shown.ids))

    @on(DataTable.RowSelected, "#queries")
    def _query_selected(self, event: DataTable.RowSelected) -> None:
        from mirage_tui.screens.query import QueryScreen

        dataset = self.shown.dataset
        if dataset is None:
            return
        self.app.push_screen(QueryScreen(dataset.label, event.row_key.value,
                                         query_ids=list(self.shown.ids)))

    def _update_status(self) -> None:
        text = status_line(self.shown)
        if text is not None:
            self._set_status(text)

    def _set_status(self, text: str) -> None:
        self.query_one("#queries-status", Static).update(text)

    # ------------------------------------------------------------------ filters

    @on(Input.Changed, "#query-search")
    def _search_changed(self) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        self._search_timer = self.set_timer(0.3, self._apply_filters)

    @on(Input.Submitted, "#query-search")
    def _search_submitted(self) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        self._apply_filters()
        self.query_one("#queries", DataTable).focus()

    @on(Select.Changed, "#query-language")
    def _language_changed(self) -> None:
        self._apply_filters()

    def _apply_filters(self) -> None:
        value = self.query_one("#query-language", Select).value
        new = QueryFilter(language=None if value == Select.NULL else str(value),
                          search=self.query_one("#query-search", Input).value.strip())
        if new != self.shown.filter:
            self.shown.filter = new
            self.reload_queries()

    def action_focus_search(self) -> None:
        self.query_one("#query-search", Input).focus()

    def action_back(self) -> None:
        focused = self.focused
        if focused is not None and focused.id in ("query-search", "query-language"):
            self.query_one("#queries", DataTable).focus()
        else:
            self.query_one("#datasets", DataTable).focus()

    # ------------------------------------------------------------------ import

    def action_import_dataset(self) -> None:
        self.app.push_screen(ImportDatasetScreen(), self._import_done)

    def _import_done(self, result: ImportResult | None) -> None:
        if result is None:
            return
        counts = result.counts
        if result.outcome == "unchanged":
            self.notify(f"Already in the workspace as {result.label}; nothing written.",
                        title="Import", markup=False)
        else:
            what = (f"{counts.get('pairs', 0)} answer pairs, {counts.get('labels', 0)} labels"
                    if "pairs" in counts else
                    f"{counts.get('queries', 0)} queries, {counts.get('chunks', 0)} chunks")
            self.notify(f"Imported {result.label} ({result.format}): {what} "
                        f"in {result.seconds:.1f}s", title="Import", markup=False)
        if result.warnings:
            shown = "; ".join(result.warnings[:3])
            more = f" (+{len(result.warnings) - 3} more)" if len(result.warnings) > 3 else ""
            self.notify(f"{len(result.warnings)} warning(s): {shown}{more}",
                        title=f"Import {result.label}", severity="warning", markup=False,
                        timeout=15)
        self._open_after_load = result.label
        self.action_refresh_datasets()
