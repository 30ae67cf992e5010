"""The inspector's item detail: the query, its gold answers, the adaptability pattern, the
judge's verdicts, the pool with the oracle marked ★ and every retriever's rank, and per
setting the exact prompt sent, the response (a reasoning model's thinking folded under it, with
its token count: ``r`` unfolds it) and every score, one column per system shown."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Collapsible, Static

from engine.units import fmt_value
from engine.text_safety import visible
from mirage_tui.widgets.safe_text import safe_line, safe_text

ORACLE_MARK = "★ oracle"


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
    body = Text.assemble(badge, "\n", safe_text(chunk.text))
    card = Static(body, classes=f"pool-chunk {kind}", markup=False)
    position = "—" if chunk.position is None else str(chunk.position + 1)
    card.border_title = safe_line(f"#{position} · {chunk.title or 'untitled'}")
    card.border_subtitle = safe_line(chunk.chunk_id)
    return card


REASONING_KEY = "r"
"""The Inspector's key that unfolds (and folds) every shown item's reasoning."""


def reasoning_lines(text: Text, row, unfolded: bool) -> None:
    """A reasoning model's thinking under its answer: one folded line with its token count
    (``r`` unfolds it), or the whole thinking, dim; nothing for a reply without any."""
    if not (row.reasoning or row.reasoning_tokens or row.thinking_cut):
        return
    tokens = f"{row.reasoning_tokens} token{'s' if row.reasoning_tokens != 1 else ''}"
    if not row.reasoning:
        text.append(f"Reasoning · {tokens} · not returned by the server\n", style="bold")
        return
    text.append(f"{'▾' if unfolded else '▸'} Reasoning · {tokens} · {REASONING_KEY} "
                f"{'folds' if unfolded else 'unfolds'}\n", style="bold")
    if unfolded:
        text.append_text(safe_text(row.reasoning, style="dim"))
        text.append("\n")


def item_facts(row) -> list[str]:
    """The facts under a response: tokens, finish reason, why it was cut, the scorer."""
    cut = ("cut while thinking: no answer came before the token limit" if row.thinking_cut
           else "cut at the token limit" if row.finish_reason == "length" else None)
    return [f for f in (f"{row.prompt_tokens} → {row.completion_tokens} tokens"
                        if row.prompt_tokens is not None else None, row.finish_reason, cut,
                        "truncated context" if row.truncated else None,
                        f"scorer {row.scorer_version}" if row.scorer_version else None) if f]


def setting_text(row, unfolded: bool = False) -> Text:
    """One system's item in one setting as text: the prompt as sent, the response (the
    answer every score reads), the reasoning folded under it, the facts, every score."""
    text = Text()
    if row is None:
        text.append("no item in this setting", style="italic")
        return text
    text.append("Prompt sent\n", style="bold")
    text.append(visible(row.prompt or "(no generation)") + "\n", style="dim")
    text.append("Response\n", style="bold")
    if row.error:
        text.append(f"error: {visible(row.error)}\n", style="bold red")
    if row.thinking_cut and not row.response:
        text.append("(no answer: cut while thinking)\n", style="italic")
    else:
        text.append(visible(row.response if row.response is not None else "—") + "\n")
    reasoning_lines(text, row, unfolded)
    text.append(" · ".join(item_facts(row)) + "\n", style="italic")
    text.append("Scores", style="bold")
    text.append(" (rates in %, counts as numbers)\n", style="dim")
    # the long correct-language variant names (correct_language:fasttext:mirage-tui) run
    # past the column rather than widen it for every score
    width = min(16, max((len(s.metric) for s in row.scores), default=8))
    for score in row.scores:
        text.append(f"{score.metric.ljust(width)}  "
                    f"{fmt_value(score.value, score.metric):>5}  ")
        text.append((score.detail or "") + "\n", style="dim")
    if not row.scores:
        text.append("(no scores)\n", style="italic")
    return text


class SettingPanel(Static):
    """One system's item in one setting (:func:`setting_text`), its reasoning folded until
    :meth:`unfold`."""

    def __init__(self, system: str, row, unfolded: bool = False) -> None:
        super().__init__(setting_text(row, unfolded), classes="setting-panel", markup=False)
        self.row = row
        self.border_title = Text(f"{system} · {row.setting if row else '—'}")

    @property
    def has_reasoning(self) -> bool:
        return bool(self.row is not None and self.row.reasoning)

    def unfold(self, unfolded: bool) -> None:
        self.update(setting_text(self.row, unfolded))


def setting_panel(system: str, row, unfolded: bool = False) -> SettingPanel:
    """One system's item in one setting: the prompt as sent, the response, every score."""
    return SettingPanel(system, row, unfolded)


