"""The export dialog remembers the format last exported in, for the session and per dialog:
after a JSON-lines export from Runs, the next Runs export starts in JSON lines (the path's
suffix with it), while the Inspector's view export keeps its own choice; a new session starts
from the first format again."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from testkit.tui import RecordingApp, settle

pytestmark = pytest.mark.asyncio


async def export_in(pilot, app, dialog, fmt: str | None, path) -> tuple[str, str]:
    """Open ``dialog``, pick ``fmt`` (None: leave it), type ``path``, Enter; what it answered."""
    answers = []
    app.push_screen(dialog, answers.append)
    await settle(pilot)
    if fmt is not None:
        dialog.query_one("#export-format", Select).value = fmt
        await settle(pilot)
    field = dialog.query_one("#export-path", Input)
    field.value = str(path)
    field.focus()
    await pilot.press("enter")
    await settle(pilot)
    assert answers, "the dialog did not answer"
    return answers[0]


def opened_format(dialog) -> tuple[str, str]:
    return (str(dialog.query_one("#export-format", Select).value),
            dialog.query_one("#export-path", Input).value)


async def test_the_last_format_is_where_the_next_export_starts(workspace, tmp_path):
    from mirage_tui.dialogs.export_run import ExportRunScreen
    from mirage_tui.screens.inspector.export_view import ExportViewScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        first = ExportRunScreen("alpha", folder=tmp_path)
        assert await export_in(pilot, app, first, "jsonl", tmp_path / "a.jsonl") == (
            str(tmp_path / "a.jsonl"), "jsonl")
        again = ExportRunScreen("alpha", folder=tmp_path)
        app.push_screen(again)
        await settle(pilot)
        assert opened_format(again) == ("jsonl", str(tmp_path / "alpha.jsonl"))
        await pilot.press("escape")
        await settle(pilot)
        # the Inspector's view export has its own memory: still CSV, until chosen there
        view = ExportViewScreen("alpha", "", "")
        app.push_screen(view)
        await settle(pilot)
        assert opened_format(view)[0] == "csv" and opened_format(view)[1].endswith("-view.csv")
        await pilot.press("escape")
        await settle(pilot)
        view = ExportViewScreen("alpha", "", "")
        await export_in(pilot, app, view, "html", tmp_path / "v.html")
        view = ExportViewScreen("alpha", "", "")
        app.push_screen(view)
        await settle(pilot)
        assert opened_format(view)[0] == "html" and opened_format(view)[1].endswith("-view.html")
        await pilot.press("escape")
        await settle(pilot)
        # a cancelled dialog changes nothing
        cancelled = ExportRunScreen("alpha", folder=tmp_path)
        app.push_screen(cancelled)
        await settle(pilot)
        cancelled.query_one("#export-format", Select).value = "html"
        await pilot.press("escape")
        await settle(pilot)
        last = ExportRunScreen("alpha", folder=tmp_path)
        app.push_screen(last)
        await settle(pilot)
        assert opened_format(last)[0] == "jsonl"
        assert not app.errors()

    fresh = RecordingApp(workspace["path"])
    async with fresh.run_test(size=(100, 30)) as pilot:
        dialog = ExportRunScreen("alpha", folder=tmp_path)
        fresh.push_screen(dialog)
        await settle(pilot)
        assert opened_format(dialog) == ("csv", str(tmp_path / "alpha.csv"))
