"""Through Pilot on the real app: nothing stale (the Runs summary
follows the highlight, the Leaderboard shows a calibration made while it was hidden, a run
cancelled on purpose is not asked about at launch but resumes from Runs) and focus where the
work is (a run started from an Inspector opened on Live shows Live; New run opens on its first
field; Down + Space in the generator list toggles the highlighted line, visibly)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, SelectionList, Static

import models.check
from engine.store import Store
from mirage_tui.dialogs.choice import ChoiceModal
from mirage_tui.screens.datasets import DatasetsScreen
from mirage_tui.screens.live_run import LiveRunScreen
from mirage_tui.screens.new_run import NewRunScreen
from mirage_tui.screens.runs import RunsScreen
from mirage_tui.widgets.ticks import TICKED, UNTICKED
from testkit.tui import RecordingApp, settle, text_of, wait_for_run, wait_until

pytestmark = pytest.mark.asyncio

SMOL = "smollm2-135m-instruct"     # New run's default generator


def _summary(screen) -> str:
    return text_of(screen.query_one("#run-summary", Static))


# --------------------------------------------------------------------------- stale


async def test_the_runs_summary_follows_the_highlight(workspace):
    from mirage_tui.dialogs.export_run import ExportRunScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        screen = app.screen
        table = screen.query_one("#runs", DataTable)
        await wait_until(pilot, lambda: table.row_count == 2, what="two runs")
        table.move_cursor(row=table.get_row_index("alpha"))
        await pilot.press("enter")
        await settle(pilot)
        assert "alpha" in _summary(screen) and "beta" not in _summary(screen)
        await pilot.press("down")           # beta, no key but the arrow
        assert table.cursor_row == table.get_row_index("beta")
        await wait_until(pilot, lambda: "beta" in _summary(screen) and
                         "Computing" not in _summary(screen), 30, "beta's summary")
        assert "alpha" not in _summary(screen)
        # the export dialog of the highlighted run sits over that run's summary
        await pilot.press("up")
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, ExportRunScreen)
        await wait_until(pilot, lambda: "alpha" in _summary(screen) and
                         "Computing" not in _summary(screen), 30, "alpha's summary")
        assert not app.errors()


async def test_a_calibration_made_meanwhile_shows_on_the_leaderboard(workspace, tmp_path):
    from mirage_tui.screens.calibration import CalibrationScreen
    from mirage_tui.screens.leaderboard import LeaderboardScreen
    from testkit.html_runs import calibrated

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        board = app.screen
        assert isinstance(board, LeaderboardScreen)
        judge = board.query_one("#lb-judge", Static)
        assert "judge not calibrated" in text_of(judge)
        await pilot.press("h")                  # the judge's Calibration screen
        await settle(pilot)
        assert isinstance(app.screen, CalibrationScreen)
        store = Store(workspace["path"])        # calibrated while the Leaderboard is hidden
        calibrated(store, tmp_path, judge="smollm2-135m-instruct")
        store.close()
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is board
        await wait_until(pilot, lambda: "agrees with people 100.0% [" in text_of(judge), 30,
                         "the new calibration on the Leaderboard, without r")
        assert not app.errors()


async def test_a_cancelled_run_is_not_offered_at_launch_but_resumes_from_runs(db_path):
    import threading

    from test_app_runs import FAKE, fake_config
    from testkit.scripted import ScriptedGenerator

    gate = threading.Event()
    slow = ScriptedGenerator(gate=gate, open_calls=3)
    app = RecordingApp(db_path, generators={FAKE: slow})
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        app.start_run(fake_config(sample=2))               # 6 items
        await wait_until(pilot, lambda: len(slow.calls) >= 4, 30, "the fourth item to wait")
        app.run_controller.cancel()                        # on purpose
        gate.set()
        await wait_for_run(pilot)
        assert app.run_controller.summary.status == "cancelled"
    done = Store(db_path).query("SELECT COUNT(*) FROM run_items")[0][0]
    assert 0 < done < 6

    again = ScriptedGenerator()
    app = RecordingApp(db_path, generators={FAKE: again})
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, DatasetsScreen)      # no question at launch
        assert not any(isinstance(s, ChoiceModal) for s in app.screen_stack)
        await pilot.press("3")
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        assert runs.check_action("resume", ()) is True     # u is in the footer
        await pilot.press("u")
        await wait_for_run(pilot)
        assert isinstance(app.screen, LiveRunScreen)
        assert app.run_controller.summary.status == "done"
        assert len(again.calls) == 6 - done
        assert not app.errors()


async def test_an_interrupted_run_is_still_offered_at_launch(db_path):
    from test_app_runs import FAKE, fake_config
    from testkit.scripted import ScriptedGenerator

    app = RecordingApp(db_path, generators={FAKE: ScriptedGenerator()})
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.start_run(fake_config(sample=2))
        await wait_for_run(pilot)
    store = Store(db_path)         # as a killed process leaves it: running, its owner gone
    with store.write() as db:
        db.conn.execute("DELETE FROM run_items WHERE rowid = (SELECT MAX(rowid) FROM run_items)")
        db.conn.execute("UPDATE runs SET status = 'running'")
        db.conn.execute("DELETE FROM run_owners")
    store.close()
    app = RecordingApp(db_path, generators={FAKE: ScriptedGenerator()})
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChoiceModal) and app.screen.id == "resume-modal"


# --------------------------------------------------------------------------- focus


async def test_a_run_started_from_an_inspector_over_live_shows_live(workspace, monkeypatch):
    from test_app_footer_keys import _failed_check, unsure

    from mirage_tui.screens.inspector import InspectorScreen

    monkeypatch.setattr(models.check, "check_model", _failed_check)
    app = RecordingApp(workspace["path"], generators={SMOL: unsure()})
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("l")                               # Live, on the newest run
        await settle(pilot)
        live = app.screen
        assert isinstance(live, LiveRunScreen)
        await app.push_screen(InspectorScreen("alpha"))      # as Enter on a bar opens it
        await settle(pilot)
        await pilot.press("enter")                           # an item
        await settle(pilot)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen) and inspector.detail_shown
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, NewRunScreen)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.run_controller.run_name is not None, 30, "start")
        await settle(pilot)
        assert app.screen is live, app.screen               # not the Inspector's item
        await wait_for_run(pilot, timeout=180)
        assert app.screen is live
        assert live.run_name == app.run_controller.run_name


async def test_new_run_opens_on_its_first_field_and_space_ticks_the_highlighted_line(db_path):
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NewRunScreen)
        assert app.focused is screen.query_one("#run-dataset"), app.focused
        form = screen.query_one("#new-run-form")
        await pilot.press("down", "escape")      # the dataset's list opens and closes
        assert form.scroll_y == 0                # the arrow acted on the field, not the form
        generators = screen.query_one("#run-generators", SelectionList)
        generators.focus()
        await pilot.pause()
        assert generators.highlighted == 0       # the cursor shows as soon as it has focus
        before = list(generators.selected)
        await pilot.press("down", "space")       # the second line, ticked
        await pilot.pause()
        assert generators.highlighted == 1
        highlighted = generators.get_option_at_index(1).value
        assert set(generators.selected) ^ set(before) == {highlighted}
        # visibly: the highlighted line's box holds the tick that says its new state
        index = generators.highlighted
        line = "".join(seg.text for seg in generators.render_line(index))
        ticked = highlighted in generators.selected
        assert line.lstrip()[1:2] == (TICKED if ticked else UNTICKED), line
        await pilot.press("1", "n")              # shown again: on its first field again
        await settle(pilot)
        assert app.screen is screen and app.focused is screen.query_one("#run-dataset")


async def test_enter_on_live_with_no_bar_highlighted_inspects_the_first_bar(workspace):
    """A Down pressed while the panel still said "No adaptability yet" moves nothing; when the
    bars arrive, Enter inspects the first one instead of doing nothing (seen in a tmux walk on
    a loaded machine: the keys came before the finished run's report)."""
    from mirage_tui.screens.inspector import InspectorScreen
    from engine.metrics.adaptability import NOISE_VULNERABLE
    from mirage_tui.widgets.adaptability import AdaptabilityPanel

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        live = app.screen
        assert isinstance(live, LiveRunScreen)
        panel = live.query_one(AdaptabilityPanel)
        await wait_until(pilot, lambda: bool(panel.entries), 30, "the bars")
        panel.highlighted = None                 # as a rebuild after the early Down leaves it
        assert app.focused is panel
        await pilot.press("enter")
        await settle(pilot)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen), inspector
        assert inspector.filters.category == NOISE_VULNERABLE, inspector.filters