def order_words(order, system_a: str, system_b: str) -> str:
    """One judged order in words: which answer the judge read first, what it chose, and its
    probabilities in percent ("fake-b shown first, fake-a second: the judge chose fake-b;
    P(first) 81.0%, P(second) 19.0%")."""
    first, second = (system_a, system_b) if order.shown == "ab" else (system_b, system_a)
    chose = ("could not be parsed" if order.label is None else
             "a tie" if order.winner == "tie" else order.winner)
    text = f"{first} shown first, {second} second: the judge chose {chose}"
    if order.probs:
        words = {"A": "first", "B": "second", "tie": "tie"}
        text += "; " + ", ".join(f"P({words.get(k, k)}) {fmt_value(p)}%"
                                 for k, p in order.probs.items())
    return text


def human_lines(text: Text, found: list, flip: bool = False) -> None:
    """People's verdicts on one pair, one line each (``flip``: stored in the other order)."""
    from engine.arena.trust.human_verdicts import LABEL_WORDS

    for h in found:
        label = -h.label if flip else h.label
        text.append(f"\n    {h.annotator} ({(h.created_at or '')[:16]}): ", style="italic")
        text.append(LABEL_WORDS.get(label, str(label)), style="bold italic")
        if h.note:
            text.append(f" · {visible(h.note)}", style="italic")


def verdict_lines(verdicts, systems: list[str], human: dict | None = None) -> Text:
    """The judge's verdicts on this query for battles the shown systems took part in, under
    each the verdicts people entered (``engine.arena.trust.human_verdicts``), then people's verdicts
    on pairs of the shown systems that no arena judged."""
    human = human or {}
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
            text.append("\n    " + order_words(order, v.system_a, v.system_b), style="dim")
        if v.disagreement:
            text.append("\n    the two orders disagreed: stored as a tie", style="dim")
        human_lines(text, human.get((v.system_a, v.system_b), []))
        human_lines(text, human.get((v.system_b, v.system_a), []), flip=True)
        text.append("\n")
    shown = [f"{s} | " for s in systems]
    for (a, b), found in human.items():
        if any(f"{name} | ".startswith(s) for name in (a, b) for s in shown) and \
                not any({v.system_a, v.system_b} == {a, b} for v in verdicts):
            text.append("no arena: ", style="bold")
            text.append(f"{a}  vs  {b}  (no arena judged this pair)")
            human_lines(text, found)
            text.append("\n")
    return text


VERDICTS_KEY = "j"
"""The Inspector's key that unfolds (and folds) the judge's verdicts on the item's query."""


def verdicts_title(verdicts, systems: list[str], human: dict | None = None) -> str:
    """The folded verdicts' one line: how many judge pairs involve the shown systems and how
    many verdicts people entered, and the key that unfolds them."""
    pairs = sum(1 for v in verdicts if any(v.involves(s) for s in systems))
    people = sum(len(found) for found in (human or {}).values())
    parts = [f"{pairs} judge pair{'s' if pairs != 1 else ''}"]
    if people:
        parts.append(f"{people} verdict{'s' if people != 1 else ''} of people's")
    return " · ".join(parts) + f" on this query · {VERDICTS_KEY} unfolds"


def pool_heading(chunks) -> str:
    """The pool counted as the pool (``data show``'s count), and the chunks retrieved from
    outside it named apart, with the settings that used them."""
    if not chunks:
        return "Pool: this query has no pool entries."
    pool = [c for c in chunks if c.in_pool]
    outside = [c for c in chunks if not c.in_pool]
    oracles = sum(c.is_oracle for c in pool)
    text = f"Pool: {len(pool)} chunk{'s' if len(pool) != 1 else ''} · {oracles} oracle (★)"
    if outside:
        used = sorted({s.split(":", 1)[0] for c in outside for s in c.in_context_of})
        text += (f" · retrieved from outside the pool: {len(outside)}, used by "
                 f"{', '.join(used) if used else 'no setting'}")
    return text


class SettingRow(Horizontal):
    """One setting's panels, one per system shown."""

    def __init__(self, setting: str, *panels: Static) -> None:
        super().__init__(*panels, classes="setting-row")
        self.setting = setting


