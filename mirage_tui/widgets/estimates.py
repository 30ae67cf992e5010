"""How a number with its 95% CI and n is written on screen ("Statistics everywhere").

Estimates arrive as the report's JSON dicts (``{"value", "lo", "hi", "n"}``); the helpers here
only format them, they compute nothing, in the one unit of :mod:`engine.results.units`
(``30.0 [10.0, 60.0] n=20``: percent, one decimal), as ``mirage-tui report`` does.
"""

from __future__ import annotations

from engine.results.records import parse_retrieved
from engine.results.units import fmt_estimate
from mirage_tui.durations import duration

__all__ = ["duration", "estimate_cell", "setting_label"]


def estimate_cell(est: dict | None) -> str:
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
