""""Did you mean": the nearest known name to a misspelt one (difflib), for one-line errors."""

from __future__ import annotations

import difflib
from typing import Iterable


def close_to(word: str, choices: Iterable[str], n: int = 1) -> list[str]:
    """The known names nearest to ``word`` (at most ``n``; none when nothing is close)."""
    choices = [c for c in dict.fromkeys(choices) if c]
    lowered = {c.lower(): c for c in choices}
    found = difflib.get_close_matches(word.lower(), list(lowered), n=n, cutoff=0.6)
    return [lowered[f] for f in found]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the nearest known name, else ``""``."""
    near = close_to(word, choices)
    return f"; did you mean {near[0]!r}?" if near else ""
