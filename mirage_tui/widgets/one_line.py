"""Lines that take one row each at any width: a line longer than the widget keeps its
leading whole words and ends in ``…`` (as :func:`engine.text_fit.elide_words` with no tail: a
number is a word, so none is cut in two; the line's start says the most), and the full text
is a key away (the Leaderboard's ``t``).

For a pane beside a table that must stay in sight: the Leaderboard's status, judge, rule and
cross-check lines, where each wrapped sentence pushed the ranking down the screen."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from engine.text_fit import ELLIPSIS, cell_len, elide_words


def head_words(text: str, width: int) -> str:
    """``text`` in ``width`` cells: whole, else its leading whole words and ``…``."""
    if cell_len(text) <= width:
        return text
    out, used = [], 0
    for word in text.split(" "):
        used += (1 if out else 0) + cell_len(word)
        if used > width - 1:
            break
        out.append(word)
    return " ".join(out) + ELLIPSIS if out else elide_words(text, width)


class OneLineEach(Static):
    """A Static whose content (its full text: ``content``) is drawn one row a line, each
    line's whole words elided at the width; the line keeps its first style. ``show(text,
    one_line=False)`` draws a message wrapped instead (a hint, an error: read whole)."""

    DEFAULT_CSS = """
    OneLineEach { height: auto; }
    """

    def __init__(self, content: str | Text = "", *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(content, id=id, classes=classes, markup=False)
        self.one_line = True

    def show(self, content: str | Text, *, one_line: bool = True) -> None:
        self.one_line = one_line
        self.update(content)

    def _lines(self) -> list[Text]:
        content = self.content
        text = content if isinstance(content, Text) else Text(str(content))
        return [line for line in text.split("\n") if line.plain.strip()]

    def render(self):
        if not self.one_line:
            return super().render()
        width = self.content_size.width or 10**6
        out = Text(no_wrap=True, overflow="ignore", end="")
        for i, line in enumerate(self._lines()):
            style = line.spans[0].style if line.spans else line.style
            out.append(("\n" if i else "") + head_words(line.plain, width), style=style)
        return out

    def get_content_height(self, container, viewport, width: int) -> int:
        if not self.one_line:
            return super().get_content_height(container, viewport, width)
        return max(1, len(self._lines()))
