"""Nothing cut: the main dialogs at 80×24 and 120×35, on the inspection workspace (two
finished runs, an arena; conftest.py) and a calibrated one, show whole words: a line of text
ends at a word it shows whole or wraps, a table's columns all fit, and a cell too wide is
elided by the one helper, keeping what tells rows apart (:mod:`testkit.cuts`). The main
screens get the same check in test_snapshots_sizes.py, on the screen each snapshot draws."""

from __future__ import annotations

import pytest

from test_app_calibration import calibrated  # noqa: F401 - the fixture
from test_snapshots_runs import SnapshotApp, fixed_catalog  # noqa: F401 - fixture
from test_snapshots_sizes import SIZES, _calibration, steps
from testkit.cuts import cuts
from testkit.scripted_runs import A, B
from testkit.tui import settle

pytestmark = pytest.mark.asyncio

def _pick_system(path):
    """What Runs asks when a run with several systems is compared with another run."""
    from mirage_tui.dialogs.pick_system import PickSystemScreen

    return PickSystemScreen([A, B], "quick-comparison-2026-11-27-1301 has 2 systems; compare "
                                    "which (A) with new-run-smollm2-135m-instruct-2026-11-27?")


DIALOGS = {       # (how to open it, the dialog's class)
    "runs_export": (steps("3", "e"), "ExportRunScreen"),
    "runs_rename": (steps("3", "R"), "TextPromptScreen"),
    "runs_delete": (steps("3", "D"), "ChoiceModal"),
    "runs_log": (steps("3", "L"), "RunLogScreen"),
    # alpha has two systems, beta one: which of alpha's is A?
    "runs_pick_system": (steps(_pick_system), "PickSystemScreen"),
    "leaderboard_judge": (steps("4", "j"), "JudgeArenaScreen"),
    "datasets_import": (steps("i"), "ImportDatasetScreen"),
}


async def _check(app, size, run_before, dialog: str) -> list[str]:
    async with app.run_test(size=size) as pilot:
        await run_before(pilot)
        await settle(pilot)
        assert type(app.screen).__name__ == dialog
        return cuts(app.screen)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("case", list(DIALOGS))
async def test_nothing_cut(case, size, workspace, fixed_catalog):
    app = SnapshotApp(workspace["path"])
    found = await _check(app, SIZES[size], *DIALOGS[case])
    assert not found, "\n".join(found)


@pytest.mark.parametrize("size", list(SIZES))
async def test_nothing_cut_new_calibration(size, calibrated):  # noqa: F811
    """The New calibration dialog (``j``) over the Calibration screen."""
    app = SnapshotApp(calibrated)
    found = await _check(app, SIZES[size], steps(_calibration, "j"), "CalibrateScreen")
    assert not found, "\n".join(found)


LONG = "quick-comparison-smollm2-gemma3-2026-11-27-1301"


@pytest.mark.parametrize("size", list(SIZES))
async def test_runs_keep_the_generators_with_a_long_run_name(size, workspace, fixed_catalog):
    """Issue 27: at 80×24 Runs dropped its generators column for a long run name."""
    from engine.runs.manage import rename_run
    from engine.store import Store
    from textual.widgets import DataTable

    store = Store(workspace["path"])
    try:
        rename_run(store, "alpha", LONG)
    finally:
        store.close()
    app = SnapshotApp(workspace["path"])
    async with app.run_test(size=SIZES[size]) as pilot:
        await steps("3")(pilot)
        table = app.screen.query_one("#runs", DataTable)
        assert "generators" in [str(c.label) for c in table.columns.values()]
        assert not cuts(app.screen), "\n".join(cuts(app.screen))


async def test_the_check_finds_what_is_cut():
    """The check itself: a line cut at a pane's right edge, a column past a table's edge, a
    cell cut by hand and two ids elided alike are found; the same things fitted are not."""
    from textual.app import App
    from textual.containers import Vertical
    from textual.widgets import DataTable, Static

    from mirage_tui.widgets.safe_text import elided_cell, elided_column

    class Cut(App):
        CSS = "#pane { width: 30; height: 1; overflow-x: hidden; } #line { width: 60; } " \
              "DataTable { width: 30; height: 6; }"

        def compose(self):
            with Vertical(id="pane"):
                yield Static("Retrieval gold: the oracle chunks marked supporting", id="line")
            yield DataTable(id="cut")
            yield DataTable(id="fitted")

        def on_mount(self):
            cut = self.query_one("#cut", DataTable)
            cut.add_columns("query", "question", "verdict")
            cut.add_row(elided_cell("de/demo-de-01", 5), "In we…", "no clear difference")
            cut.add_row(elided_cell("de/demo-en-01", 5), "In we…", "no clear difference")
            fitted = self.query_one("#fitted", DataTable)
            fitted.add_columns("query", "question")
            for cell in elided_column(["de/demo-de-01", "de/demo-de-02"], 9):
                fitted.add_row(cell, elided_cell("In welcher Stadt wurde Goethe geboren?", 16,
                                                 prose=True))

    app = Cut()
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        found = cuts(app.screen)
    assert any(f.startswith("Static#line: cut after 'Retrieval gold") for f in found), found
    assert any("column 'verdict' past the right edge" in f for f in found), found
    assert any("cut by hand: 'In we…'" in f for f in found), found
    assert any("column 'query' shows 'de…01'" in f for f in found), found
    assert not [f for f in found if "#fitted" in f], found
