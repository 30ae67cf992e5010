"""The inspector's filters: what is asked for (:class:`Filters`), what a run offers
(:func:`run_facets`), and the two rows of pickers that edit them (:class:`FilterBar`: ``f``
focuses them, ``x`` clears them, ``/`` the search box, where Enter applies and Escape
clears; the engine's trigram indexes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Input, Select

from engine.metrics.adaptability import CATEGORIES, PATTERN_KEYS, category_label
from engine.text_fit import labels_apart
from mirage_tui.screens.inspector.cells import value_text

if TYPE_CHECKING:
    from textual.timer import Timer

    from engine.store import Store
    from engine.runs.lookup import RunInfo


def pattern_label(pattern: str) -> str:
    """``b0o1m0 · base ✗ oracle ✓ mixed ✗``."""
    marks = {"0": "✗", "1": "✓"}
    return (f"{pattern} · base {marks[pattern[1]]} oracle {marks[pattern[3]]} "
            f"mixed {marks[pattern[5]]}")


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
    search: str | None = None
    cut: str | None = None          # engine.results.inspector.CUT_FILTERS: limit | thinking

    def describe(self) -> str:
        # a category in words ("noise vulnerable"), as the picker and the Live bars name it
        category = self.category.replace("_", " ") if self.category else None
        parts = [f"{k} {v}" for k, v in (("system", self.system), ("setting", self.setting),
                                          ("category", category),
                                          ("pattern", self.pattern),
                                          ("language", self.language),
                                          ("source", self.source)) if v]
        if self.metric and (self.min_value is not None or self.max_value is not None):
            lo = "" if self.min_value is None else value_text(self.min_value)
            hi = "" if self.max_value is None else value_text(self.max_value)
            parts.append(f"{self.metric} in [{lo or '−∞'}, {hi or '∞'}]")
        if self.cut:
            parts.append(CUT_WORDS.get(self.cut, self.cut))
        if self.search:
            parts.append(f"search “{self.search}”")
        return " · ".join(parts)

    def query_args(self) -> dict:
        """The filters as ``engine.results.inspector.items_for`` takes them; a range without
        a metric is no range."""
        args = dict(system=self.system, setting=self.setting, category=self.category,
                    pattern=self.pattern, language=self.language, source=self.source,
                    metric=self.metric, min_value=self.min_value, max_value=self.max_value,
                    search=self.search, cut=self.cut)
        if not self.metric:
            args.update(metric=None, min_value=None, max_value=None)
        return args


def run_facets(store: Store, run: RunInfo) -> dict:
    """What ``run``'s items offer to filter by, with its dataset and status
    (:func:`engine.results.inspector.inspector_facets`: aggregate queries), and ``cut``: its
    answers cut at the token limit and of them while thinking
    (:func:`engine.runs.tally.cut_totals`)."""
    from engine.results.inspector import inspector_facets
    from engine.runs.tally import cut_totals

    return {**inspector_facets(store, run), "cut": cut_totals(store, run.id)}


def status_line(loaded: int, total: int | None, loading: bool, filters: Filters,
                sort: str = "") -> str:
    """The line above the list: how many items match (and are loaded), under which filters,
    in which order (``sort``: "sorted by EM ▼", empty in the default order)."""
    if loading and not loaded:
        text = "Loading items…"
    else:
        count = f"{total}" if total is not None else f"{loaded}+"
        noun = "item matches" if total == 1 else "items match"
        text = f"{count} {noun}"
        if total is not None and loaded < total:
            text += f" · {loaded} loaded, m for more"
    where = " · ".join(p for p in (filters.describe(), sort) if p)
    hint = " · Enter opens an item" if loaded else ""
    return f"{text}{' · ' + where if where else ''}{hint}"


def category_options(mixed: str = "mixed") -> list[tuple[str, str]]:
    return [(category_label(c, mixed), c) for c in CATEGORIES]


CUT_WORDS = {"limit": "cut at the token limit", "thinking": "cut while thinking"}
"""The cut filter's values (``engine.results.inspector.CUT_FILTERS``) in words."""

