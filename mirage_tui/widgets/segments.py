"""The engine's text segments (:mod:`engine.results.comparison`) as rich Text, one style per
role; shared by the Runs and Compare screens."""

from __future__ import annotations

from rich.text import Text

from engine.results.comparison import Segment

ROLE_STYLES = {"title": "bold", "heading": "bold underline", "header": "bold",
               "strong": "bold", "note": "italic", "": ""}


def styled(segments: list[Segment]) -> Text:
    """The engine's text segments as the summary pane draws them. The title's bold is the
    base style of the whole text, as the pane has always drawn it."""
    (title, _), *rest = segments
    out = Text(title, style=ROLE_STYLES["title"])
    for text, role in rest:
        out.append(text, style=ROLE_STYLES[role])
    return out
