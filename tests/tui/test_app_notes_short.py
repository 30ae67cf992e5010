"""Issue 18, finding 9: notifications do not cover content for long (5 s, warnings 6 s, errors
10 s at most), and the first launch's welcome is a line on the Datasets screen, not a toast
over the list it describes."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from testkit.tui import RecordingApp, settle, text_of


@pytest.mark.asyncio
async def test_welcome_is_on_the_screen_and_notes_are_short(db_path):
    app = RecordingApp(db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        welcome = app.screen.query_one("#datasets-welcome", Static)
        assert welcome.display
        text = text_of(welcome)
        assert "demo pool is imported (60 queries, 60 chunks)" in text
        assert "g runs a quick comparison" in text and "n configures a run" in text
        assert not app.notes                       # nothing over the dataset list
        app.notify("something happened", timeout=30)
        app.notify("a warning", severity="warning", timeout=30)
        app.notify("it broke", severity="error", timeout=30)
        app.notify("plain")
        await pilot.pause()
        assert [n.timeout for n in app._notifications] == [5.0, 6.0, 10.0, 5.0]


@pytest.mark.asyncio
async def test_no_welcome_once_runs_exist(workspace):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not app.screen.query_one("#datasets-welcome", Static).display
