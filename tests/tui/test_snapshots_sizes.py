"""Snapshots of every main screen at 80×24 and 120×35 (issue 18: a layout that works at 80×24,
and no column cut at 120): Datasets, Query, Models, New run, Live run, Runs (with a summary),
Leaderboard, Inspector, Compare and Calibration; each snapshot's screen is also checked for
text cut at an edge (:mod:`testkit.cuts`, the check of test_nothing_cut.py, which covers the
dialogs), on the screen the snapshot draws, so that each is built once a size.

Deterministic by construction: the inspection workspace of conftest.py (runs made by the real
engine with scripted generators at fixed times, seeded samples and bootstraps), a fixed model
catalog and default speeds, a fixed calibration date, a fixed sub-title, no toasts, no cursor
blink. Update after an intended change with ``pytest tests/tui/test_snapshots_sizes.py
--snapshot-update`` and look at the SVGs before committing them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest
from textual.widgets import DataTable, Static

from engine.store import Store
from test_app_calibration import calibrated  # noqa: F401 - the fixture
from test_snapshots_runs import SnapshotApp, fixed_catalog, settle  # noqa: F401 - fixture
from testkit.cuts import cuts
from testkit.scripted_runs import A, B
from testkit.tui import screen_stable, text_of, wait_until

SIZES = {"80x24": (80, 24), "120x35": (120, 35)}


@dataclass(frozen=True)
class Until:
    """A step that waits until ``ready(screen)``: the state a snapshot asserts (the Runs list
    loaded, its summary computed), so that a faster or slower machine draws the same."""
    ready: Callable[[object], bool]
    what: str


def steps(*actions):
    """``run_before``: settle, then each action: a key (str), an :class:`Until`, or a screen
    to push (callable of the app's store path)."""
    async def run_before(pilot) -> None:
        await settle(pilot)
        for action in actions:
            if isinstance(action, Until):
                await wait_until(pilot, lambda: action.ready(pilot.app.screen), 60,
                                 action.what)
            elif callable(action):
                await pilot.app.push_screen(action(pilot.app.db_path))
            else:
                await pilot.press(action)
            await pilot.pause(0.4)        # New run plans a moment after a change
            await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()
        # a table refilled by a late worker message sizes its columns on a later Idle: wait
        # for it again right before the snapshot (the Inspector at 80x24 was caught with its
        # columns as wide as their headers in a full-suite run)
        await settle(pilot)
        # and until the screen stops changing: the Leaderboard at 120x35 was caught in a
        # full-suite run with its header drawn before its rows came
        await screen_stable(pilot)

    return run_before


def _query(path):
    from mirage_tui.screens.query import QueryScreen

    store = Store(path)
    try:
        first = store.query("SELECT query_id FROM queries ORDER BY id LIMIT 1")[0][0]
    finally:
        store.close()
    return QueryScreen("demo@1", first)


def _inspector(path):
    from mirage_tui.screens.inspector import InspectorScreen

    return InspectorScreen("alpha")


def _leaderboard(path):
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    return LeaderboardScreen("alpha")


def _compare(path):
    from mirage_tui.screens.compare import CompareScreen

    return CompareScreen(f"alpha:{A}", f"alpha:{B}")


def _calibration(path):
    from mirage_tui.screens.calibration import CalibrationScreen

    return CalibrationScreen("lazy-judge")


SCREENS = {
    "datasets": steps(),
    "query": steps(_query),
    "models": steps("2", "down"),
    "new_run": steps("n"),
    "live_run": steps("l"),
    "runs": steps("3", Until(lambda s: s.query_one("#runs", DataTable).row_count > 0,
                             "the run list"), "enter",
                  Until(lambda s: not text_of(s.query_one("#run-summary", Static)).startswith(
                      ("Computing", "Enter shows", "Loading")), "the run's summary")),
    "leaderboard": steps(_leaderboard),
    "inspector": steps(_inspector),
    "compare": steps(_compare),
}


def cuts_into(found: list[str], run_before):
    """``run_before``, then what is cut on the screen it leaves (:func:`testkit.cuts.cuts`)
    added to ``found``: the screen the snapshot is taken of."""
    async def run(pilot) -> None:
        await run_before(pilot)
        found.extend(cuts(pilot.app.screen))

    return run


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen_at_size(screen, size, workspace, fixed_catalog, snap_compare):
    app = SnapshotApp(workspace["path"])
    found: list[str] = []
    assert snap_compare(app, terminal_size=SIZES[size],
                        run_before=cuts_into(found, SCREENS[screen]))
    assert not found, "\n".join(found)


@pytest.mark.parametrize("size", list(SIZES))
def test_calibration_at_size(size, calibrated, snap_compare):  # noqa: F811
    app = SnapshotApp(calibrated)
    found: list[str] = []
    assert snap_compare(app, terminal_size=SIZES[size],
                        run_before=cuts_into(found, steps(_calibration)))
    assert not found, "\n".join(found)
