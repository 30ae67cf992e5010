"""Untrusted text shown on a terminal: written out, never obeyed (the one rule; the engine's
:mod:`engine.text_safety` puts it on the CLI's streams and the TUI's text, and the model
adapters on a server's own words in an error, :func:`models.http.errors.server_message`).

A control character would act instead of being shown: ``\\x1b[2J`` clears the screen,
``\\x1b]0;title\\x07`` retitles the window, ``\\r`` overwrites what came before, an RTL
override (U+202E) reverses what follows, and a lone surrogate cannot even be encoded. Python's
own ``repr`` escapes too much (every non-ASCII letter of a Hindi question) and
``str.isprintable`` too little to be used as is, so the set is written out here: C0 controls
but newline and tab, DEL, C1 controls, the bidirectional embeddings, overrides and isolates
(U+202A–U+202E, U+2066–U+2069), and lone surrogates. C0 controls are written ``\\x1b``; the
others ``\\u202e``, the form a JSON string also reads, so JSON output stays valid and means
the same (``json.dumps`` escapes C0 itself). Standard library only.
"""

from __future__ import annotations

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
