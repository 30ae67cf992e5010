"""The datasets screen: the workspace's datasets with their counts, and a dataset's queries.

Queries are paged (``list_queries`` with limit/offset): a page is loaded when a dataset is
opened or a filter changes, and the next one when the cursor or the scroll nears the end, so
XQuAD's 9,520 or MIRAGE's 7,560 queries never load at once and no pool is read until a query
is opened. The import modal lives here too, because it belongs to this screen alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.suggester import Suggester
from textual.timer import Timer
from textual.widgets import (Button, DataTable, Footer, Header, Input, Label, ProgressBar,
                             Select, Static)
from textual.worker import Worker

from engine.datasets.catalog import DatasetSummary, list_datasets, list_queries
from engine.datasets.formats import FORMATS
from engine.datasets.formats.base import DatasetFormatError
from engine.datasets.importing import ImportResult, import_path

PAGE_SIZE = 200
LOAD_MORE_MARGIN = 20  # rows from the end at which the next page is fetched
AUTO_FORMAT = "auto"


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def languages_cell(languages: dict[str, int], shown: int = 4) -> str:
    """``en 20 · es 20 · de 20``; past ``shown`` languages, ``+N more``."""
    parts = [f"{lang} {count}" for lang, count in list(languages.items())[:shown]]
    if len(languages) > shown:
        parts.append(f"+{len(languages) - shown} more")
    return " · ".join(parts) or "—"


def _number(value: int | str) -> Text:
    return Text(str(value), justify="right")


def _plain(value: str) -> Text:
    # DataTable reads a str cell as markup: a question with "[1]" in it would be mangled
    return Text(value)


def _report_error(event: Worker.StateChanged) -> None:
    from mirage_tui.app import report_worker_error

    report_worker_error(event)


# --------------------------------------------------------------------------- import modal


class PathSuggester(Suggester):
    """Completes the last component of a filesystem path (accept with →)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        typed = Path(value).expanduser()
        folder, prefix = (typed, "") if value.endswith("/") else (typed.parent, typed.name)
        try:
            names = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir()
                           if p.name.startswith(prefix) and not p.name.startswith("."))
        except OSError:
            return None
        return value + names[0][len(prefix):] if names else None


