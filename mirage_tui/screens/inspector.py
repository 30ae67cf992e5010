"""The inspector: the run items behind a report's numbers, filtered, and one item in full.

The list is thin (``engine.results.inspector.items_for``, one page at a time, after inspect_ai's sample
summaries); Enter loads the full item on demand (``item_detail``): the query, its gold answers,
the pool with the oracle marked ★ and every retriever's rank, and per setting the exact prompt
sent, the response and every score with its reason. ``s`` puts a second system beside the
first on the same query (two columns, setting by setting), and when the run has arena battles
the judge's verdicts on this query are shown with their probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import (DataTable, Footer, Header, Input, Label,
                             OptionList, Select, Static)
from textual.worker import Worker

from engine.metrics.adaptability import CATEGORIES, PATTERN_KEYS, category_label

PAGE_SIZE = 100
LOAD_MORE_MARGIN = 10
COUNT_ALL = 10**9
ORACLE_MARK = "★ oracle"


def _clip(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def _plain(value) -> Text:
    # DataTable reads a str cell as markup: "[1]" in an answer would vanish
    return Text(str(value))


def _value(value: float | None) -> str:
    if value is None:
        return "—"
    return str(int(value)) if float(value).is_integer() else f"{value:.3g}"


def pattern_label(pattern: str) -> str:
    """``b0o1m0 · base ✗ oracle ✓ mixed ✗``."""
    marks = {"0": "✗", "1": "✓"}
    return (f"{pattern} · base {marks[pattern[1]]} oracle {marks[pattern[3]]} "
            f"mixed {marks[pattern[5]]}")


def _report_error(event: Worker.StateChanged) -> None:
    from mirage_tui.app import report_worker_error

    report_worker_error(event)


@dataclass
class Filters:
    system: str | None = None
    setting: str | None = None
    category: str | None = None
    pattern: str | None = None
    language: str | None = None
    source: str | None = None
    metric: str | None = None
    min_value: float | None = None
    max_value: float | None = None

    def describe(self) -> str:
        parts = [f"{k} {v}" for k, v in (("system", self.system), ("setting", self.setting),
                                          ("category", self.category),
                                          ("pattern", self.pattern),
                                          ("language", self.language),
                                          ("source", self.source)) if v]
        if self.metric and (self.min_value is not None or self.max_value is not None):
            lo = "" if self.min_value is None else _value(self.min_value)
            hi = "" if self.max_value is None else _value(self.max_value)
            parts.append(f"{self.metric} in [{lo or '−∞'}, {hi or '∞'}]")
        return " · ".join(parts)


# --------------------------------------------------------------------------- second system


class PickSystemScreen(ModalScreen[str | None]):
    """A list of the run's other systems; Enter picks one for the second column."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    PickSystemScreen { align: center middle; }
    #pick-dialog { width: 70; max-width: 100%; height: auto; max-height: 80%;
                   border: thick $accent; background: $surface; padding: 0 1; }
    #pick-systems { height: auto; max-height: 16; }
    """

    def __init__(self, systems: list[str], title: str) -> None:
        super().__init__()
        self.systems = systems
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(id="pick-dialog"):
            yield Label(self.title_text, markup=False)
            yield OptionList(*[Text(s) for s in self.systems], id="pick-systems")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.systems[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)


# --------------------------------------------------------------------------- detail parts


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
    body = Text.assemble(badge, "\n", chunk.text)
    card = Static(body, classes=f"pool-chunk {kind}", markup=False)
    position = "—" if chunk.position is None else str(chunk.position + 1)
    card.border_title = Text(f"#{position} · {chunk.title or 'untitled'}")
    card.border_subtitle = Text(chunk.chunk_id)
    return card


def setting_panel(system: str, row) -> Static:
    """One system's item in one setting: the prompt as sent, the response, every score."""
    text = Text()
    if row is None:
        text.append("no item in this setting", style="italic")
    else:
        text.append("Prompt sent\n", style="bold")
        text.append((row.prompt or "(no generation)") + "\n", style="dim")
        text.append("Response\n", style="bold")
        if row.error:
            text.append(f"error: {row.error}\n", style="bold red")
        text.append((row.response if row.response is not None else "—") + "\n")
        facts = [f"{row.prompt_tokens} → {row.completion_tokens} tokens"
                 if row.prompt_tokens is not None else None, row.finish_reason,
                 "truncated context" if row.truncated else None,
                 f"scorer {row.scorer_version}" if row.scorer_version else None]
        text.append(" · ".join(f for f in facts if f) + "\n", style="italic")
        text.append("Scores\n", style="bold")
        width = max((len(s.metric) for s in row.scores), default=8)
        for score in row.scores:
            text.append(f"{score.metric.ljust(width)}  {_value(score.value):>5}  ")
            text.append((score.detail or "") + "\n", style="dim")
        if not row.scores:
            text.append("(no scores)\n", style="italic")
    panel = Static(text, classes="setting-panel", markup=False)
    panel.border_title = Text(f"{system} · {row.setting if row else '—'}")
    return panel


