"""The query screen: one query with its gold answers and its whole pool, oracle marked.

The pool is loaded on demand (``get_query`` in a thread worker) when the screen opens, so the
queries list never reads a pool. Each chunk is a focusable card: Tab walks the pool, the
view follows, and ``o`` jumps to the oracle.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Header, Static

from engine.datasets.catalog import PoolEntry, QueryDetail, get_query
from engine.text_safety import visible
from mirage_tui.commands import PaletteCommand
from mirage_tui.screens.base import BaseScreen
from mirage_tui.widgets.footer import Footer
from mirage_tui.widgets.safe_text import safe_line, safe_text

ORACLE_MARK = "★ oracle"


def support_label(entry: PoolEntry) -> str:
    """What the card's badge says: oracle, supporting (and how we know), or distractor."""
    how = "from the file" if entry.support_source == "label" else entry.support_source
    if entry.is_oracle:
        return f"{ORACLE_MARK} · supports ({how})"
    if entry.support:
        return f"✓ supports ({how})"
    return f"· distractor ({how})"


class ChunkCard(Vertical, can_focus=True):
    """One pool entry: position, title, chunk id and support in the border, text inside."""

    def __init__(self, entry: PoolEntry) -> None:
        kind = "oracle" if entry.is_oracle else ("support" if entry.support else "distractor")
        super().__init__(classes=f"chunk {kind}")
        self.entry = entry
        position = "—" if entry.position is None else str(entry.position + 1)
        # Text, not str: a border title is read as markup, and titles may hold "[...]"
        self.border_title = safe_line(f"#{position} · {entry.title or 'untitled'}")
        self.border_subtitle = safe_line(entry.chunk_id)

    def compose(self) -> ComposeResult:
        yield Static(support_label(self.entry), classes="chunk-badge", markup=False)
        yield Static(safe_text(self.entry.text), classes="chunk-text", markup=False)


class QueryScreen(BaseScreen):
    """One query and its pool. Escape goes back; n / p walk the list it was opened from."""

    BINDINGS = [
        Binding("escape", "go_back", "Back"),
        Binding("o", "jump_to_oracle", "Oracle"),
        # n is New run on every screen; [ ] step through a list (Calibration, the Inspector)
        Binding("right_square_bracket", "next_query", "Next", key_display="]"),
        Binding("left_square_bracket", "previous_query", "Previous", key_display="["),
    ]

    PALETTE = (
        PaletteCommand("query: jump to oracle", "Scroll the query's pool to its oracle chunk",
                       "jump_to_oracle"),
        PaletteCommand("query: next", "Show the next query of the list", "next_query"),
        PaletteCommand("query: previous", "Show the previous query of the list",
                       "previous_query"),
    )
    PALETTE_AFTER = "show_datasets"  # with the datasets screen's, which opens it

    @dataclass
    class Loaded(Message):
        detail: QueryDetail

    @dataclass
    class Failed(Message):
        error: str

    def __init__(self, dataset: str, query_id: str, query_ids: list[str] | None = None) -> None:
        super().__init__()
        self.dataset = dataset
        self.query_id = query_id
        self.query_ids = query_ids or [query_id]
        self.detail: QueryDetail | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="query-body"):
            yield Static("Loading…", id="query-text", markup=False)
            yield Static("", id="query-meta", markup=False)
            yield Static("", id="query-answers", markup=False)
            yield Static("", id="query-reference", markup=False)
            yield Static("", id="pool-heading", markup=False)
            yield Vertical(id="pool")
        yield Footer()

    def on_mount(self) -> None:
        self._load()

    def _load(self) -> None:
        store = self.store
        if store is None:
            self.notify("The workspace is not open.", severity="error")
            return
        self.sub_title = f"{self.dataset} · {self.query_id}"
        self.load_query(store, self.dataset, self.query_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="query", name="load query")
    def load_query(self, store, dataset: str, query_id: str) -> None:
        try:
            self.post_message(self.Loaded(get_query(store, dataset, query_id)))
        except Exception as exc:  # DatasetNotFound, LookupError, sqlite errors
            self.post_message(self.Failed(f"{dataset} / {query_id}: {exc}"))
        finally:
            store.close()

    async def on_query_screen_loaded(self, message: Loaded) -> None:
        detail = message.detail
        if detail.query_id != self.query_id:
            return  # an older query's answer after n / p
        self.detail = detail
        self.query_one("#query-text", Static).update(safe_text(detail.text, style="bold"))
        index = self.query_ids.index(detail.query_id) if detail.query_id in self.query_ids else 0
        self.query_one("#query-meta", Static).update(safe_line(
            f"{detail.query_id} · language {detail.language or '—'} · source "
            f"{detail.source or '—'} · {detail.dataset} · query {index + 1} of "
            f"{len(self.query_ids)} in the list"))
        answers = Text("Gold answers: ", style="bold")
        answers.append(visible(" | ".join(detail.answers) if detail.answers else "(none)"),
                       style="not bold")
        self.query_one("#query-answers", Static).update(answers)
        reference = self.query_one("#query-reference", Static)
        reference.display = bool(detail.reference_answer)
        if detail.reference_answer:
            ref = Text("Reference answer: ", style="bold")
            ref.append(visible(detail.reference_answer), style="not bold")
            reference.update(ref)
        oracles = sum(e.is_oracle for e in detail.pool)
        supporting = sum(bool(e.support) for e in detail.pool)
        self.query_one("#pool-heading", Static).update(
            f"Pool: {len(detail.pool)} chunks · {oracles} oracle · "
            f"{supporting - oracles} other supporting"
            if detail.pool else "Pool: this query has no pool entries.")
        pool = self.query_one("#pool", Vertical)
        await pool.remove_children()
        await pool.mount_all(ChunkCard(entry) for entry in detail.pool)
        self.query_one("#query-body", VerticalScroll).scroll_home(animate=False)
        self.query_one("#query-body", VerticalScroll).focus()

    def on_query_screen_failed(self, message: Failed) -> None:
        self.query_one("#query-text", Static).update(f"Could not load the query: {message.error}")
        self.notify(message.error, title="Could not load the query", severity="error",
                    markup=False, timeout=10)

    def action_go_back(self) -> None:
        self.app.pop_screen()

    def action_jump_to_oracle(self) -> None:
        cards = self.query(".chunk.oracle")
        if cards:
            cards.first().focus()
        else:
            self.notify("This query's pool has no oracle chunk.", timeout=3)

    def _step(self, delta: int) -> None:
        if self.query_id not in self.query_ids:
            return
        index = self.query_ids.index(self.query_id) + delta
        if not 0 <= index < len(self.query_ids):
            self.notify("No more queries loaded in that direction.", timeout=2)
            return
        self.query_id = self.query_ids[index]
        self._load()

    def action_next_query(self) -> None:
        self._step(+1)

    def action_previous_query(self) -> None:
        self._step(-1)
