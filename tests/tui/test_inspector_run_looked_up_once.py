"""The Inspector looks its run up by name once, when it opens, and hands that run to its parts:
paging, a filter, an item and the one beside it, the next item, the export of the view and your
own verdict read the run they were given (traced: every statement reading the ``runs`` table
by a name, on every connection, and every call of the store's look-up by name, counted when it
came from the Inspector). (The CLI: ``tests/cli/test_run_looked_up_once.py``; New run:
``tests/tui/test_app_new_run_plans_once.py``.)"""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Select

from testkit.lookups import trace_lookups
from testkit.scripted_runs import A, B
from testkit.tui import RecordingApp, open_screen, settle, wait_until

pytestmark = pytest.mark.asyncio

INSPECTOR = "mirage_tui/screens/inspector/"


@pytest.fixture
def traced(monkeypatch) -> dict[str, int]:
    """``statements`` (SQL reading ``runs`` by name) and ``calls`` (the store's look-ups by
    name) that came from the Inspector, from here on."""
    return trace_lookups(monkeypatch, INSPECTOR)


async def test_the_inspector_looks_its_run_up_once(workspace, tmp_path, traced):
    from mirage_tui.screens.inspector import InspectorScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, InspectorScreen("alpha"))
        screen = app.screen
        assert traced == {"statements": 1, "calls": 1}, "the screen's one look-up"
        screen.query_one("#f-system", Select).value = A             # the list again
        await settle(pilot)
        screen.query_one("#insp-items", DataTable).focus()
        await pilot.press("enter")                                   # an item
        await settle(pilot)
        await pilot.press("s")                                       # the other beside it
        await settle(pilot)
        assert screen.second == B
        await pilot.press("right_square_bracket")                    # the next item
        await settle(pilot)
        await pilot.press("b")                                       # your verdict
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await wait_until(pilot, lambda: any("Stored" in m for m, _ in app.notes), 30,
                         "the verdict's notice")
        await pilot.press("E")                                       # the view's export
        await settle(pilot)
        out = tmp_path / "view.csv"
        app.screen.query_one("#export-path").value = str(out)
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("Wrote" in m for m, _ in app.notes), 30,
                         "the export's notice")
        assert not app.errors()
    assert traced == {"statements": 1, "calls": 1}
