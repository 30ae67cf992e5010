""""Did you mean": the nearest known name to a misspelt one (difflib), for one-line errors;
which names a typed text picks (``picked``: the rule ``--generator`` follows).

The rule is :mod:`models.suggest` (the bottom layer, so model names get it too)."""

from __future__ import annotations

from models.suggest import close_to, did_you_mean, pick_one, picked

__all__ = ["close_to", "did_you_mean", "pick_one", "picked"]
