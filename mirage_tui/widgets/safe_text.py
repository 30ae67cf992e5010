"""Untrusted text (dataset text, model replies, names) as the TUI shows it.

Two rules, in one place: it is never parsed as markup (a ``rich.text.Text``, not a str: a
question holding ``[bold]`` or ``[link=...]`` stays as written), and control characters are
made visible by :func:`engine.text_safety.visible` (an escape sequence in a passage must not
reach the terminal: Rich keeps ESC in a Text, and Textual writes it out as it is).
"""

from __future__ import annotations

from rich.text import Text

from engine.text_safety import visible, visible_line


def safe_text(value: object, style: str = "") -> Text:
    """Untrusted text as a Text: no markup, control characters visible, newlines kept."""
    return Text(visible("" if value is None else value), style=style)


def safe_line(value: object, style: str = "") -> Text:
    """:func:`safe_text` on one line (newlines and tabs written ``\\n``, ``\\t``): table cells."""
    return Text(visible_line("" if value is None else value), style=style)
