"""The Calibration screen on a real calibration (a scripted judge on hand-made labels): the
figures beside the anchors, the confusion matrix, the disagreements list opening a pair; its
snapshot; the Leaderboard's ``h`` opens it."""

from __future__ import annotations

import json

import pytest
from textual.binding import Binding
from textual.widgets import DataTable, Static

from engine.arena.calibrate import calibrate_judge
from engine.datasets.importing import import_path
from engine.store import Store
from mirage_tui.app import MirageApp
from testkit.arena import ScriptedJudge
from testkit.tui import RecordingApp, open_screen, settle, text_of


def first_wins(s):
    return "1"      # always the answer shown first: a pure position bias


@pytest.fixture
def calibrated(tmp_path):
    path = tmp_path / "w.db"
    store = Store(path)
    rows = [{"query": f"Question {i}?", "answer_a": f"first answer {i}",
             "answer_b": f"second answer {i}", "label": (-1, 1, 2, 0, -2, 1)[i],
             "annotator": who, "domain": "even" if i % 2 == 0 else "odd"}
            for i in range(6) for who in ("ann", "bob")]
    labels = tmp_path / "mine.jsonl"
    labels.write_text("\n".join(json.dumps(r) for r in rows))
    import_path(store, labels)
    result = calibrate_judge(store, "mine", ScriptedJudge(first_wins, name="lazy-judge"),
                             both_orders=True, n_boot=50)
    assert result.status == "done"
    store.close()
    return path


@pytest.mark.asyncio
async def test_calibration_screen_shows_figures_matrix_and_disagreements(calibrated):
    from mirage_tui.screens.calibration import CalibrationScreen

    app = RecordingApp(calibrated)
    async with app.run_test(size=(110, 40)) as pilot:
        await open_screen(pilot, CalibrationScreen("lazy-judge"))
        screen = app.screen
        assert "judge lazy-judge" in text_of(screen.query_one("#cal-status", Static))
        figures = text_of(screen.query_one("#cal-figures", Static))
        # a judge that always picks the first-shown answer: every pair flips, all ties
        assert "position flip rate (both orders)  100.0%" in figures
        assert "(published 88.6%)" in figures and "by domain" in figures
        matrix = screen.query_one("#cal-confusion", DataTable)
        assert matrix.row_count == 4
        tie_row = [str(c) for c in matrix.get_row_at(1)]
        assert tie_row == ["tie", "2", "1", "3"]    # people: A 2, tie 1, B 3
        table = screen.query_one("#cal-disagreements", DataTable)
        assert table.row_count == 5                  # every pair but the human tie
        table.focus()
        await pilot.press("enter")
        await settle(pilot)
        pair = text_of(screen.query_one("#cal-pair", Static))
        assert "Question 0?" in pair and "first answer 0" in pair
        assert "ann -1, bob -1" in pair and "Judge, shown ab: A better" in pair
        assert "Judge, shown ba: B better" in pair
        await pilot.press("escape")
        assert app.screen is not screen
        assert not app.errors()


@pytest.mark.asyncio
async def test_no_calibration_says_how_to_get_one(tmp_path):
    from mirage_tui.screens.calibration import CalibrationScreen

    app = RecordingApp(tmp_path / "w.db")
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, CalibrationScreen("nobody"))
        status = text_of(app.screen.query_one("#cal-status", Static))
        assert "No calibration of judge 'nobody' yet" in status
        assert "mirage-tui judge calibrate" in status


class ScreensApp(MirageApp, inherit_bindings=False):
    BINDINGS = [Binding("question_mark", "toggle_help", "Keys", key_display="?")]


def test_snapshot_calibration(calibrated, snap_compare):
    from mirage_tui.screens.calibration import CalibrationScreen

    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.app.push_screen(CalibrationScreen("lazy-judge"))
        await settle(pilot)
        pilot.app.clear_notifications()     # the first-start welcome toasts
        await pilot.pause()

    assert snap_compare(ScreensApp(calibrated), terminal_size=(110, 40), run_before=run_before)
