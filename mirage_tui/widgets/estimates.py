"""How a number with its 95% CI and n is written on screen ("Statistics everywhere").

Estimates arrive as the report's :class:`~engine.stats.Estimate` cells; the helpers here
only format them, they compute nothing, in the one unit of :mod:`engine.units`
(``30.0 [10.0, 60.0] n=20``: percent, one decimal), as ``mirage-tui report`` does. And the
time estimates' lines (New run's, the judge dialog's), from the one estimator's figures
(:mod:`engine.runs.estimates`): speeds and where they come from, the machine's load they are
corrected for, the model's load, requests in flight.
"""

from __future__ import annotations

from engine.results.records import parse_retrieved
from engine.stats import Estimate
from engine.units import fmt_estimate
from engine.runs.estimates import in_flight_words
from mirage_tui.durations import duration

__all__ = ["duration", "estimate_cell", "estimate_line", "judging_line", "setting_label"]


def estimate_cell(est: Estimate | None) -> str:
    """``41.0 [35.2, 47.1] n=120``; ``– n=0`` without a value."""
    return fmt_estimate(est)


def setting_label(setting: str) -> str:
    """A stored setting as people read it: ``retrieved@3 minilm-l6-v2`` for
    ``retrieved@3:minilm-l6-v2#1f0c2a9e`` (the hash tells runs apart, not people)."""
    retrieved = parse_retrieved(setting)
    if retrieved is None:
        return setting
    k, label = retrieved
    return f"retrieved@{k}" + (f" {label.rsplit('#', 1)[0]}" if label else "")


# --------------------------------------------------------------------------- time estimates

def estimate_line(guess: dict) -> str:
    """``Estimate: about 4m10s for 15 items (smollm2 62 prompt / 9 generated tok/s, model
    check …)``: the time for the items left and the speeds behind it, with where they come
    from (a model check, this workspace's runs, or defaults)."""
    speeds = "; ".join(
        f"{name} {g['prompt_tps']:.0f} prompt / {g['gen_tps']:.0f} generated tok/s, "
        f"~{g['answer_tokens']:.0f} tokens an answer, {_speed_source(g['speed'])}"
        f"{_load_note(g)}{_load(g)}{_in_flight(g)}"
        for name, g in guess["generators"].items() if g["items"])
    items, cached = guess["items"], guess.get("cached", 0)
    free = (f", {cached} more likely in the generation cache (no model time)" if cached
            else "")
    return (f"Estimate: about {duration(guess['seconds'])} for {items} item"
            f"{'s' if items != 1 else ''} left{free}" + (f" ({speeds})" if speeds else ""))


def _speed_source(source: str) -> str:
    if source.startswith("measured judging"):
        return "measured here judging"
    if source.startswith("measured"):
        return "measured here"
    if source.startswith("model check"):
        return source.split(" · ")[0].replace("model check", "model check of", 1)
    return source        # "assumed …", with the assumption


def judging_line(guess: dict) -> str:
    """``Estimate: about 2m10s for 36 battles (72 judge calls) on 6 queries, at 9 generated
    tok/s (model check …)``; an offline judge's battles need no LLM call."""
    if guess.get("offline"):
        # what the judge compares is the judge's own line (the dialog's, --judge's help)
        return (f"{guess['battles']} battles on {guess['queries']} queries, no LLM call: "
                "seconds")
    calls = (f" ({guess['calls']} judge calls: both orders)"
             if guess["calls"] != guess["battles"] else "")
    return (f"Estimate: about {duration(guess['seconds'])} for {guess['battles']} battles"
            f"{calls} on {guess['queries']} queries, at {guess['prompt_tps']:.0f} prompt / "
            f"{guess['gen_tps']:.0f} generated tok/s ({guess['speed']}){_load_note(guess)}"
            f"{_load(guess)}{_in_flight(guess)}")


def _load_note(figures: dict) -> str:
    """``, machine load now 1.0 other busy core of 2 (1-second probe): ×1.50 against 0.0
    when measured`` (the speeds shown are corrected for it); empty when unknown."""
    note = figures.get("load_note")
    return f", {note}" if note else ""


def _load(figures: dict) -> str:
    """``, load 3s`` (the model's load, counted in the estimate); empty without one."""
    return f", load {duration(figures['load_seconds'])}" if figures["load_seconds"] else ""


def _in_flight(figures: dict) -> str:
    """``, 4 in flight, ×1 (queued: …)`` from an estimate's figures; empty for one at a time."""
    words = in_flight_words(figures["in_flight"], figures["parallel"], figures["backend"])
    return f", {words}" if words else ""
