"""Untrusted text (dataset text, model replies, names) as the TUI shows it.

Two rules, in one place: it is never parsed as markup (a ``rich.text.Text``, not a str: a
question holding ``[bold]`` or ``[link=...]`` stays as written), and control characters are
made visible by :func:`engine.text_safety.visible` (an escape sequence in a passage must not
reach the terminal: Rich keeps ESC in a Text, and Textual writes it out as it is).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text

from engine.text_fit import elide_apart, elide_middle, elide_words
from engine.text_safety import visible, visible_line


def safe_text(value: object, style: str = "") -> Text:
    """Untrusted text as a Text: no markup, control characters visible, newlines kept."""
    return Text(visible("" if value is None else value), style=style)


def safe_line(value: object, style: str = "") -> Text:
    """:func:`safe_text` on one line (newlines and tabs written ``\\n``, ``\\t``): table cells."""
    return Text(visible_line("" if value is None else value), style=style)


def _squeezed(value: object) -> str:
    """One line of ``value``, its runs of spaces one space: what a table cell stands for."""
    return " ".join(visible_line("" if value is None else value).split())


class ElidedText(Text):
    """A table cell of untrusted text fitted to a width, remembering the ``full`` text it
    stands for and whether it is ``prose`` (a test checks that what is shown is the whole or
    a marked elision of it, and that ids elided alike were alike)."""

    full: str = ""
    prose: bool = False


def elided_cell(value: object, width: int, *, prose: bool = False, shown: str | None = None,
                style: str = "", justify=None) -> ElidedText:
    """:func:`safe_line` fitted to ``width`` cells (:mod:`engine.text_fit`): an id, a path or a
    name keeps its head and its distinguishing tail (``de/demo…-01``); ``prose`` (a question,
    a reply) keeps whole words. ``shown``: the elision already chosen (:func:`elided_column`).
    The full text is one Enter away on every screen."""
    full = _squeezed(value)
    cell = ElidedText(shown if shown is not None else
                      (elide_words if prose else elide_middle)(full, max(1, width)),
                      style=style, justify=justify)
    cell.full, cell.prose = full, prose
    return cell


def elided_column(values: list, width: int) -> list[ElidedText]:
    """A column of ids or names in ``width`` cells, elided with one cut that keeps them
    apart (:func:`engine.text_fit.elide_apart`): ``fake-a…ge@1`` / ``fake-b…ge@1``."""
    full = [_squeezed(v) for v in values]
    shown = elide_apart(full, max(1, width))
    return [elided_cell(v, width, shown=shown[v]) for v in full]


def apart_width(values: list, least: int = 8) -> int:
    """The narrowest width, ``least`` or more, at which :func:`elided_column` keeps ``values``
    apart (their full width when no width does): what a column of names may narrow to."""
    full = sorted({_squeezed(v) for v in values})
    widest = max([cell_len(v) for v in full] + [least])
    for width in range(least, widest):
        if len(set(elide_apart(full, width).values())) == len(full):
            return width
    return widest
