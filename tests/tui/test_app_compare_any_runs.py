"""Issue 18, finding 2: from Runs any two systems on shared items are compared, across runs and
across models (space marks a run, c on another opens the Compare screen; a run with several
systems asks which), and the Δ column is on screen at 120 and 80 columns."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, OptionList, Static

from engine.results.paired import side_runs, system_choice
from engine.store import Store
from mirage_tui.dialogs.pick_system import PickSystemScreen
from mirage_tui.screens.compare import CompareScreen
from testkit.scripted_runs import A, B, make_run
from testkit.tui import RecordingApp, settle, text_of, wait_until

# another model on the same six sampled queries: fake-c answers like fake-b in mixed
GAMMA = {"fake-c": [(0, 1, 1), (0, 1, 1), (0, 1, 0), (1, 0, 0), (1, 1, 1), (0, 1, 1)]}
C = "fake-c/mirage@1"


@pytest.fixture
def three_runs(workspace) -> dict:
    store = Store(workspace["path"])
    make_run(store, "gamma", GAMMA, at="2025-01-04 09:00:00")
    store.close()
    return workspace


def test_system_choice_asks_only_when_a_side_is_ambiguous(three_runs):
    store = Store(three_runs["path"])

    def choice(a: str, b: str):
        return system_choice(store, a, b, side_runs(store, a, b))
    try:
        assert choice("alpha", "gamma") == ("a", "alpha", [A, B])
        assert choice(f"alpha:{B}", "gamma") is None       # named
        assert choice("gamma", "alpha") == ("b", "alpha", [A, B])
        assert choice("alpha", "beta") is None     # beta's fake-a is in alpha
        assert choice("alpha", "alpha") is None    # its two systems
    finally:
        store.close()


async def _mark_and_compare(pilot, app, first: str, second: str) -> None:
    await pilot.press("3")
    await settle(pilot)
    table = app.screen.query_one("#runs", DataTable)
    await wait_until(pilot, lambda: table.row_count == 3, what="three runs")
    table.move_cursor(row=table.get_row_index(first))
    await pilot.press("space")
    table.move_cursor(row=table.get_row_index(second))
    await pilot.press("c")
    await settle(pilot)


def _delta_on_screen(screen) -> bool:
    """Whether the whole "Δ [95% CI]" column lies inside the table's visible width."""
    rows = screen.query_one("#cmp-rows", DataTable)
    right = 0
    for key, column in rows.columns.items():
        right += column.get_render_width(rows)
        if key.value == "Δ [95% CI]":
            return right <= rows.scrollable_content_region.width
    return False


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(120, 35), (80, 24)])
async def test_runs_compares_two_models_asking_for_the_system(three_runs, size):
    app = RecordingApp(three_runs["path"])
    async with app.run_test(size=size) as pilot:
        await _mark_and_compare(pilot, app, "alpha", "gamma")
        assert isinstance(app.screen, PickSystemScreen)     # alpha has two systems
        options = app.screen.query_one(OptionList)
        assert [str(options.get_option_at_index(i).prompt) for i in range(2)] == [A, B]
        options.highlighted = 1
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert (screen.a, screen.b) == (f"alpha:{B}", "gamma")
        verdict = text_of(screen.query_one("#cmp-verdict", Static))
        assert f"A = alpha:{B} · B = gamma:{C} · 18 shared items" in verdict
        assert "no system × setting in common" not in text_of(
            screen.query_one("#cmp-more", Static))
        assert _delta_on_screen(screen), "the Δ column is cut off"


@pytest.mark.asyncio
async def test_runs_compare_without_a_choice_goes_straight_to_compare(three_runs):
    app = RecordingApp(three_runs["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await _mark_and_compare(pilot, app, "gamma", "beta")
        assert isinstance(app.screen, CompareScreen)
        assert (app.screen.a, app.screen.b) == ("gamma", "beta")
        assert "18 shared items" in text_of(app.screen.query_one("#cmp-verdict", Static))
