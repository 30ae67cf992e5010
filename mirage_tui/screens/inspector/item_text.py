"""The item detail's words: a setting's prompt, response, reasoning and scores
(:func:`setting_text`), the judge's verdicts and people's (:func:`verdict_lines`, folded under
:func:`verdicts_title`) and the pool's heading (:func:`pool_heading`). Rich text only: the
widgets that show it are :mod:`.detail`'s."""

from __future__ import annotations

from rich.text import Text

from engine.units import fmt_value
from engine.text_safety import visible
from mirage_tui.widgets.safe_text import safe_text

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


