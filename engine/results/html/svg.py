"""The report page's charts as inline SVG, generated here (no plotting library, no external
reference): grouped bars with 95% CI whiskers, a forest plot, a heatmap and a Δ chart.

Every function returns one ``<svg>`` element as text. Colours are CSS classes (``s0``…``s7``
for series, ``axis``, ``grid``, ``label``, ``cell``) whose values the page's stylesheet sets,
so the same SVG follows the page into dark mode (``prefers-color-scheme``) and into print.
Every label is escaped with :func:`engine.text_safety.html_text` (system names and metric
names are text from a dataset or a user). Each chart carries ``role="img"``, a ``<title>`` and
axis titles with their unit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from engine.text_safety import html_text

SERIES = 8
"""Distinct series colours (``s0``…``s7`` in the page's stylesheet); more series repeat them."""

FONT = 12
CHAR_WIDTH = 6.6
"""Average glyph width at :data:`FONT` px in the page's sans-serif, for label space."""


@dataclass(frozen=True)
class Interval:
    """One drawn number: a point value and its 95% CI (any of them may be missing)."""

    label: str
    value: float | None
    lo: float | None = None
    hi: float | None = None
    n: int | None = None


def _f(x: float) -> str:
    """A coordinate: at most one decimal, no trailing zeros (small files, stable text)."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def text_width(text: str) -> float:
    return len(text) * CHAR_WIDTH


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering ``[lo, hi]`` (steps of 1, 2 or 5 × 10^k). Bounds closer
    than float rounding (an interval that collapsed on its value) are spread to one unit
    around it."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"ticks need finite bounds, got {lo!r}..{hi!r}")
    if hi - lo <= 1e-9 * max(1.0, abs(lo), abs(hi)):
        lo, hi = lo - 0.5, lo + 0.5
    raw = (hi - lo) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.floor(lo / step) * step
    n = math.ceil((hi - first) / step - 1e-9)
    return [round(first + k * step, 10) for k in range(n + 1)]


class Scale:
    """A linear map from data ``[lo, hi]`` to pixels ``[start, end]``."""

    def __init__(self, lo: float, hi: float, start: float, end: float):
        self.lo, self.hi, self.start, self.end = lo, hi, start, end

    def __call__(self, x: float) -> float:
        span = self.hi - self.lo or 1.0
        return self.start + (x - self.lo) / span * (self.end - self.start)


def _open(width: float, height: float, title: str, css: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {css}" role="img" '
            f'viewBox="0 0 {_f(width)} {_f(height)}" width="{_f(width)}" '
            f'height="{_f(height)}"><title>{html_text(title)}</title>']


def _text(x: float, y: float, text: str, anchor: str = "middle", css: str = "label",
          extra: str = "") -> str:
    return (f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" class="{css}"{extra}>'
            f'{html_text(text)}</text>')


def _tick_label(value: float, unit: str) -> str:
    text = f"{value:g}"
    return f"{text}{unit}" if unit == "%" else text


def _whisker_v(x: float, y_lo: float, y_hi: float, cap: float = 4) -> str:
    return (f'<path class="whisker" d="M{_f(x)} {_f(y_lo)}V{_f(y_hi)}'
            f'M{_f(x - cap)} {_f(y_lo)}h{_f(2 * cap)}M{_f(x - cap)} {_f(y_hi)}h{_f(2 * cap)}"/>')


def _whisker_h(y: float, x_lo: float, x_hi: float, cap: float = 4) -> str:
    return (f'<path class="whisker" d="M{_f(x_lo)} {_f(y)}H{_f(x_hi)}'
            f'M{_f(x_lo)} {_f(y - cap)}v{_f(2 * cap)}M{_f(x_hi)} {_f(y - cap)}v{_f(2 * cap)}"/>')


def _legend(names: Sequence[str], x: float, y: float) -> list[str]:
    out = []
    for k, name in enumerate(names):
        yy = y + k * (FONT + 6)
        out.append(f'<rect class="s{k % SERIES}" x="{_f(x)}" y="{_f(yy - 9)}" width="10" '
                   f'height="10"/>')
        out.append(_text(x + 15, yy, name, anchor="start"))
    return out


def bar_chart(groups: Sequence[str], series: Sequence[str],
              values: Sequence[Sequence[Interval]], *, title: str, y_title: str,
              scale: float = 100.0, unit: str = "%", y_max: float | None = 100.0,
              width: float | None = None) -> str:
    """Grouped vertical bars with 95% CI whiskers: ``values[s][g]`` is series ``s`` (a
    system) in group ``g`` (a metric such as NV). Values are multiplied by ``scale`` (0–1 rates
    shown in %). A missing value leaves its slot empty and is marked ``n/a``."""
    if any(len(row) != len(groups) for row in values) or len(values) != len(series):
        raise ValueError("bar_chart: values must be one row per series, one cell per group")
    legend_w = max((text_width(s) for s in series), default=0) + 30
    bar_w = 14.0 if len(series) > 3 else 22.0
    group_w = max(len(series) * bar_w + 24, 70.0)
    plot_w = max(group_w * len(groups), 200.0)
    left, top, bottom = 52.0, 24.0, 46.0
    height = max(240.0, top + bottom + len(series) * (FONT + 6))
    total_w = width or left + plot_w + 16 + legend_w
    plot_h = height - top - bottom
    highs = [v.hi if v.hi is not None else v.value for row in values for v in row
             if v.value is not None]
    top_value = y_max if y_max is not None else max([*(h * scale for h in highs if h is not None),
                                                     1.0])
    ticks = nice_ticks(0.0, top_value)
    y = Scale(0.0, ticks[-1], top + plot_h, top)
    out = _open(total_w, height, title, "bars")
    for t in ticks:
        out.append(f'<line class="grid" x1="{_f(left)}" x2="{_f(left + plot_w)}" '
                   f'y1="{_f(y(t))}" y2="{_f(y(t))}"/>')
        out.append(_text(left - 6, y(t) + 4, _tick_label(t, unit), anchor="end", css="tick"))
    out.append(f'<path class="axis" d="M{_f(left)} {_f(top)}V{_f(top + plot_h)}'
               f'H{_f(left + plot_w)}"/>')
    for g, group in enumerate(groups):
        gx = left + g * (plot_w / len(groups)) + (plot_w / len(groups) - len(series) * bar_w) / 2
        out.append(_text(left + (g + 0.5) * plot_w / len(groups), top + plot_h + 16, group))
        for s, row in enumerate(values):
            v = row[g]
            x = gx + s * bar_w
            if v.value is None:
                out.append(_text(x + bar_w / 2, top + plot_h - 4, "n/a", css="tick"))
                continue
            y0 = y(v.value * scale)
            tip = _tip(series[s], group, v, scale, unit)
            out.append(f'<rect class="s{s % SERIES}" x="{_f(x + 1)}" y="{_f(y0)}" '
                       f'width="{_f(bar_w - 2)}" height="{_f(top + plot_h - y0)}">'
                       f'<title>{html_text(tip)}</title></rect>')
            if v.lo is not None and v.hi is not None:
                out.append(_whisker_v(x + bar_w / 2, y(v.lo * scale), y(v.hi * scale)))
    out.append(_text(14, top + plot_h / 2, y_title, extra=f' transform="rotate(-90 14 '
                                                           f'{_f(top + plot_h / 2)})"'))
    out.append(_text(left + plot_w / 2, height - 8, "whiskers: 95% CI", css="tick"))
    out += _legend(series, left + plot_w + 16, top + 10)
    out.append("</svg>")
    return "".join(out)


def _tip(series: str, group: str, v: Interval, scale: float, unit: str) -> str:
    def num(x):
        return "–" if x is None else f"{x * scale:.1f}"

    n = "" if v.n is None else f", n={v.n}"
    return f"{series} · {group}: {num(v.value)}{unit} [{num(v.lo)}, {num(v.hi)}]{n}"


def interval_chart(rows: Sequence[Interval], *, title: str, x_title: str, scale: float = 1.0,
                   unit: str = "", reference: float | None = None,
                   row_classes: Sequence[str] | None = None) -> str:
    """Horizontal points with 95% CI lines, one row each (a forest plot: Elo per system; a Δ
    chart: B − A per metric, ``reference=0``). ``row_classes`` colours rows (e.g. ``better``,
    ``worse``)."""
    label_w = max((text_width(r.label) for r in rows), default=40) + 12
    left, right, top = label_w, 24.0, 14.0
    row_h = 22.0
    plot_w = 360.0
    height = top + row_h * max(len(rows), 1) + 44
    points = [x * scale for r in rows for x in (r.value, r.lo, r.hi) if x is not None]
    if reference is not None:
        points.append(reference * scale)
    lo, hi = (min(points), max(points)) if points else (0.0, 1.0)
    pad = (hi - lo) * 0.05 or 1.0
    ticks = nice_ticks(lo - pad, hi + pad)
    x = Scale(ticks[0], ticks[-1], left, left + plot_w)
    out = _open(left + plot_w + right, height, title, "forest")
    plot_bottom = top + row_h * max(len(rows), 1)
    for t in ticks:
        out.append(f'<line class="grid" x1="{_f(x(t))}" x2="{_f(x(t))}" y1="{_f(top)}" '
                   f'y2="{_f(plot_bottom)}"/>')
        out.append(_text(x(t), plot_bottom + 14, _tick_label(t, unit), css="tick"))
    if reference is not None:
        out.append(f'<line class="reference" x1="{_f(x(reference * scale))}" '
                   f'x2="{_f(x(reference * scale))}" y1="{_f(top)}" y2="{_f(plot_bottom)}"/>')
    for k, r in enumerate(rows):
        cy = top + row_h * (k + 0.5)
        css = row_classes[k] if row_classes else ""
        out.append(_text(left - 8, cy + 4, r.label, anchor="end"))
        if r.value is None:
            out.append(_text(left + 8, cy + 4, "n/a", anchor="start", css="tick"))
            continue
        if r.lo is not None and r.hi is not None:
            out.append(_whisker_h(cy, x(r.lo * scale), x(r.hi * scale)))
        tip = _tip(r.label, "", r, scale, unit).replace(" · : ", ": ")
        out.append(f'<circle class="point {css}" cx="{_f(x(r.value * scale))}" cy="{_f(cy)}" '
                   f'r="4.5"><title>{html_text(tip)}</title></circle>')
    out.append(_text(left + plot_w / 2, height - 8, x_title))
    out.append("</svg>")
    return "".join(out)


def heatmap(labels: Sequence[str], matrix: Sequence[Sequence[float | None]], *, title: str,
            counts: Sequence[Sequence[int]] | None = None, unit: str = "%",
            scale: float = 100.0) -> str:
    """A square matrix (row ``i`` against column ``j``), each cell shaded by its value in
    [0, 1] and printed (``scale`` × value with ``unit``); None cells are blank."""
    n = len(labels)
    if len(matrix) != n or any(len(row) != n for row in matrix):
        raise ValueError(f"heatmap: a {n}×{n} matrix is needed for {n} labels")
    cell = 46.0
    short = [_short(label) for label in labels]
    label_w = max((text_width(s) for s in short), default=40) + 10
    left, top = label_w, label_w * 0.72 + 10
    # the last column's label leans right, beyond the grid
    width, height = left + cell * n + label_w * 0.72 + 12, top + cell * n + 34
    out = _open(width, height, title, "heat")
    for j, name in enumerate(short):
        cx = left + cell * (j + 0.5)
        out.append(_text(cx, top - 6, name, anchor="start",
                         extra=f' transform="rotate(-45 {_f(cx)} {_f(top - 6)})"'))
    for i, row in enumerate(matrix):
        y = top + cell * i
        out.append(_text(left - 6, y + cell / 2 + 4, short[i], anchor="end"))
        for j, v in enumerate(row):
            x = left + cell * j
            if v is None:
                out.append(f'<rect class="cell-empty" x="{_f(x)}" y="{_f(y)}" '
                           f'width="{_f(cell)}" height="{_f(cell)}"/>')
                continue
            n_ = f", {counts[i][j]} battles" if counts else ""
            tip = f"{labels[i]} vs {labels[j]}: {v * scale:.1f}{unit}{n_}"
            out.append(f'<rect class="cell" x="{_f(x)}" y="{_f(y)}" width="{_f(cell)}" '
                       f'height="{_f(cell)}" fill-opacity="{0.08 + 0.85 * v:.2f}">'
                       f'<title>{html_text(tip)}</title></rect>')
            out.append(_text(x + cell / 2, y + cell / 2 + 4, f"{v * scale:.0f}",
                             css="cell-text"))
    out.append(_text(left + cell * n / 2, height - 8,
                     f"share of the row's battles won against the column ({unit}; ties ½)",
                     css="tick"))
    out.append("</svg>")
    return "".join(out)


def _short(label: str, width: int = 34) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"
