"""A pairwise win-fraction heatmap (FastChat's arena heatmap, in cells of a terminal).

Rows and columns are systems in leaderboard order. Each row is labelled with its number and
its system's name (fitted by :func:`engine.text_fit.labels_apart`: what differs kept, what
all share said once below), each column with the number of its row (names are too long for
6-cell column headers); where the width leaves no room for names beside the grid (12 systems
at 80 columns), the rows keep their numbers and the names follow as a legend.

Cell (i, j) is the share of i's battles against j that i won, ties counting half; ``·``
where they never met. Each cell's background
comes from a red → grey → blue scale and its text colour is picked for contrast against that
background, so it reads the same in light and dark themes. ``show_counts`` swaps the fractions
for the number of battles behind them.
"""

from __future__ import annotations

from rich.color import Color
from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from engine.text_fit import cell_len, labels_apart
from engine.units import fmt_value

CELL = 6
LEAST_NAME = 10
"""Cells a row's name needs beside the grid; with less room the names go below, a legend."""
LOW = (178, 34, 34)      # the row system lost every battle
MID = (136, 136, 136)    # even
HIGH = (33, 102, 172)    # the row system won every battle


def fraction_colour(fraction: float) -> tuple[int, int, int]:
    """The cell colour of a win fraction in [0, 1]: red, through grey at 0.5, to blue."""
    f = min(1.0, max(0.0, fraction))
    start, end, t = (LOW, MID, f / 0.5) if f <= 0.5 else (MID, HIGH, (f - 0.5) / 0.5)
    return tuple(round(a + (b - a) * t) for a, b in zip(start, end))  # type: ignore[return-value]


def _contrast(rgb: tuple[int, int, int]) -> str:
    r, g, b = rgb
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "black" if luminance > 140 else "white"


def _cell_style(fraction: float) -> Style:
    rgb = fraction_colour(fraction)
    return Style(bgcolor=Color.from_rgb(*rgb), color=_contrast(rgb))


def heatmap_text(names: list[str], fractions: list[list[float | None]],
                 counts: list[list[int]], *, show_counts: bool = False,
                 width: int | None = None) -> Text:
    """The grid, the colour scale and the legend as one Text (rows in ``names`` order)."""
    n = len(names)
    number_w = len(str(n)) + 1
    room = (width - number_w - 2 - n * CELL) if width is not None else 10**6
    beside = room >= LEAST_NAME
    apart = labels_apart(names, room if beside else max(8, width - number_w - 1))
    shown = [apart.shown[" ".join(name.split())] for name in names]
    label_w = number_w + (1 + max(cell_len(x) for x in shown) if beside else 0)

    def label(i: int) -> str:
        text = f"{i + 1:>{number_w}}" + (f" {shown[i]}" if beside else "")
        return text + " " * (label_w - cell_len(text))

    out = Text()
    out.append(" " * (label_w + 1))
    for j in range(n):
        out.append(f"{j + 1:^{CELL}}", style="bold")
    out.append("\n")
    for i in range(n):
        out.append(label(i) + " ", style="bold")
        for j in range(n):
            if i == j:
                out.append(f"{'—':^{CELL}}", style="dim")
                continue
            fraction = fractions[i][j]
            if fraction is None:
                out.append(f"{'·':^{CELL}}", style="dim")
                continue
            value = str(counts[i][j]) if show_counts else fmt_value(fraction)   # percent
            out.append(f"{value:^{CELL}}", style=_cell_style(fraction))
        out.append("\n")
    out.append("scale ", style="dim")
    for step in range(11):
        out.append("  ", style=Style(bgcolor=Color.from_rgb(*fraction_colour(step / 10))))
    out.append(" 0 lost all · 50 even · 100 won all\n", style="dim")
    what = ("battles between row and column" if show_counts else
            "share of the row's battles against the column it won (ties ½)")
    out.append(f"cell: {what}; · never met; c toggles counts\n", style="dim")
    # the names by what differs, what they all share said once (names cut at the
    # edge would read the same); below as a legend when they have no room beside the rows
    if not beside:
        for i in range(n):
            out.append(f"{i + 1:>{number_w}} {shown[i]}\n")
    if apart.caption():
        out.append(f"systems {apart.caption()}\n", style="dim")
    out.rstrip()
    return out


class WinFractionHeatmap(Widget):
    """The heatmap of a :class:`engine.arena.types.Ratings`, rows in leaderboard order."""

    DEFAULT_CSS = """
    WinFractionHeatmap { height: auto; width: 1fr; padding: 0 1; }
    """

    show_counts: reactive[bool] = reactive(False, layout=True)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.names: list[str] = []
        self.fractions: list[list[float | None]] = []
        self.counts: list[list[int]] = []

    def set_ratings(self, ratings) -> None:
        """Show ``ratings`` (None: nothing), rows in its leaderboard order."""
        if ratings is None:
            self.names, self.fractions, self.counts = [], [], []
        else:
            index = {name: k for k, name in enumerate(ratings.order)}
            names = [r.system for r in ratings.systems if r.system in index]
            names += [s for s in ratings.order if s not in names]
            idx = [index[s] for s in names]
            self.names = names
            self.fractions = [[ratings.win_fraction[a][b] for b in idx] for a in idx]
            self.counts = [[ratings.battle_counts[a][b] for b in idx] for a in idx]
        self.refresh(layout=True)

    def text(self, width: int | None = None) -> Text:
        if not self.names:
            return Text("No battles to draw.", style="dim")
        width = width or self.size.width or None
        return heatmap_text(self.names, self.fractions, self.counts,
                            show_counts=self.show_counts, width=width)

    def render(self) -> Text:
        return self.text()

    def get_content_height(self, container, viewport, width: int) -> int:
        # its lines as drawn at this width, a long one wrapped (the legend's last line was
        # left out when the key line above it wrapped)
        return len(self.text(width).wrap(self.app.console, width)) if self.names and width \
            else len(self.text().split()) if self.names else 1
