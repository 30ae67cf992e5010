"""The adaptability panel: NV, CA, CI and CM of each system as bars with 95% CI whiskers.

One heading line per system (and per setting that played MIRAGE's "mixed"), then one line per
category (MIRAGE §1)::

    NV ↓ ███▓▓──┤              0.32 [0.21, 0.44] n=20

On a 0–1 track: solid up to the CI's lower end, shaded from there to the value, a whisker from
the value to the upper end. Shading and whisker differ in shape, not only in colour, so the bars
read in any theme; a legend line under the bars (:data:`LEGEND`) says so, a second what the
headings' overall means (:data:`engine.metrics.adaptability.OVERALL_MEANING`), and a heading's
items not counted say why (errored, or not yet in all three settings). The panel is an :class:`OptionList`: arrows walk the category lines and
Enter posts :class:`AdaptabilityPanel.CategorySelected` (system, setting, category), which the
Live run screen turns into an inspector filtered to those items.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.metrics.adaptability import (CONTEXT_ACCEPTABLE, CONTEXT_INSENSITIVE,
                                         CONTEXT_MISINTERPRETED, NOISE_VULNERABLE,
                                         OVERALL_MEANING)
from engine.results.adaptability_rows import AdaptabilityRow, LeftOut
from engine.stats import Estimate
from mirage_tui.widgets.estimates import estimate_cell, setting_label

# (report key, inspector category, label, better when)
CATEGORY_ROWS: tuple[tuple[str, str, str, str], ...] = (
    ("nv", NOISE_VULNERABLE, "NV", "↓"),
    ("ca", CONTEXT_ACCEPTABLE, "CA", "↑"),
    ("ci", CONTEXT_INSENSITIVE, "CI", "↓"),
    ("cm", CONTEXT_MISINTERPRETED, "CM", "↓"),
)

BAR, SHADE, WHISKER, END, TRACK = "█", "▓", "─", "┤", " "


def bar_cells(value: float | None, lo: float | None, hi: float | None,
              width: int) -> list[tuple[str, str]]:
    """The track's cells as (character, part) with part in bar / ci / whisker / track.

    Cell i covers [i/width, (i+1)/width); a share is rounded to whole cells. Without a value
    the track is empty; without a CI the bar is solid.
    """
    if value is None:
        return [(TRACK, "track")] * width
    lo = value if lo is None else lo
    hi = value if hi is None else hi

    def cell(x: float) -> int:
        return max(0, min(width, round(x * width)))

    lo_c, value_c, hi_c = cell(lo), cell(value), cell(hi)
    out: list[tuple[str, str]] = []
    for i in range(width):
        if i < lo_c:
            out.append((BAR, "bar"))
        elif i < value_c:
            out.append((SHADE, "ci"))
        elif i < hi_c:
            out.append((END if i == hi_c - 1 else WHISKER, "whisker"))
        else:
            out.append((TRACK, "track"))
    return out


PART_STYLES = {"bar": "$primary", "ci": "$primary 60%", "whisker": "$warning",
               "track": ""}


def bar_line(label: str, hint: str, est: Estimate, width: int) -> Content:
    """``NV ↓ ███▓▓──┤   │ 32.0 [21.0, 44.0] n=20`` as styled Content."""
    cells = bar_cells(est.value, est.lo, est.hi, width)
    parts: list[tuple[str, str] | str] = [(f"{label} ", "bold"), (f"{hint} ", "$text-muted")]
    for char, part in cells:
        parts.append((char, PART_STYLES[part]))
    parts.append(("│ ", "$text-muted"))
    parts.append(estimate_cell(est))
    return Content.assemble(*parts)


def heading_line(entry: AdaptabilityRow) -> Content:
    """The system, the setting that played mixed, n and the overall score."""
    tail = f" · overall {estimate_cell(entry.share('overall'))}"
    if entry.left_out.total:
        tail += f" · {left_out_words(entry.left_out)}"
    return Content.assemble((entry.run_system, "bold"),
                            (f" · {setting_label(entry.mixed_setting)}", "$text-accent"),
                            (tail, "$text-muted"))


def left_out_words(left: LeftOut) -> str:
    """``2 items not counted (1 errored, 1 not in all of base, oracle and mixed yet)``."""
    total = left.total
    why = [f"{left.errored} errored" if left.errored else "",
           f"{left.missing} not in all of base, oracle and mixed yet" if left.missing else ""]
    reasons = ", ".join(w for w in why if w)
    return (f"{total} item{'s' if total != 1 else ''} not counted"
            + (f" ({reasons})" if reasons else ""))


LEGEND = (f"{BAR} to the 95% CI's low end · {SHADE} to the estimate · {WHISKER}{END} to its "
          "high end")
"""The line under the bars that says what their parts are."""


class AdaptabilityPanel(OptionList):
    """Bars for the report's adaptability rows (``RunReport.systems``); Enter on a bar asks
    for its items."""

    DEFAULT_CSS = """
    AdaptabilityPanel {
        height: auto;
        max-height: 100%;
        border: round $primary 50%;
        border-title-color: $text-primary;
        padding: 0 1;
    }
    AdaptabilityPanel:focus {
        border: round $accent;
    }
    """

    MIN_TRACK, MAX_TRACK = 10, 40

    @dataclass
    class CategorySelected(Message):
        system: str          # the run's system label (generator/template)
        setting: str         # the setting that played mixed
        category: str        # one of engine.metrics.adaptability.CATEGORIES

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[AdaptabilityRow] = []
        self.border_title = "Adaptability · NV CA CI CM (95% CI, n) · Enter inspects"
        self._width_built: int | None = None

    def show(self, entries: list[AdaptabilityRow]) -> None:
        """Draw these adaptability rows (keeps the highlighted line when it can)."""
        self.entries = list(entries)
        self._rebuild()

    def track_width(self) -> int:
        # label, hint, the end mark and the numbers ("32.0 [21.0, 44.0] n=1000") take ~34
        inner = (self.content_size.width or self.app.size.width - 4) - 2
        return max(self.MIN_TRACK, min(self.MAX_TRACK, inner - 34))

    def _rebuild(self) -> None:
        keep = self.highlighted_option.id if self.highlighted_option else None
        width = self.track_width()
        self._width_built = width
        options: list[Option] = []
        if not self.entries:
            options.append(Option(Content.styled(
                "No adaptability yet: it needs base, oracle and a mixed-like setting of the "
                "same queries.", "$text-muted"), disabled=True))
        for index, entry in enumerate(self.entries):
            options.append(Option(heading_line(entry), id=f"{index}:heading", disabled=True))
            for key, category, label, hint in CATEGORY_ROWS:
                options.append(Option(bar_line(label, hint, entry.share(key), width),
                                      id=f"{index}:{category}"))
        if self.entries:
            options.append(Option(Content.styled(LEGEND, "$text-muted"), id="legend",
                                  disabled=True))
            options.append(Option(Content.styled(OVERALL_MEANING, "$text-muted"),
                                  id="overall", disabled=True))
        self.set_options(options)
        if keep is not None:
            try:
                self.highlighted = self.get_option_index(keep)
            except Exception:  # noqa: BLE001 - the line is gone (OptionDoesNotExist)
                pass

    def action_select(self) -> None:
        """Enter inspects the highlighted bar; with none highlighted (Down pressed while the
        panel still said "No adaptability yet" moved nothing), the first bar."""
        if self.highlighted is None and self.entries:
            self.highlighted = self.get_option_index(f"0:{CATEGORY_ROWS[0][1]}")
        super().action_select()

    def on_resize(self) -> None:
        if self.entries and self.track_width() != self._width_built:
            self._rebuild()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or ""
        index, _, category = option_id.partition(":")
        if not index.isdigit() or category == "heading":
            return
        entry = self.entries[int(index)]
        self.post_message(self.CategorySelected(
            entry.run_system, entry.mixed_setting, category))
