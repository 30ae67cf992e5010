"""Untrusted text (dataset text, model replies, names) as the TUI shows it.

Two rules, in one place: it is never parsed as markup (a ``rich.text.Text``, not a str: a
question holding ``[bold]`` or ``[link=...]`` stays as written), and control characters are
made visible by :func:`engine.text_safety.visible` (an escape sequence in a passage must not
reach the terminal: Rich keeps ESC in a Text, and Textual writes it out as it is).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text

from engine.text_fit import elide_apart, elide_middle, elide_words, labels_apart
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
    reduced: str | None = None   # a system label less the words its column shares


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


def system_column(values: list, width: int, among: list | None = None) -> list[ElidedText]:
    """A column of system labels (or settings) in ``width`` cells, kept apart by the part that
    differs (:func:`engine.text_fit.labels_apart`): the words they all share left out (said
    once: :func:`system_caption`), what differs whole where it fits. ``among``: all the labels
    the table may show (a page of a longer list), so that a label reads the same on every
    page and apart from those of other pages."""
    full = [_squeezed(v) for v in values]
    apart = labels_apart(full + [_squeezed(v) for v in among or []], max(1, width))
    cells = [elided_cell(v, width, shown=apart.shown[v]) for v in full]
    for cell in cells:
        cell.reduced = apart.reduced[cell.full]
    return cells


def system_caption(values: list, width: int) -> str:
    """What :func:`system_column` left out of every row of ``values`` at ``width``, said once
    (``all on http://127.0.0.1:8082/v1 · mirage@1``); empty when nothing was."""
    return labels_apart([_squeezed(v) for v in values], max(1, width)).caption()


def whole_width(values: list) -> int:
    """The width at which :func:`system_column` shows ``values`` without ``…``: their widest
    label less the words they all share, abbreviated."""
    full = [_squeezed(v) for v in values]
    return max([cell_len(v) for v in labels_apart(full, 1).reduced.values()] + [1])


class SystemColumn:
    """The cells of a column of system labels for a table that picks its width
    (:class:`~mirage_tui.widgets.tables.Elastic`): called with the width, it remembers it
    for :meth:`caption`."""

    def __init__(self, values: list) -> None:
        self.values = list(values)
        self.width: int | None = None

    def __call__(self, width: int) -> list[ElidedText]:
        self.width = width
        return system_column(self.values, width)

    def caption(self) -> str:
        """What the column left out of every row at its last width (:func:`system_caption`)."""
        return "" if self.width is None else system_caption(self.values, self.width)


def apart_width(values: list, least: int = 8) -> int:
    """The narrowest width, ``least`` or more, at which :func:`system_column` keeps ``values``
    apart (their full width when no width does): what a column of names may narrow to."""
    full = sorted({_squeezed(v) for v in values})
    widest = max([cell_len(v) for v in full] + [least])
    for width in range(least, widest):
        if len(set(labels_apart(full, width).shown.values())) == len(full):
            return width
    return widest


def generator_names(rows, width: int) -> tuple[dict[str, str], str]:
    """Each generator of these runs (``RunRow``) as a table of runs names it in ``width``
    cells, and what was left out of all, said once (:func:`system_caption`): their full
    names where every run's list fits, else less the words they all share (an endpoint's
    URL), abbreviated (:func:`engine.text_fit.labels_apart`)."""
    names = sorted({_squeezed(g) for r in rows for g in r.generators})
    if all(cell_len(", ".join(r.generators)) <= width for r in rows):
        return {n: n for n in names}, ""
    apart = labels_apart(names, 1)
    return apart.reduced, apart.caption()


def generators_cell(generators, names: dict[str, str], width: int) -> ElidedText:
    """A run's generators, named as :func:`generator_names` said, in ``width`` cells."""
    full = ", ".join(_squeezed(g) for g in generators)
    reduced = ", ".join(names.get(_squeezed(g), _squeezed(g)) for g in generators)
    cell = elided_cell(full, width, shown=elide_middle(reduced, max(1, width)))
    if reduced != full:
        cell.reduced = reduced
    return cell