class ImportDatasetScreen(ModalScreen[ImportResult | None]):
    """Path, format, Import: runs ``import_path`` in a worker with a progress bar.

    A failed import keeps the dialog open with the reason (and a notification), so the path
    can be fixed; the store is untouched, since imports are all-or-nothing.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    @dataclass
    class Progress(Message):
        done: int
        total: int | None
        what: str

    @dataclass
    class Finished(Message):
        result: ImportResult

    @dataclass
    class Failed(Message):
        error: str

    def __init__(self, path: str = "", format: str = AUTO_FORMAT) -> None:
        super().__init__()
        self._initial_path = path
        self._initial_format = format if format in FORMATS else AUTO_FORMAT
        self.running = False

    def compose(self) -> ComposeResult:
        with Vertical(id="import-dialog"):
            yield Label("Import a dataset", id="import-title")
            yield Input(self._initial_path, placeholder="path to a dataset file or folder",
                        id="import-path", suggester=PathSuggester())
            with Horizontal(id="import-options"):
                yield Label("format", id="import-format-label")
                yield Select([("auto-detect", AUTO_FORMAT)] + [(f, f) for f in FORMATS],
                             value=self._initial_format, allow_blank=False,
                             id="import-format", compact=True)
            yield ProgressBar(id="import-progress", show_eta=False)
            yield Static("→ accepts the suggested path · Enter imports · Esc cancels",
                         id="import-status", markup=False)
            with Horizontal(id="import-buttons"):
                yield Button("Import", variant="primary", id="import-go")
                yield Button("Cancel", id="import-cancel")

    def on_mount(self) -> None:
        self.query_one("#import-progress").display = False
        self.query_one("#import-path", Input).focus()

    @on(Input.Submitted, "#import-path")
    @on(Button.Pressed, "#import-go")
    def start_import(self) -> None:
        if self.running:
            return
        raw = self.query_one("#import-path", Input).value.strip()
        if not raw:
            self._show_status("Type the path of a dataset file or folder.", error=True)
            return
        store = getattr(self.app, "store", None)
        if store is None:
            self._show_status("The workspace is still opening; try again in a moment.",
                              error=True)
            return
        fmt = self.query_one("#import-format", Select).value
        path = Path(raw).expanduser()
        self._set_running(True)
        self._show_status(f"Importing {path}…")
        self.run_import(store, path, None if fmt == AUTO_FORMAT else str(fmt))

    @on(Button.Pressed, "#import-cancel")
    def action_cancel(self) -> None:
        if self.running:
            self.notify("An import cannot be interrupted; it finishes (or fails) on its own.",
                        severity="warning")
            return
        self.dismiss(None)

    @work(thread=True, exclusive=True, exit_on_error=False, group="import", name="import")
    def run_import(self, store, path: Path, fmt: str | None) -> None:
        last = 0.0

        def progress(done: int, total: int | None, what: str) -> None:
            nonlocal last
            now = time.monotonic()
            # a progress message per record would flood the screen; 10 a second is plenty
            if now - last >= 0.1 or (total is not None and done >= total):
                last = now
                self.post_message(self.Progress(done, total, what))

        try:
            result = import_path(store, path, format=fmt, progress=progress)
        except DatasetFormatError as exc:
            self.post_message(self.Failed(str(exc)))
        except Exception as exc:  # anything else still names the file and keeps the app up
            self.post_message(self.Failed(f"{path}: {type(exc).__name__}: {exc}"))
        else:
            self.post_message(self.Finished(result))
        finally:
            store.close()

    def on_import_dataset_screen_progress(self, message: Progress) -> None:
        bar = self.query_one("#import-progress", ProgressBar)
        bar.update(total=message.total, progress=message.done)
        self._show_status(f"Reading {message.what}…" if message.what != "done"
                          else "Writing to the workspace…")

    def on_import_dataset_screen_finished(self, message: Finished) -> None:
        self.running = False
        self.dismiss(message.result)

    def on_import_dataset_screen_failed(self, message: Failed) -> None:
        self._set_running(False)
        self._show_status(message.error, error=True)
        self.notify(message.error, title="Import failed", severity="error", markup=False,
                    timeout=15)
        self.query_one("#import-path", Input).focus()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        _report_error(event)

    def _set_running(self, running: bool) -> None:
        self.running = running
        bar = self.query_one("#import-progress", ProgressBar)
        bar.display = running
        if running:
            bar.update(total=None, progress=0)
        for selector in ("#import-path", "#import-format", "#import-go"):
            self.query_one(selector).disabled = running

    def _show_status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#import-status", Static)
        status.update(text)
        status.set_class(error, "error")


# --------------------------------------------------------------------------- datasets screen


@dataclass
class QueryFilter:
    language: str | None = None
    search: str = ""


class DatasetsScreen(Screen):
    """Datasets (top) and the opened dataset's queries (below), with search and language."""

    BINDINGS = [
        Binding("i", "import_dataset", "Import"),
        Binding("r", "refresh_datasets", "Refresh"),
        Binding("slash", "focus_search", "Search", key_display="/"),
        Binding("m", "load_more_queries", "More", show=False),
        Binding("escape", "back", "Back", show=False),
    ]

    @dataclass
    class DatasetsLoaded(Message):
        datasets: list[DatasetSummary]

    @dataclass
    class QueriesLoaded(Message):
        generation: int
        offset: int
        rows: list[dict]
        exhausted: bool

    @dataclass
    class LoadFailed(Message):
        what: str
        error: str
        generation: int | None = None

    @dataclass
    class _Queries:
        """What the queries table is showing, and how far it has been loaded."""
        dataset: DatasetSummary | None = None
        filter: QueryFilter = field(default_factory=QueryFilter)
        ids: list[str] = field(default_factory=list)
        exhausted: bool = True
        loading: bool = False
        widths: tuple[int, int, int] | None = None  # source, question, answers
        generation: int = 0

    def __init__(self) -> None:
        super().__init__()
        self.datasets: dict[str, DatasetSummary] = {}
        self.shown = self._Queries()
        self._search_timer: Timer | None = None
        self._open_after_load: str | None = None  # a just-imported dataset to show

    def compose(self) -> ComposeResult:
        yield Header()
        datasets = DataTable(id="datasets", cursor_type="row", zebra_stripes=True)
        datasets.border_title = "Datasets"
        yield datasets
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

    # ------------------------------------------------------------------ datasets

    def action_refresh_datasets(self) -> None:
        store = getattr(self.app, "store", None)
        if store is None:
            self.notify("The workspace is still opening.", severity="warning")
            return
        self.load_datasets(store)

    @work(thread=True, exclusive=True, exit_on_error=False, group="datasets",
          name="load datasets")
    def load_datasets(self, store) -> None:
        try:
            self.post_message(self.DatasetsLoaded(list_datasets(store)))
        except Exception as exc:
            self.post_message(self.LoadFailed("datasets", f"{type(exc).__name__}: {exc}"))
        finally:
            store.close()

    def on_datasets_screen_datasets_loaded(self, message: DatasetsLoaded) -> None:
        table = self.query_one("#datasets", DataTable)
        keep = self._highlighted_dataset()
        self.datasets = {d.label: d for d in message.datasets}
        table.clear()
        for d in message.datasets:
            qa = d.kind == "qa"
            table.add_row(_plain(d.label), d.kind, _number(d.queries if qa else "—"),
                          _number(d.chunks), _plain(languages_cell(d.languages)),
                          _number(f"{len(d.sources)}+" if len(d.sources) >= 50
                                  else len(d.sources)),
                          _plain(d.format), key=d.label)
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
        table = self.query_one("#datasets", DataTable)
        if not table.row_count:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return row_key.value

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
        store = getattr(self.app, "store", None)
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
            shown.widths = self._column_widths(message.rows)
        source_w, question_w, answers_w = shown.widths
        for row in message.rows:
            qid = row["query_id"]
            if qid in table.rows:
                continue
            table.add_row(_plain(qid), _plain(row["language"] or "—"),
                          _plain(_clip(row["source"] or "—", source_w)),
                          _plain(_clip(row["text"], question_w)),
                          _plain(_clip(" | ".join(row["answers"]), answers_w)), key=qid)
            shown.ids.append(qid)
        shown.exhausted = message.exhausted
        shown.loading = False
        self._update_status()

    def _column_widths(self, rows: list[dict]) -> tuple[int, int, int]:
        """Widths for source, question and answers that fit the table's width, so the
        answers stay on screen (at 80 columns too) instead of behind a horizontal scroll."""
        table = self.query_one("#queries", DataTable)
        width = table.size.width or self.app.size.width
        id_w = max((len(r["query_id"]) for r in rows), default=8)
        lang_w = max((len(r["language"] or "—") for r in rows), default=4)
        # inside the border: 2 cells of padding per column (5 columns) and the scrollbar (2)
        rest = max(30, width - 12 - min(id_w, 32) - max(lang_w, 4))
        longest_source = max((len(r["source"] or "—") for r in rows), default=1)
        source_w = max(6, min(longest_source, rest // 6))
        answers_w = max(10, rest // 4)
        return source_w, max(12, rest - source_w - answers_w), answers_w

    def on_datasets_screen_load_failed(self, message: LoadFailed) -> None:
        if message.generation is not None and message.generation == self.shown.generation:
            self.shown.loading = False
        self.notify(message.error, title=f"Could not load {message.what}", severity="error",
                    markup=False, timeout=10)
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
        shown = self.shown
        if not shown.loading and not shown.exhausted and \
                near_row >= len(shown.ids) - LOAD_MORE_MARGIN:
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
        shown = self.shown
        d = shown.dataset
        if d is None:
            return
        if d.kind != "qa" or d.queries == 0:
            extra = "; attached to retrieval pools as a collection" if d.kind != "qa" else ""
            self._set_status(f"{d.label}: a collection of {d.chunks} chunks, no queries{extra}.")
            return
        loaded = len(shown.ids)
        if shown.filter.search:
            what = f"{loaded}{'' if shown.exhausted else '+'} matching “{shown.filter.search}”"
        else:
            total = d.languages.get(shown.filter.language, 0) if shown.filter.language \
                else d.queries
            what = f"{loaded} of {total} queries" + (
                f" in {shown.filter.language}" if shown.filter.language else "")
        tail = " · loading…" if shown.loading else (
            "" if shown.exhausted else " · scroll (or m) for more")
        sources = f" · {len(d.sources)} sources" if d.sources else ""
        collections = f" · + {', '.join(d.collections)}" if d.collections else ""
        self._set_status(f"{d.label}: {what}{sources}{collections}{tail} · Enter opens a query")

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
            self.notify(f"Imported {result.label} ({result.format}): "
                        f"{counts.get('queries', 0)} queries, {counts.get('chunks', 0)} chunks "
                        f"in {result.seconds:.1f}s", title="Import", markup=False)
        if result.warnings:
            shown = "; ".join(result.warnings[:3])
            more = f" (+{len(result.warnings) - 3} more)" if len(result.warnings) > 3 else ""
            self.notify(f"{len(result.warnings)} warning(s): {shown}{more}",
                        title=f"Import {result.label}", severity="warning", markup=False,
                        timeout=15)
        self._open_after_load = result.label
        self.action_refresh_datasets()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        _report_error(event)
