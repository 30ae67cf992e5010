"""Issue 27 finding 6 / issue 26 item 4 on the Compare screen: two runs generated differently
(here beta's generator again with max tokens 32 instead of 64) are named as such in the
header, above the verdict; runs generated alike carry no warning."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from engine.store import Store
from mirage_tui.screens.compare import CompareScreen
from testkit.scripted_runs import LABELS, make_run
from testkit.tui import RecordingApp, open_screen, text_of


@pytest.mark.asyncio
async def test_the_compare_header_names_the_generation_difference(workspace):
    store = Store(workspace["path"])
    make_run(store, "beta-short", LABELS["beta"], at="2025-01-04 09:00:00", max_tokens=32)
    store.close()
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 40)) as pilot:
        await open_screen(pilot, CompareScreen("beta", "beta-short"))
        verdict = text_of(app.screen.query_one("#cmp-verdict", Static))
        assert ("Warning: the two runs differ in max tokens (64 vs 32): their answers are not "
                "comparable as like for like.") in verdict
        await open_screen(pilot, CompareScreen("alpha", "beta"))
        assert "Warning" not in text_of(app.screen.query_one("#cmp-verdict", Static))
