"""Snapshots (pytest-textual-snapshot, 100×30) of the inspector (list and side-by-side detail),
the runs screen with a summary, and the leaderboard, on the deterministic inspection workspace
of conftest.py (fixed run times, seeded samples and bootstraps, no clocks).

Update after an intended change with ``pytest tests/test_snapshots_inspect.py
--snapshot-update`` and look at the SVGs before committing them.
"""

from __future__ import annotations

from textual.binding import Binding

from engine.metrics.adaptability import NOISE_VULNERABLE
from engine.store import Store
from mirage_tui.app import MirageApp
from testkit.scripted_runs import A
from testkit.tui import screen_stable, settle

SIZE = (100, 30)


class ScreensApp(MirageApp, inherit_bindings=False):
    """The real app with a fixed set of app-level keys, so that these snapshots show the
    screens under test and change only when they do (the app's own navigation keys, which
    the footer also lists, have snapshots of their own)."""

    BINDINGS = [Binding("question_mark", "toggle_help", "Keys", key_display="?")]


def _push(screen_factory):
    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.app.push_screen(screen_factory())
        await settle(pilot)
        await screen_stable(pilot)
    return run_before


def test_snapshot_inspector_list(workspace, snap_compare):
    from mirage_tui.screens.inspector import InspectorScreen

    app = ScreensApp(workspace["path"])
    assert snap_compare(app, terminal_size=SIZE,
                        run_before=_push(lambda: InspectorScreen(
                            "alpha", category=NOISE_VULNERABLE)))


def test_snapshot_inspector_detail_side_by_side(workspace, snap_compare):
    from mirage_tui.screens.inspector import InspectorScreen

    rowid = workspace["queries"]["alpha"][0]
    qid = Store(workspace["path"]).query("SELECT query_id FROM queries WHERE id = ?",
                                         (rowid,))[0][0]

    async def run_before(pilot) -> None:
        await _push(lambda: InspectorScreen("alpha", system=A, query=qid))(pilot)
        await pilot.press("s")
        await settle(pilot)
        await pilot.press("t")  # to the settings: the two systems' prompts side by side
        await pilot.pause()

    assert snap_compare(ScreensApp(workspace["path"]), terminal_size=SIZE,
                        run_before=run_before)


def test_snapshot_runs_with_summary(workspace, snap_compare):
    from mirage_tui.screens.runs import RunsScreen

    async def run_before(pilot) -> None:
        await _push(RunsScreen)(pilot)
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(ScreensApp(workspace["path"]), terminal_size=SIZE,
                        run_before=run_before)


def test_snapshot_leaderboard(workspace, snap_compare, tmp_path):
    """Its judge calibrated: the line under the table says how far people agree with it."""
    from mirage_tui.screens.leaderboard import LeaderboardScreen
    from testkit.html_runs import calibrated

    store = Store(workspace["path"])
    calibrated(store, tmp_path, judge="smollm2-135m-instruct")
    store.close()
    assert snap_compare(ScreensApp(workspace["path"]), terminal_size=SIZE,
                        run_before=_push(lambda: LeaderboardScreen("alpha", "duel")))


def test_snapshot_compare(workspace, snap_compare):
    from mirage_tui.screens.compare import CompareScreen

    assert snap_compare(ScreensApp(workspace["path"]), terminal_size=SIZE,
                        run_before=_push(lambda: CompareScreen(f"alpha:{A}", "alpha:"
                                                               "fake-b/mirage@1")))
