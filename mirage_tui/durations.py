"""How the CLI and the screens write a duration (standard library only, so that the CLI
imports nothing heavy for it)."""

from __future__ import annotations


def duration(seconds: float | None) -> str:
    """``45s``, ``3m05s``, ``1h02m``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
