"""Hostile dataset text in the TUI: Rich markup shown as written, escape sequences visible."""

import json

import pytest

from rich.text import Text
from textual.widgets import Static

from engine.datasets.importing import import_path
from engine.store import Store
from mirage_tui.screens.query import ChunkCard, QueryScreen
from mirage_tui.widgets.safe_text import safe_line, safe_text
from testkit.tui import RecordingApp, open_screen, text_of

QUESTION = "Who [bold]wins[/bold] [link=http://x]here[/link]? \x1b[2J\x1b]0;t\x07 \u202eevil"
CHUNK = "The [red]answer[/red] is here.\x1b[31m"


def test_safe_text_never_reads_markup_and_shows_controls():
    text = safe_text(QUESTION)
    assert isinstance(text, Text) and not text.spans
    assert "[bold]wins[/bold]" in text.plain and "\x1b" not in text.plain
    assert "\\x1b[2J" in text.plain and "\\u202e" in text.plain
    assert safe_line("a\nb").plain == "a\\nb"


@pytest.mark.asyncio
async def test_the_query_screen_shows_hostile_text_as_text(tmp_path):
    source = tmp_path / "hostile.json"
    source.write_text(json.dumps({"data": [{"title": "T", "paragraphs": [{
        "context": CHUNK, "qas": [{"id": "q1", "question": QUESTION,
                                   "answers": [{"text": "answer", "answer_start": 8}]}]}]}]}))
    db = tmp_path / "w.db"
    import_path(Store(db), source)
    app = RecordingApp(db)
    async with app.run_test(size=(110, 34)) as pilot:
        await open_screen(pilot, QueryScreen("hostile@1", "hostile/q1"))
        shown = text_of(app.screen.query_one("#query-text", Static))
        assert "[bold]wins[/bold]" in shown and "[link=http://x]" in shown
        assert "\x1b" not in shown and "\\x1b]0;t\\x07" in shown
        chunk = app.screen.query(ChunkCard).first().query_one(".chunk-text", Static)
        assert text_of(chunk) == "The [red]answer[/red] is here.\\x1b[31m"