def verdict_lines(verdicts, systems: list[str]) -> Text:
    """The judge's verdicts on this query for battles the shown systems took part in."""
    text = Text()
    for v in verdicts:
        if not any(v.involves(s) for s in systems):
            continue
        winner = v.winner_name
        text.append(f"{v.arena}: ", style="bold")
        text.append(f"{v.system_a}  vs  {v.system_b}  → ")
        text.append("unparsed" if winner is None else ("tie" if winner == "tie"
                                                       else f"{winner} wins"), style="bold")
        for order in v.orders:
            probs = ""
            if order.probs:
                probs = " (" + ", ".join(f"{k} {p:.2f}" for k, p in order.probs.items()) + ")"
            text.append(f"\n    shown {order.shown}: {order.label or 'unparsed'}{probs}",
                        style="dim")
        if v.disagreement:
            text.append("\n    the two orders disagreed: stored as a tie", style="dim")
        text.append("\n")
    return text


# --------------------------------------------------------------------------- the screen


class InspectorScreen(Screen):
    """A run's items, filtered; Enter opens one; Escape goes back."""

    AUTO_FOCUS = "#insp-items"

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("s", "second_system", "Side by side"),
        Binding("f", "focus_filters", "Filters"),
        Binding("x", "clear_filters", "Clear filters"),
        Binding("m", "load_more", "More"),
        Binding("n", "next_item", "Next", show=False),
        Binding("p", "previous_item", "Previous", show=False),
        Binding("o", "jump_to_oracle", "Oracle", show=False),
        Binding("t", "jump_to_settings", "Prompts", show=False),
    ]

    DEFAULT_CSS = """
    InspectorScreen #insp-filters, InspectorScreen #insp-filters2 { height: 1; padding: 0 1; }
    InspectorScreen #insp-filters Select, InspectorScreen #insp-filters2 Select {
        width: 1fr; margin-right: 1; }
    InspectorScreen #f-category { width: 2fr; }
    InspectorScreen .range { width: 9; margin-right: 1; }
    InspectorScreen #insp-status { height: 1; padding: 0 1; color: $text-muted;
        text-wrap: nowrap; text-overflow: ellipsis; }
    InspectorScreen #insp-views { height: 1fr; }
    InspectorScreen #insp-items { height: 1fr; border: round $primary 50%; }
    InspectorScreen #insp-items:focus { border: round $accent; }
    InspectorScreen #insp-detail { padding: 0 1; display: none; }
    InspectorScreen #d-query { margin-top: 1; padding: 0 1; background: $boost; text-style: bold; }
    InspectorScreen #d-meta { color: $text-muted; padding: 0 1; }
    InspectorScreen .d-block { padding: 0 1; margin-top: 1; }
    InspectorScreen .d-heading { margin-top: 1; padding: 0 1; text-style: bold;
        color: $text-primary; }
    InspectorScreen #d-pool, InspectorScreen #d-settings { height: auto; }
    InspectorScreen .pool-chunk { height: auto; padding: 0 1; border: round $primary 40%; }
    InspectorScreen .pool-chunk.oracle { border: round $accent; }
    InspectorScreen .setting-row { height: auto; }
    InspectorScreen .setting-panel { width: 1fr; height: auto; padding: 0 1;
        border: round $secondary 60%; }
    """

    @dataclass
    class FacetsLoaded(Message):
        facets: dict

    @dataclass
    class ItemsLoaded(Message):
        generation: int
        offset: int
        rows: list
        exhausted: bool

    @dataclass
    class Counted(Message):
        generation: int
        total: int

    @dataclass
    class DetailLoaded(Message):
        generation: int
        details: list
        verdicts: list

    @dataclass
    class Failed(Message):
        what: str
        error: str

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
        self._timer: Timer | None = None

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="insp-filters"):
            yield Select([], prompt="all systems", id="f-system", compact=True)
            yield Select([], prompt="all settings", id="f-setting", compact=True)
            yield Select(self._category_options(), prompt="all categories", id="f-category",
                         compact=True)
        with Horizontal(id="insp-filters2"):
            yield Select([(pattern_label(p), p) for p in PATTERN_KEYS], prompt="any pattern",
                         id="f-pattern", compact=True)
            yield Select([], prompt="all languages", id="f-language", compact=True)
            yield Select([], prompt="all sources", id="f-source", compact=True)
            yield Select([], prompt="no metric range", id="f-metric", compact=True)
            yield Input(placeholder="min", id="f-min", classes="range", compact=True,
                        type="number")
            yield Input(placeholder="max", id="f-max", classes="range", compact=True,
                        type="number")
        yield Static("Loading the run…", id="insp-status", markup=False)
        with Vertical(id="insp-views"):
            yield DataTable(id="insp-items", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="insp-detail"):
                yield Static("", id="d-query", markup=False)
                yield Static("", id="d-meta", markup=False)
                yield Static("", id="d-answers", classes="d-block", markup=False)
                yield Static("", id="d-adapt", classes="d-block", markup=False)
                yield Static("", id="d-verdicts", classes="d-block", markup=False)
                yield Static("", id="d-pool-heading", classes="d-heading", markup=False)
                yield Vertical(id="d-pool")
                yield Vertical(id="d-settings")
        yield Footer()

    def _category_options(self, mixed: str = "mixed") -> list[tuple[str, str]]:
        return [(category_label(c, mixed), c) for c in CATEGORIES]

    def on_mount(self) -> None:
        self.sub_title = f"inspector · {self.run_name}"
        self.query_one("#insp-items", DataTable).border_title = Text(f"Items of {self.run_name}")
        for sel_id, value in (("#f-category", self.filters.category),
                              ("#f-pattern", self.filters.pattern)):
            if value is not None:
                select = self.query_one(sel_id, Select)
                with select.prevent(Select.Changed):
                    try:
                        select.value = value
                    except Exception:  # not a category / pattern: items_for will say why
                        pass
        self._reset_table()
        self.query_one("#insp-items", DataTable).focus()
        self._start()

    def _start(self) -> None:
        store = getattr(self.app, "store", None)
        if store is None:  # the workspace is still opening: try again shortly
            self.set_timer(0.25, self._start)
            return
        self.load_facets(store, self.run_name)

    # ------------------------------------------------------------------ workers

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-facets",
          name="load run")
    def load_facets(self, store, run_name: str) -> None:
        from engine.results.records import load_items, load_run, metric_order, setting_order

        try:
            run = load_run(store, run_name)
            items = load_items(store, run)
            facets = {
                "systems": sorted({i.system for i in items}),
                "settings": sorted({i.setting for i in items}, key=setting_order),
                "languages": sorted({i.language for i in items if i.language}),
                "sources": sorted({i.source for i in items if i.source}),
                "metrics": metric_order({m for i in items for m in i.scores}),
                "dataset": run.dataset, "status": run.status}
            self.post_message(self.FacetsLoaded(facets))
        except Exception as exc:  # RunNotFound, sqlite errors
            self.post_message(self.Failed("the run", f"{type(exc).__name__}: {exc}"))
        finally:
            store.close()

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-items",
          name="load items")
    def load_items_page(self, store, filters: Filters, offset: int, generation: int) -> None:
        from engine.results.inspector import items_for

        args = dict(system=filters.system, setting=filters.setting, category=filters.category,
                    pattern=filters.pattern, language=filters.language, source=filters.source,
                    metric=filters.metric, min_value=filters.min_value,
                    max_value=filters.max_value)
        if not filters.metric:
            args.update(metric=None, min_value=None, max_value=None)
        try:
            rows = items_for(store, self.run_name, limit=PAGE_SIZE + 1, offset=offset, **args)
            exhausted = len(rows) <= PAGE_SIZE
            self.post_message(self.ItemsLoaded(generation, offset, rows[:PAGE_SIZE], exhausted))
            if offset == 0:
                # the engine pages without a count: count once per filter, only when needed
                total = len(rows) if exhausted else len(
                    items_for(store, self.run_name, limit=COUNT_ALL, **args))
                self.post_message(self.Counted(generation, total))
        except Exception as exc:
            self.post_message(self.Failed("items", f"{type(exc).__name__}: {exc}"))
        finally:
            store.close()

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-detail",
          name="load item")
    def load_detail(self, store, systems: list[str], query: str | int, generation: int) -> None:
        from engine.results.inspector import item_detail

        try:
            details = [item_detail(store, self.run_name, s, query) for s in systems]
            verdicts = []
            try:
                from engine.arena.verdicts import verdicts_for

                verdicts = verdicts_for(store, self.run_name, details[0].query_rowid)
            except Exception as exc:  # no arena tables or a broken row: the item still shows
                self.post_message(self.Failed("judge verdicts", f"{type(exc).__name__}: {exc}"))
            self.post_message(self.DetailLoaded(generation, details, verdicts))
        except Exception as exc:
            self.post_message(self.Failed("the item", f"{type(exc).__name__}: {exc}"))
        finally:
            store.close()

    # ------------------------------------------------------------------ facets and filters

    @on(FacetsLoaded)
    def _facets_loaded(self, message: FacetsLoaded) -> None:
        self.facets = f = message.facets
        f_ = self.filters
        for sel_id, values, current in (
                ("#f-system", f["systems"], f_.system), ("#f-setting", f["settings"], f_.setting),
                ("#f-language", f["languages"], f_.language),
                ("#f-source", f["sources"], f_.source), ("#f-metric", f["metrics"], f_.metric)):
            options = list(values) + ([current] if current and current not in values else [])
            select = self.query_one(sel_id, Select)
            with select.prevent(Select.Changed):
                select.set_options([(Text(v), v) for v in options])
                if current is not None:
                    select.value = current
        self._relabel_categories()
        self.reload_items()
        if self.open_query is not None:
            system = f_.system or (f["systems"][0] if f["systems"] else None)
            if system is not None:
                self.show_item(system, self.open_query)
            self.open_query = None

    def _relabel_categories(self) -> None:
        setting = self.filters.setting
        mixed = setting if setting and (setting == "mixed" or setting.startswith("retrieved@")) \
            else "mixed"
        select = self.query_one("#f-category", Select)
        with select.prevent(Select.Changed):
            value = select.value
            select.set_options(self._category_options(mixed))
            if value != Select.NULL:
                select.value = value

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
    def _range_submitted(self) -> None:
        self._apply_filters()
        self.query_one("#insp-items", DataTable).focus()

    def _select_value(self, sel_id: str) -> str | None:
        value = self.query_one(sel_id, Select).value
        return None if value == Select.NULL else str(value)

    def _number(self, input_id: str) -> float | None:
        raw = self.query_one(input_id, Input).value.strip()
        try:
            return float(raw) if raw else None
        except ValueError:
            return None

    def _apply_filters(self) -> None:
        new = Filters(self._select_value("#f-system"), self._select_value("#f-setting"),
                      self._select_value("#f-category"), self._select_value("#f-pattern"),
                      self._select_value("#f-language"), self._select_value("#f-source"),
                      self._select_value("#f-metric"), self._number("#f-min"),
                      self._number("#f-max"))
        if new.metric is None and (new.min_value is not None or new.max_value is not None):
            self.notify("Pick a metric for the min / max range.", timeout=3)
        if new != self.filters:
            setting_changed = new.setting != self.filters.setting
            self.filters = new
            if setting_changed:
                self._relabel_categories()
            self.reload_items()

    def action_clear_filters(self) -> None:
        for sel in self.query("#insp-filters Select, #insp-filters2 Select").results(Select):
            with sel.prevent(Select.Changed):
                sel.clear()
        for inp in self.query(".range").results(Input):
            with inp.prevent(Input.Changed):
                inp.value = ""
        self.filters = Filters()
        self._relabel_categories()
        self.reload_items()

    def action_focus_filters(self) -> None:
        self._show_view("insp-items")
        self.query_one("#f-category", Select).focus()

    # ------------------------------------------------------------------ the list

    def _reset_table(self) -> None:
        table = self.query_one("#insp-items", DataTable)
        table.clear(columns=True)
        for label in ("system", "setting", "query", "lang", "EM", "pattern", "question",
                      "response"):
            table.add_column(label, key=label)

    def reload_items(self) -> None:
        self.generation += 1
        self.rows, self.total, self.exhausted = [], None, False
        self._reset_table()
        self._fetch()

    def _fetch(self) -> None:
        store = getattr(self.app, "store", None)
        if store is None:
            return
        self.page_loading = True
        self._update_status()
        self.load_items_page(store, self.filters, len(self.rows), self.generation)

    @on(ItemsLoaded)
    def _items_loaded(self, message: ItemsLoaded) -> None:
        if message.generation != self.generation or message.offset != len(self.rows):
            return  # a page for filters no longer shown
        table = self.query_one("#insp-items", DataTable)
        # the screen's width, not the table's: the table may not be laid out yet, and the
        # columns must not depend on when the first page arrives
        width = self.app.size.width
        sys_w, set_w, qid_w = (18, 12, 14) if width >= 110 else \
            (15, 8, 14) if width >= 95 else (11, 7, 11)
        # the fixed columns (lang 4, EM 3, pattern 7), 8 × 2 cells of padding, the border and
        # the scrollbar: what is left goes to the question and the response
        rest = max(16, width - (sys_w + set_w + qid_w + 14 + 16 + 4))
        for row in message.rows:
            key = f"{row.system}\t{row.setting}\t{row.query_rowid}"
            if key in table.rows:
                continue
            em = _value(row.em_loose) if not row.error else "err"
            table.add_row(_plain(_clip(row.system, sys_w)), _plain(_clip(row.setting, set_w)),
                          _plain(_clip(row.query_id, qid_w)), _plain(row.language or "—"),
                          _plain(em), _plain(row.pattern or "—"),
                          _plain(_clip(row.query, rest // 2)),
                          _plain(_clip(row.response or row.error or "—", rest - rest // 2)),
                          key=key)
            self.rows.append(row)
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
        if self.page_loading and not self.rows:
            text = "Loading items…"
        else:
            total = self.total
            count = f"{total}" if total is not None else f"{len(self.rows)}+"
            noun = "item matches" if total == 1 else "items match"
            text = f"{count} {noun}"
            if total is not None and len(self.rows) < total:
                text += f" · {len(self.rows)} loaded, m for more"
        where = self.filters.describe()
        hint = " · Enter opens an item" if self.rows else ""
        self.query_one("#insp-status", Static).update(
            f"{text}{' · ' + where if where else ''}{hint}")

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

    def show_item(self, system: str, query: str | int) -> None:
        store = getattr(self.app, "store", None)
        if store is None:
            return
        self.detail_generation += 1
        systems = [system] + ([self.second] if self.second and self.second != system else [])
        self.query_one("#d-query", Static).update("Loading the item…")
        self._show_view("insp-detail")
        self.load_detail(store, systems, query, self.detail_generation)

    @on(DetailLoaded)
    async def _detail_loaded(self, message: DetailLoaded) -> None:
        if message.generation != self.detail_generation:
            return
        first = message.details[0]
        self.current = (first.system, first.query_rowid)
        systems = [d.system for d in message.details]
        self.query_one("#d-query", Static).update(Text(first.query, style="bold"))
        self.query_one("#d-meta", Static).update(
            f"{first.query_id} · language {first.language or '—'} · source "
            f"{first.source or '—'} · run {first.run} · " + "  vs  ".join(systems))
        answers = Text("Gold answers: ", style="bold")
        answers.append(" | ".join(first.answers) if first.answers else "(none)",
                       style="not bold")
        if first.reference_answer:
            answers.append("\nReference answer: ", style="bold")
            answers.append(first.reference_answer, style="not bold")
        self.query_one("#d-answers", Static).update(answers)
        adapt = Text()
        for d in message.details:
            for mixed, a in d.adaptability.items():
                adapt.append(f"{d.system} · {mixed}: ", style="bold")
                adapt.append(f"{a['pattern']} · {a['label']}\n")
        self.query_one("#d-adapt", Static).update(adapt or Text("No adaptability pattern: "
                                                                "base, oracle or mixed missing."))
        verdicts = verdict_lines(message.verdicts, systems)
        block = self.query_one("#d-verdicts", Static)
        block.display = bool(verdicts)
        if verdicts:
            block.update(Text.assemble(("Judge verdicts on this query\n", "bold"), verdicts))
        oracles = sum(c.is_oracle for c in first.pool)
        self.query_one("#d-pool-heading", Static).update(
            f"Pool: {len(first.pool)} chunks · {oracles} oracle (★)" if first.pool
            else "Pool: this query has no pool entries.")
        shown = {s.setting for d in message.details for s in d.settings}
        pool = self.query_one("#d-pool", Vertical)
        await pool.remove_children()
        await pool.mount_all([pool_card(c, shown) for c in first.pool])
        blocks = self.query_one("#d-settings", Vertical)
        await blocks.remove_children()
        order = list(dict.fromkeys(s.setting for d in message.details for s in d.settings))
        widgets = []
        for setting in order:
            widgets.append(Static(Text(f"Setting {setting}"), classes="d-heading"))
            panels = [setting_panel(d.system, next((s for s in d.settings
                                                    if s.setting == setting), None))
                      for d in message.details]
            widgets.append(Horizontal(*panels, classes="setting-row"))
        await blocks.mount_all(widgets)
        scroll = self.query_one("#insp-detail", VerticalScroll)
        scroll.scroll_home(animate=False)
        scroll.focus()

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
        cards = self.query(".pool-chunk.oracle")
        if cards and self.detail_shown:
            self.query_one("#insp-detail", VerticalScroll).scroll_to_widget(
                cards.first(), top=True, animate=False)

    def action_jump_to_settings(self) -> None:
        if self.detail_shown:
            self.query_one("#insp-detail", VerticalScroll).scroll_to_widget(
                self.query_one("#d-settings"), top=True, animate=False)

    def action_back(self) -> None:
        if self.detail_shown:
            self._show_view("insp-items")
            self.query_one("#insp-items", DataTable).focus()
        elif self.focused is not None and self.focused.id and \
                self.focused.id.startswith("f-"):
            self.query_one("#insp-items", DataTable).focus()
        else:
            self.app.pop_screen()

    # ------------------------------------------------------------------ errors

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        self.page_loading = False
        if message.what == "the run":
            self.query_one("#insp-status", Static).update(f"Cannot open the run: {message.error}")
        elif message.what == "the item":
            self.query_one("#d-query", Static).update(f"Could not load the item: {message.error}")
        self.app.notify(message.error, title=f"Could not load {message.what}",
                        severity="error", markup=False, timeout=10)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        _report_error(event)
