"""Issue 18, finding 4: keys mean the same on every screen, the focus is always visible and
the focused widget takes the keys, and ticked boxes differ from unticked ones by glyph."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from mirage_tui.screens.datasets import DatasetsScreen
from mirage_tui.screens.new_run import NewRunScreen
from mirage_tui.screens.query import QueryScreen
from mirage_tui.widgets.adaptability import AdaptabilityPanel
from mirage_tui.widgets.ticks import TICKED, TickList
from testkit.tui import RecordingApp, open_live, settle, wait_until


@pytest.mark.asyncio
async def test_l_after_enter_on_a_live_bar_shows_live_again(workspace):
    from mirage_tui.screens.inspector import InspectorScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        live = await open_live(pilot)
        assert isinstance(app.focused, AdaptabilityPanel)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, InspectorScreen)
        await pilot.press("l")
        await settle(pilot)
        assert app.screen is live                     # not the Inspector again
        await pilot.press("3", "l")
        await settle(pilot)
        assert app.screen is live


@pytest.mark.asyncio
async def test_tab_in_live_lands_on_a_panel_that_takes_down_and_enter(workspace):
    from mirage_tui.screens.inspector import InspectorScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        live = await open_live(pilot)
        for _ in range(3):                            # round the panels: never a bare scroll
            await pilot.press("tab")
            await pilot.pause()
            assert app.focused.id != "live-body", "Tab went to the bare scroll"
            assert isinstance(app.focused, (DataTable, AdaptabilityPanel)), app.focused
        while app.focused is not live.query_one("#live-accuracy"):
            await pilot.press("tab")
        await pilot.press("down", "enter")            # the second setting's row
        await settle(pilot)
        assert isinstance(app.screen, InspectorScreen)
        assert app.screen.filters.setting == "oracle" and app.screen.filters.system is None


@pytest.mark.asyncio
async def test_n_is_new_run_on_a_query_and_1_shows_the_datasets(db_path):
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        queries = app.screen.query_one("#queries", DataTable)
        await wait_until(pilot, lambda: queries.row_count > 0, what="the demo's queries")
        queries.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, QueryScreen)
        first = app.screen.query_id
        await pilot.press("right_square_bracket")     # the next query: ] (n is New run)
        await settle(pilot)
        assert isinstance(app.screen, QueryScreen)
        assert app.screen.query_id != first
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, NewRunScreen)
        await pilot.press("escape")                    # leave the form's first input
        await settle(pilot)
        app.set_focus(None)
        await pilot.press("1")
        await settle(pilot)
        assert isinstance(app.screen, DatasetsScreen)  # the list, not the open question


@pytest.mark.asyncio
async def test_ticked_and_unticked_boxes_differ_by_glyph(db_path):
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        settings = app.screen.query_one("#run-settings", TickList)
        await wait_until(pilot, lambda: settings.option_count == 4, what="the settings")
        lines = [settings.render_line(y).text for y in range(4)]
        ticked = [TICKED in line for line in lines]
        assert ticked == [s in settings.selected for s in ("base", "oracle", "mixed",
                                                           "retrieved")]
        assert ticked == [True, True, True, False]
        assert not any("X" in line[:4] for line in lines)
        settings.deselect("oracle")
        await pilot.pause()
        assert TICKED not in settings.render_line(1).text
