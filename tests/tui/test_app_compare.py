"""The Compare screen (issue 16) through Textual's Pilot, on the inspection workspace of
conftest.py (runs made by the real engine with scripted generators): the verdict, the rows
with Δ bars, the flips with Enter opening the Inspector on B's item, the transitions, the
export, a refusal, and each run looked up once (for the pairing and the runs' own reports
alike)."""

from __future__ import annotations

import csv
import json
import traceback

import pytest
from textual.widgets import DataTable, Static

from engine.runs import lookup
from mirage_tui.dialogs.text_prompt import TextPromptScreen
from mirage_tui.screens.compare import CompareScreen, delta_bar
from testkit.scripted_runs import A, B
from testkit.tui import RecordingApp, open_screen, settle, text_of, wait_for_workers, wait_until


def test_delta_bar_draws_zero_the_whisker_and_the_point():
    bar = delta_bar(0.2, 0.12, 0.4, scale=0.4, width=21)
    assert bar.plain.index("│") == 10 and bar.plain.index("●") == 15
    assert bar.plain[13] == "├" and bar.plain[20] == "┤" and bar.style == "green"
    assert delta_bar(-0.1, -0.3, 0.1, 0.4).style == "dim"
    assert delta_bar(None, None, None, 0.4).plain.strip() == ""


@pytest.mark.asyncio
async def test_compare_screen_two_systems_of_one_run(workspace, tmp_path, monkeypatch):
    from mirage_tui.screens.inspector import InspectorScreen

    monkeypatch.chdir(tmp_path)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 40)) as pilot:
        await open_screen(pilot, CompareScreen(f"alpha:{A}", f"alpha:{B}"))
        screen = app.screen
        verdict = text_of(screen.query_one("#cmp-verdict", Static))
        assert "No clear difference on em_loose (mixed): +33.3 pp" in verdict
        assert "18 shared items (6 queries)" in verdict and "power: " in verdict
        rows = screen.query_one("#cmp-rows", DataTable)
        first = [str(c) for c in rows.get_row_at(0)]
        assert first[:5] == ["em_loose", "base", "6", "33.3", "16.7"]
        assert first[5].startswith("+") or first[5].startswith("-")   # Δ [95% CI]
        assert "┼" in first[6] and "●" in first[6]       # the CI crosses 0
        flips = screen.query_one("#cmp-flips", DataTable)
        assert flips.row_count == 6
        more = text_of(screen.query_one("#cmp-more", Static))
        assert "(b, o, m) pattern transitions with mixed" in more
        # Enter on a flip: the Inspector on B's item
        flips.focus()
        flips.move_cursor(row=0)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, InspectorScreen)
        assert app.screen.filters.system == B and app.screen.current[0] == B  # its detail
        await pilot.press("escape", "escape")    # the detail, then the inspector
        await settle(pilot)
        assert app.screen is screen
        # x: where to write (the current folder's name offered; Enter), then the
        # comparison as JSON, its items as CSV and its page
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPromptScreen), 10, "where")
        await pilot.press("enter")
        await settle(pilot)
        (js,) = tmp_path.glob("compare-*.json")
        assert json.loads(js.read_text())["shared_items"] == 18
        with open(js.with_suffix(".csv")) as f:
            assert len(list(csv.DictReader(f))) == 18
        page = js.with_suffix(".html").read_text(encoding="utf-8")
        assert '"kind":"comparison"' in page and '"shared_items":18' in page


@pytest.mark.asyncio
async def test_compare_screen_refuses_an_ambiguous_side(workspace):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, CompareScreen("alpha", "beta:nobody"))
        verdict = text_of(app.screen.query_one("#cmp-verdict", Static))
        assert verdict.startswith("No paired comparison: run 'alpha' has 2 systems")


@pytest.mark.asyncio
async def test_compare_from_the_leaderboard(workspace):
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, LeaderboardScreen("alpha"))
        table = app.screen.query_one("#ratings", DataTable)
        table.focus()
        table.move_cursor(row=table.get_row_index(f"{A} | mixed"))
        await pilot.press("space")
        table.move_cursor(row=table.get_row_index(f"{B} | mixed"))
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert (app.screen.a, app.screen.b) == (f"alpha:{A}", f"alpha:{B}")
        verdict = text_of(app.screen.query_one("#cmp-verdict", Static))
        assert "18 shared items" in verdict


@pytest.mark.asyncio
async def test_compare_screen_looks_each_run_up_once(workspace, monkeypatch):
    """Two runs named alone: the pairing and both runs' own reports (the side-by-side tables)
    share one look-up per run (the store's look-up by name, called from the Compare screen)."""
    looked_up: list[str] = []
    real = lookup.run_by_name

    def counted(store, name):
        if any("mirage_tui/screens/compare" in frame.filename.replace("\\", "/")
               for frame in traceback.extract_stack()):
            looked_up.append(name)
        return real(store, name)

    monkeypatch.setattr(lookup, "run_by_name", counted)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 40)) as pilot:
        await open_screen(pilot, CompareScreen("alpha", "beta"))
        await wait_for_workers(pilot)
        verdict = text_of(app.screen.query_one("#cmp-verdict", Static))
        assert "18 shared items" in verdict, verdict
        more = text_of(app.screen.query_one("#cmp-more", Static))
        assert "Comparing alpha (A) with beta (B)" in more      # the runs' own reports
    assert sorted(looked_up) == ["alpha", "beta"]
