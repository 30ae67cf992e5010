""""Did you mean": the nearest known name to a misspelt one, for one-line errors; and which
names a typed text picks (:func:`picked`).

It lives at the bottom layer so that model names (``models/``) get the same hint as every
other name (:mod:`engine.suggest` re-exports it). A name is compared whole and by its leading
parts (``smollm2`` of ``smollm2-135m-instruct``: the prefix ``--generator`` accepts), so a
short typo of a long name is still close: difflib's ratio of ``smolm2`` against the whole
``smollm2-135m-instruct`` is 0.44, against ``smollm2`` 0.92.
"""

from __future__ import annotations

import difflib
import re
from typing import Callable, Iterable

CUTOFF = 0.6
"""difflib's default: below it a name is not offered."""

_PARTS = re.compile(r"[-_./:@ |#]")


def _forms(name: str) -> list[str]:
    """``name`` lowered, and each of its leading parts up to a separator."""
    lowered = name.lower()
    return [lowered] + [lowered[:m.start()] for m in _PARTS.finditer(lowered) if m.start()]


def close_to(word: str, choices: Iterable[str], n: int = 1) -> list[str]:
    """The known names nearest to ``word`` (at most ``n``, best first; none when nothing is
    close), each scored by its closest form (:func:`_forms`)."""
    wanted = word.lower()
    scored = []
    for choice in dict.fromkeys(c for c in choices if c):
        matcher = difflib.SequenceMatcher(b=wanted)
        ratios = []
        for form in _forms(choice):
            matcher.set_seq1(form)
            ratios.append(matcher.ratio() if matcher.real_quick_ratio() >= CUTOFF
                          and matcher.quick_ratio() >= CUTOFF else 0.0)
        if max(ratios) >= CUTOFF:       # ties go to the name closer as a whole
            scored.append((-max(ratios), -ratios[0], choice))
    return [choice for *_, choice in sorted(scored)[:n]]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the nearest known name, else ``""``."""
    near = close_to(word, choices)
    return f"; did you mean {near[0]!r}?" if near else ""


def picked(wanted: str, names: Iterable[str],
           part: Callable[[str], str] = lambda name: name) -> list[str]:
    """The names ``wanted`` picks, as ``--generator`` picks a model: the name itself, else
    the name in another case, else those whose ``part`` (e.g. a system's generator) is it,
    else those that contain it (case ignored). The first rule that picks any decides; more
    than one name picked is for the caller to refuse as ambiguous."""
    names = list(dict.fromkeys(names))
    lowered = wanted.lower()
    for rule in (lambda n: n == wanted, lambda n: n.lower() == lowered,
                 lambda n: part(n).lower() == lowered, lambda n: lowered in n.lower()):
        found = [n for n in names if rule(n)]
        if found:
            return found
    return []


def pick_one(wanted: str, names: Iterable[str], *, what: str, where: str,
             error: type[Exception] = ValueError,
             part: Callable[[str], str] = lambda name: name) -> str | None:
    """The one name ``wanted`` picks (:func:`picked`), None when it picks none; ``error``
    naming the matches when it picks several (``'fake' matches 2 systems of run 'alpha'
    (…); say which``)."""
    found = picked(wanted, names, part)
    if len(found) > 1:
        raise error(f"{wanted!r} matches {len(found)} {what} of {where} "
                    f"({', '.join(found)}); say which")
    return found[0] if found else None
