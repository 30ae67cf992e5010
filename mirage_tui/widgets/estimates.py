"""How a number with its 95% CI and n is written on screen ("Statistics everywhere").

Estimates arrive as the report's JSON dicts (``{"value", "lo", "hi", "n"}``); the helpers here
only format them, they compute nothing.
"""

from __future__ import annotations

from engine.results.records import parse_retrieved
from mirage_tui.durations import duration

__all__ = ["duration", "fraction_cell", "pct_cell", "setting_label"]


def pct_cell(est: dict | None) -> str:
    """``41% [35–47] n=120``; ``– n=0`` without a value."""
    if not est or est.get("value") is None:
        return f"– n={(est or {}).get('n', 0)}"
    text = f"{100 * est['value']:.0f}%"
    if est.get("lo") is not None and est.get("hi") is not None:
        text += f" [{100 * est['lo']:.0f}–{100 * est['hi']:.0f}]"
    return f"{text} n={est['n']}"


def fraction_cell(est: dict | None) -> str:
    """``0.32 [0.21, 0.44] n=20``; ``– n=0`` without a value."""
    if not est or est.get("value") is None:
        return f"– n={(est or {}).get('n', 0)}"
    text = f"{est['value']:.2f}"
    if est.get("lo") is not None and est.get("hi") is not None:
        text += f" [{est['lo']:.2f}, {est['hi']:.2f}]"
    return f"{text} n={est['n']}"


def setting_label(setting: str) -> str:
    """A stored setting as people read it: ``retrieved@3 minilm-l6-v2`` for
    ``retrieved@3:minilm-l6-v2#1f0c2a9e`` (the hash tells runs apart, not people)."""
    retrieved = parse_retrieved(setting)
    if retrieved is None:
        return setting
    k, label = retrieved
    return f"retrieved@{k}" + (f" {label.rsplit('#', 1)[0]}" if label else "")