PROMPTS = {"f-system": ("all systems", "system"), "f-setting": ("all settings", "setting"),
           "f-category": ("all categories", "category"), "f-pattern": ("any pattern", "pattern"),
           "f-language": ("all languages", "language"), "f-source": ("all sources", "source"),
           "f-metric": ("no metric range", "metric"), "f-cut": ("all answers", "cut")}
"""Each picker's prompt, in words and short: a narrow picker shows the short one, never a
prompt cut to ``all`` (at 80×24 four pickers would read ``all`` or ``any``)."""
PICKER_CHROME = 3
"""The cells of a compact picker that are not its prompt (its arrow and padding)."""
OPTION_WIDTH = 30
"""A system or setting as a picker offers it: less the words they all share beyond this."""


class FilterBar(Vertical):
    """Two rows of pickers: system, setting, category, the answers cut at the token limit
    (shown only for a run that has some) and the text search; pattern, language, source, and
    a metric with a min / max range. It holds the filters applied (:attr:`filters`) and says
    when they change (:class:`FilterBar.Changed`) and when Enter applied them (``Done``)."""

    KEYS: ClassVar[list[Binding]] = [
        Binding("f", "focus_filters", "Filters"),
        Binding("x", "clear_filters", "Clear filters"),
        Binding("slash", "focus_search", "Search", key_display="/"),
    ]
    """Its keys; the screen binds them, so that they act wherever the focus is."""

    class Changed(Message):
        """The filters applied changed: the list shows ``filters`` now."""

        def __init__(self, filters: Filters) -> None:
            super().__init__()
            self.filters = filters

    class Done(Message):
        """Enter in the search or a range box: the filters are applied, back to the list."""

    DEFAULT_CSS = """
    FilterBar { height: auto; }
    FilterBar #insp-filters, FilterBar #insp-filters2 { height: 1; padding: 0 1; }
    FilterBar #insp-filters Select, FilterBar #insp-filters2 Select {
        width: 1fr; margin-right: 1; }
    FilterBar #f-category { width: 2fr; }
    FilterBar #f-cut { display: none; }
    FilterBar #f-cut.offered { display: block; }
    FilterBar .range { width: 9; margin-right: 1; }
    FilterBar #f-search { width: 2fr; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal(id="insp-filters"):
            yield Select([], prompt=PROMPTS["f-system"][0], id="f-system", compact=True)
            yield Select([], prompt=PROMPTS["f-setting"][0], id="f-setting", compact=True)
            yield Select(category_options(), prompt=PROMPTS["f-category"][0], id="f-category",
                         compact=True)
            yield Select([(w, k) for k, w in CUT_WORDS.items()], prompt=PROMPTS["f-cut"][0],
                         id="f-cut", compact=True)
            yield Input(placeholder="/ search questions, responses", id="f-search",
                        compact=True)
        with Horizontal(id="insp-filters2"):
            yield Select([(pattern_label(p), p) for p in PATTERN_KEYS],
                         prompt=PROMPTS["f-pattern"][0],
                         id="f-pattern", compact=True)
            yield Select([], prompt=PROMPTS["f-language"][0], id="f-language", compact=True)
            yield Select([], prompt=PROMPTS["f-source"][0], id="f-source", compact=True)
            yield Select([], prompt=PROMPTS["f-metric"][0], id="f-metric", compact=True)
            yield Input(placeholder="min", id="f-min", classes="range", compact=True,
                        type="number")
            yield Input(placeholder="max", id="f-max", classes="range", compact=True,
                        type="number")

    def __init__(self, filters: Filters) -> None:
        super().__init__()
        self.filters = filters
        self._timer: Timer | None = None    # the range boxes' pause: apply once typing rests

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id and event.select.id.startswith("f-"):
            self.apply()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.has_class("range"):
            if self._timer is not None:
                self._timer.stop()
            self._timer = self.set_timer(0.4, self.apply)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.has_class("range") or event.input.id == "f-search":
            self.apply()
            self.post_message(self.Done())

    def apply(self) -> None:
        """The filters as the pickers show them, applied when they differ from the last."""
        new = self.read()
        if new.metric is None and (new.min_value is not None or new.max_value is not None):
            self.notify("Pick a metric for the min / max range.", timeout=3)
        if new != self.filters:
            setting_changed = new.setting != self.filters.setting
            self.filters = new
            if setting_changed:
                self.relabel_categories(new.setting)
            self.post_message(self.Changed(new))

    def focus_search(self) -> None:
        self.query_one("#f-search", Input).focus()

    def clear_search(self) -> None:
        """Escape in the search box: empty it (and show every item again)."""
        search = self.query_one("#f-search", Input)
        if search.value:
            search.value = ""
            self.apply()

    def focus_filters(self) -> None:
        self.query_one("#f-category", Select).focus()

    def clear_filters(self) -> None:
        """``x``: every filter off, and the list shown whole again."""
        self.clear()
        self.filters = Filters()
        self.relabel_categories(None)
        self.post_message(self.Changed(self.filters))

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit_prompts)

    def fit_prompts(self) -> None:
        """Each picker's prompt in words where it fits, else its short one."""
        for select in self.query(Select):
            long, short = PROMPTS[select.id]
            room = select.size.width - PICKER_CHROME
            prompt = long if not room or len(long) <= room else short
            if select.prompt != prompt:
                select.prompt = prompt

    def on_mount(self) -> None:
        self.preset()

    def preset(self) -> None:
        """Show the category, pattern and cut the screen was opened with (quietly)."""
        filters = self.filters
        for sel_id, value in (("#f-category", filters.category),
                              ("#f-pattern", filters.pattern), ("#f-cut", filters.cut)):
            if value is not None:
                select = self.query_one(sel_id, Select)
                with select.prevent(Select.Changed):
                    try:
                        select.value = value
                    except Exception:  # not a category / pattern: items_for will say why
                        pass

    def set_facets(self, facets: dict) -> None:
        """Offer the run's values, keeping the current ones (quietly); the cut picker only
        to a run with answers cut at the token limit (or when one is asked for); the
        categories named after the setting filtered to."""
        filters = self.filters
        cut = (facets.get("cut") or (0, 0))[0]
        self.query_one("#f-cut", Select).set_class(bool(cut or filters.cut), "offered")
        for sel_id, values, current in (
                ("#f-system", facets["systems"], filters.system),
                ("#f-setting", facets["settings"], filters.setting),
                ("#f-language", facets["languages"], filters.language),
                ("#f-source", facets["sources"], filters.source),
                ("#f-metric", facets["metrics"], filters.metric)):
            options = list(values) + ([current] if current and current not in values else [])
            select = self.query_one(sel_id, Select)
            shown = labels_apart(options, OPTION_WIDTH).shown if sel_id in (
                "#f-system", "#f-setting") else {}
            with select.prevent(Select.Changed):
                select.set_options([(Text(shown.get(v, v)), v) for v in options])
                if current is not None:
                    select.value = current
        self.relabel_categories(filters.setting)

    def relabel_categories(self, setting: str | None) -> None:
        """Name the categories after the setting that plays MIRAGE's "mixed"."""
        mixed = setting if setting and (setting == "mixed" or setting.startswith("retrieved@")) \
            else "mixed"
        select = self.query_one("#f-category", Select)
        with select.prevent(Select.Changed):
            value = select.value
            select.set_options(category_options(mixed))
            if value != Select.NULL:
                select.value = value

    def _select_value(self, sel_id: str) -> str | None:
        value = self.query_one(sel_id, Select).value
        return None if value == Select.NULL else str(value)

    def _number(self, input_id: str) -> float | None:
        raw = self.query_one(input_id, Input).value.strip()
        try:
            return float(raw) if raw else None
        except ValueError:
            return None

    def read(self) -> Filters:
        """The filters as the pickers show them."""
        return Filters(self._select_value("#f-system"), self._select_value("#f-setting"),
                       self._select_value("#f-category"), self._select_value("#f-pattern"),
                       self._select_value("#f-language"), self._select_value("#f-source"),
                       self._select_value("#f-metric"), self._number("#f-min"),
                       self._number("#f-max"),
                       self.query_one("#f-search", Input).value.strip() or None,
                       self._select_value("#f-cut"))

    def clear(self) -> None:
        """Every picker and range back to its prompt (quietly)."""
        for sel in self.query("#insp-filters Select, #insp-filters2 Select").results(Select):
            with sel.prevent(Select.Changed):
                sel.clear()
        for inp in self.query(".range, #f-search").results(Input):
            with inp.prevent(Input.Changed):
                inp.value = ""
