"""Checkboxes that differ by glyph, not by colour alone: a tick in a ticked box, an empty box
otherwise (Textual draws an X in every box and tells them apart by colour, which a
colour-blind eye or a monochrome terminal cannot).

:class:`TickList` is a ``SelectionList``, :class:`TickBox` a ``Checkbox``; both draw
:data:`TICKED` or :data:`UNTICKED` inside the box. A TickList highlights its first line when it
gets the focus, so that the cursor shows and Space acts on the line it is on.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import Checkbox, SelectionList
from textual.widgets.option_list import OptionDoesNotExist

TICKED, UNTICKED = "✓", " "


class TickList(SelectionList):
    """A selection list whose ticked boxes hold a tick and whose others are empty."""

    def on_focus(self) -> None:
        # a list focused with no line highlighted shows no cursor, and its first Down only
        # highlights the first line: Space then toggled a line the user was not looking at
        if self.highlighted is None and self.option_count:
            self.highlighted = 0

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        try:
            selection = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return strip
        segments = list(strip)
        if len(segments) < 2:
            return strip
        inner = segments[1]      # the box's inside, after its left edge
        glyph = TICKED if selection.value in self._selected else UNTICKED
        segments[1] = Segment(glyph, inner.style, inner.control)
        return Strip(segments, strip.cell_length)


class TickBox(Checkbox):
    """A checkbox with a tick when ticked and an empty box otherwise."""

    @property
    def BUTTON_INNER(self) -> str:  # noqa: N802 - Textual's class attribute, per state here
        return TICKED if self.value else UNTICKED
