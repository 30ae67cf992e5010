"""Untrusted text on its way to a terminal or a page: shown, never obeyed.

Dataset text, model replies and names typed by users reach the terminal through the CLI and
the TUI. A control character in them would act instead of being shown: ``\\x1b[2J`` clears the
screen, ``\\x1b]0;title\\x07`` retitles the window, ``\\r`` overwrites what came before, an RTL
override (U+202E) reverses what follows, and a lone surrogate cannot even be encoded.
:func:`visible` is the one rule for the terminal (the CLI wraps its output streams in
:class:`VisibleStream`, the TUI calls it before building ``rich.text.Text``); :func:`html_text`
is the rule for any HTML.

The set of characters and how each is written are :mod:`models.visible_text`'s (one rule
for the engine and the model adapters, which words a server's error with it).
"""

from __future__ import annotations

import html
import io

from models.visible_text import visible, visible_line

__all__ = ["VisibleStream", "html_text", "visible", "visible_line"]


def html_text(text: object) -> str:
    """Text for an HTML page: escaped (``<``, ``>``, ``&``, quotes) and made visible."""
    return html.escape(visible(text), quote=True)


class VisibleStream(io.TextIOBase):
    """A text stream that writes :func:`visible` text to ``raw`` (a terminal, a pipe). The
    CLI puts its stdout and stderr behind one; what must reach the terminal as it is (the
    progress bar's carriage return) writes to ``raw``."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self):
        return getattr(self.raw, "encoding", "utf-8")

    def writable(self) -> bool:
        return True
