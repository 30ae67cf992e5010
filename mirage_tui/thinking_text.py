"""The plan's thinking notes in words (:func:`engine.runs.plan.thinking_notes` computes them):
who thinks, with what budget, what the stored replies measured, and the warning; the lines the
CLI's dry run and New run's plan show alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

from models.thinking import ThinkingSwitch

if TYPE_CHECKING:
    from engine.runs.plan import ThinkingNote


def thinking_lines(notes: list[ThinkingNote]) -> list[str]:
    """The plan's thinking lines (none for an empty list): a header line, then one per
    system and its warning."""
    if not notes:
        return []
    out = ["thinking:"]
    for n in notes:
        state = {True: "thinks", False: "does not think",
                 None: "thinking not known until its first replies"}[n.thinks]
        words = [f"{n.system}: {state}", f"budget {n.max_tokens} tokens"]
        if n.mode != "auto":
            words.insert(1, f"mode {n.mode} ({_switch_words(n.switch)})")
        if n.measured_thinking:
            words.append(f"{n.measured_thinking} of {n.measured} stored replies thought, "
                         f"~{n.mean_reasoning_tokens or 0:.0f} reasoning tokens on average"
                         + (f", {n.cut_while_thinking} cut while thinking"
                            if n.cut_while_thinking else ""))
        out.append("  " + "; ".join(words))
        if n.warning:
            out.append(f"  warning: {n.warning}")
    return out


def _switch_words(switch: str | None) -> str:
    return ThinkingSwitch(switch, None).describe() if switch else "switch not read"
