"""Untrusted text on its way to a terminal or a page: shown, never obeyed.

Dataset text, model replies and names typed by users reach the terminal through the CLI and
the TUI. A control character in them would act instead of being shown: ``\\x1b[2J`` clears the
screen, ``\\x1b]0;title\\x07`` retitles the window, ``\\r`` overwrites what came before, an RTL
override (U+202E) reverses what follows, and a lone surrogate cannot even be encoded.
:func:`visible` is the one rule for the terminal (the CLI wraps its output streams in
:class:`VisibleStream`, the TUI calls it before building ``rich.text.Text``); :func:`html_text`
is the rule for any HTML.

Python's own ``repr`` escapes too much (every non-ASCII letter of a Hindi question) and
``str.isprintable`` too little to be used as is, so the set is written out here: C0 controls
but newline and tab, DEL, C1 controls, the bidirectional embeddings, overrides and isolates
(U+202A–U+202E, U+2066–U+2069), and lone surrogates. C0 controls are written ``\\x1b``; the
others ``\\u202e``, the form a JSON string also reads, so JSON output through
:class:`VisibleStream` stays valid and means the same (``json.dumps`` escapes C0 itself).
"""

from __future__ import annotations

import html
import io
import re

_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _shown(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """``text`` with every control character, bidi override and lone surrogate written as an
    escape (module docstring); newline and tab stay. Ordinary text comes back unchanged."""
    text = text if isinstance(text, str) else str(text)
    return _INVISIBLE.sub(_shown, text)


_LINE_BREAKS = str.maketrans({"\n": "\\n", "\t": "\\t", "\u2028": "\\u2028",
                             "\u2029": "\\u2029"})


def visible_line(text: object) -> str:
    """:func:`visible`, newlines, tabs and the Unicode line and paragraph separators
    included: for text that must stay on one line (a list row, a one-line error)."""
    return visible(text).translate(_LINE_BREAKS)


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