class ItemDetail(VerticalScroll):
    """One query's items (``engine.results.inspector.item_detail``, one per system) in full."""

    DEFAULT_CSS = """
    ItemDetail #d-query { margin-top: 1; padding: 0 1; background: $boost; text-style: bold; }
    ItemDetail #d-meta { color: $text-muted; padding: 0 1; }
    ItemDetail .d-block { padding: 0 1; margin-top: 1; }
    ItemDetail .d-heading { margin-top: 1; padding: 0 1; text-style: bold;
        color: $text-primary; }
    ItemDetail #d-pool, ItemDetail #d-settings { height: auto; }
    ItemDetail .pool-chunk { height: auto; padding: 0 1; border: round $primary 40%; }
    ItemDetail .pool-chunk.oracle { border: round $accent; }
    ItemDetail .setting-row { height: auto; }
    ItemDetail .setting-panel { width: 1fr; height: auto; padding: 0 1;
        border: round $secondary 60%; }
    """

    reasoning_unfolded = False
    """Whether the reasoning under each answer is shown whole (``r``), for every item opened
    until it is folded again."""

    def compose(self) -> ComposeResult:
        # the answers first, right under the question; the judge's pairs (66 on a query of a
        # 12-contestant arena, pages long) folded under one counted line
        yield Static("", id="d-query", markup=False)
        yield Static("", id="d-meta", markup=False)
        yield Static("", id="d-answers", classes="d-block", markup=False)
        yield Vertical(id="d-settings")
        yield Static("", id="d-adapt", classes="d-block", markup=False)
        yield Collapsible(Static("", id="d-verdicts", markup=False), id="d-verdicts-fold",
                          title="Judge verdicts", collapsed=True)
        yield Static("", id="d-pool-heading", classes="d-heading", markup=False)
        yield Vertical(id="d-pool")

    def show_loading(self) -> None:
        self.query_one("#d-query", Static).update("Loading the item…")

    def show_error(self, error: str) -> None:
        self.query_one("#d-query", Static).update(f"Could not load the item: {error}")

    async def show_items(self, details: list, verdicts: list, human: dict | None = None) -> None:
        """Draw ``details`` (the first system's, then the second's) and the verdicts on
        this query, then scroll to the top and take the focus."""
        first = details[0]
        systems = [d.system for d in details]
        self.query_one("#d-query", Static).update(safe_text(first.query, style="bold"))
        self.query_one("#d-meta", Static).update(
            f"{first.query_id} · language {first.language or '—'} · source "
            f"{first.source or '—'} · run {first.run} · " + "  vs  ".join(systems))
        answers = Text("Gold answers: ", style="bold")
        answers.append(visible(" | ".join(first.answers) if first.answers else "(none)"),
                       style="not bold")
        if first.reference_answer:
            answers.append("\nReference answer: ", style="bold")
            answers.append(visible(first.reference_answer), style="not bold")
        self.query_one("#d-answers", Static).update(answers)
        adapt = Text()
        for d in details:
            for mixed, a in d.adaptability.items():
                adapt.append(f"{d.system} · {mixed}: ", style="bold")
                adapt.append(f"{a['pattern']} · {a['label']}\n")
        self.query_one("#d-adapt", Static).update(adapt or Text("No adaptability pattern: "
                                                                "base, oracle or mixed missing."))
        lines = verdict_lines(verdicts, systems, human)
        fold = self.query_one("#d-verdicts-fold", Collapsible)
        fold.display = bool(lines)
        fold.title = verdicts_title(verdicts, systems, human)
        if lines:
            self.query_one("#d-verdicts", Static).update(
                Text.assemble(("Judge verdicts on this query\n", "bold"), lines))
        self.query_one("#d-pool-heading", Static).update(pool_heading(first.pool))
        shown = {s.setting for d in details for s in d.settings}
        pool = self.query_one("#d-pool", Vertical)
        await pool.remove_children()
        await pool.mount_all([pool_card(c, shown) for c in first.pool])
        blocks = self.query_one("#d-settings", Vertical)
        await blocks.remove_children()
        order = list(dict.fromkeys(s.setting for d in details for s in d.settings))
        widgets = []
        for setting in order:
            widgets.append(Static(Text(f"Setting {setting}"), classes="d-heading"))
            panels = [setting_panel(d.system, next((s for s in d.settings
                                                    if s.setting == setting), None),
                                    self.reasoning_unfolded)
                      for d in details]
            widgets.append(SettingRow(setting, *panels))
        await blocks.mount_all(widgets)
        self.scroll_home(animate=False)
        self.focus()

    def toggle_reasoning(self) -> bool:
        """Unfold the reasoning under every answer shown, or fold it again; False (nothing
        changed) when no answer shown has any."""
        panels = list(self.query(SettingPanel))
        if not any(p.has_reasoning for p in panels):
            return False
        self.reasoning_unfolded = not self.reasoning_unfolded
        for panel in panels:
            panel.unfold(self.reasoning_unfolded)
        return True

    def setting_in_view(self) -> str | None:
        """The setting whose panels are most in view: the row showing the most lines (the
        topmost of equals), so the tail of one setting above another that fills the screen
        does not count; None when no setting row is in view."""
        view = self.region
        seen = [(row.region.intersection(view).height, -i, row.setting)
                for i, row in enumerate(self.query(SettingRow))]
        best = max(seen, default=(0, 0, None))
        return best[2] if best[0] > 0 else None

    def toggle_verdicts(self) -> bool:
        """Unfold the judge's verdicts on this query, or fold them; False when there are
        none."""
        fold = self.query_one("#d-verdicts-fold", Collapsible)
        if not fold.display:
            return False
        fold.collapsed = not fold.collapsed
        if not fold.collapsed:
            self.scroll_to_widget(fold, top=True, animate=False)
        return True

    def jump_to_oracle(self) -> None:
        cards = self.query(".pool-chunk.oracle")
        if cards:
            self.scroll_to_widget(cards.first(), top=True, animate=False)

    def jump_to_settings(self) -> None:
        self.scroll_to_widget(self.query_one("#d-settings"), top=True, animate=False)
