"""Live run looks the run it shows up by name once and reads it again by its id for every
report after that (reloaded, the screen shown again); another run shown is looked up once more
(traced as the Inspector is: :mod:`testkit.lookups`, counted when it came from Live run). And
each of Live's failures is told once, by the part it belongs to: a report's in the notes under
the panels (no notification), the newest run's as a notification."""

from __future__ import annotations

import pytest
from textual.widgets import Static

import engine.store.runs as run_table
from test_app_runs_manage import TitledApp
from testkit.lookups import trace_lookups
from testkit.tui import RecordingApp, open_live, settle, text_of, wait_until

pytestmark = pytest.mark.asyncio

LIVE = "mirage_tui/screens/live_run/"


async def _new_report(pilot, screen, *keys: str) -> None:
    """Press ``keys`` and wait for a report computed after them."""
    before = screen.report
    for key in keys:
        await pilot.press(key)
        await settle(pilot)
    await wait_until(pilot, lambda: screen.report is not None and screen.report is not before,
                     what="a report computed again")


async def test_live_looks_the_run_it_shows_up_once(workspace, monkeypatch):
    traced = trace_lookups(monkeypatch, LIVE)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await open_live(pilot)                     # the newest run
        assert traced == {"statements": 1, "calls": 1}, "the run's one look-up"
        await _new_report(pilot, screen, "f5")               # reloaded
        await _new_report(pilot, screen, "f5")
        await _new_report(pilot, screen, "3", "l")           # the screen shown again
        assert traced == {"statements": 1, "calls": 1}
        other = "alpha" if screen.run_name != "alpha" else "beta"
        app.show_run(other)                                  # another run: once more
        await wait_until(pilot, lambda: screen.report is not None
                         and screen.report.run == other, what="the other run's report")
        await _new_report(pilot, screen, "f5")
        assert not app.errors()
    assert traced == {"statements": 2, "calls": 2}


async def test_each_failure_of_live_is_told_once_by_its_part(workspace, monkeypatch):
    def unreadable(store):
        raise OSError("the run list is unreadable")

    app = TitledApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        monkeypatch.setattr(run_table, "known_runs", unreadable)
        await pilot.press("l")                               # the newest run's: a notification
        await settle(pilot)
        screen = app.screen
        assert app.titled == [("Could not load the newest run",
                               "OSError: the run list is unreadable")]
        notes = screen.query_one("#live-notes", Static)
        assert text_of(notes) == ""
        app.titled.clear()
        screen.show_run("gone")                              # the report's: in its notes
        await wait_until(pilot, lambda: text_of(notes).startswith(
            "No report: RunNotFound: no run named 'gone'"), what="the report's failure")
        await settle(pilot)
        assert app.titled == []
