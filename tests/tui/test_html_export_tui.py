"""``e`` on Runs and on the Leaderboard writes the HTML page (issue 19): the export dialog offers
HTML beside CSV and JSON lines, the suffix follows the format, and the notification says where
the file went; the file is the engine's page of that run or arena."""

from __future__ import annotations

import json
import re

import pytest
from textual.widgets import DataTable, Input, Select

from testkit.tui import RecordingApp, open_screen, settle, wait_until

pytestmark = pytest.mark.asyncio


def embedded(path) -> dict:
    page = path.read_text(encoding="utf-8")
    return json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)'
                                r"</script>", page, re.S).group(1))


async def open_export_dialog(pilot, run: str) -> None:
    """Runs, the cursor on ``run``, ``e``: the export dialog is up."""
    from mirage_tui.dialogs.export_run import ExportRunScreen
    from mirage_tui.screens.runs import RunsScreen

    app = pilot.app
    await open_screen(pilot, RunsScreen())
    table = app.screen.query_one("#runs", DataTable)
    table.move_cursor(row=table.get_row_index(run))
    await pilot.press("e")
    await wait_until(pilot, lambda: isinstance(app.screen, ExportRunScreen), what="dialog")


async def test_runs_export_offers_html(workspace, tmp_path):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_export_dialog(pilot, "alpha")
        dialog = app.screen
        path = dialog.query_one("#export-path", Input)
        (tmp_path / "pages").mkdir()           # a missing folder is refused, never made (35)
        path.value = str(tmp_path / "pages" / "alpha.csv")
        dialog.query_one("#export-format", Select).value = "html"
        await pilot.pause()
        assert path.value == str(tmp_path / "pages" / "alpha.html")
        await pilot.press("enter")
        out = tmp_path / "pages" / "alpha.html"
        await wait_until(pilot, lambda: any("HTML report" in m for m, _ in app.notes),
                         what="the export's notification")
        note = next(m for m, _ in app.notes if "HTML report" in m)
        assert f"to {out}" in note and "36 items" in note and "offline" in note
        data = embedded(out)
        assert data["kind"] == "run" and data["report"]["run"] == "alpha"
        assert not app.errors()


async def test_leaderboard_export_writes_the_html_page(workspace, tmp_path, monkeypatch):
    from mirage_tui.dialogs.export_run import ExportRunScreen
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    monkeypatch.chdir(tmp_path)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, LeaderboardScreen("alpha"))
        await settle(pilot)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, ExportRunScreen), what="dialog")
        path = app.screen.query_one("#export-path", Input).value
        assert path == str(tmp_path / "alpha.leaderboard-duel.html")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("leaderboard of duel" in m for m, _ in app.notes),
                         what="the export's notification")
        out = tmp_path / "alpha.leaderboard-duel.html"
        assert any(str(out) in m for m, _ in app.notes)
        data = embedded(out)
        assert data["kind"] == "leaderboard" and data["arena"]["name"] == "duel"
        assert len(data["ratings"]["systems"]) == 4
        assert not app.errors()


async def test_runs_export_to_a_fifo_is_one_line_and_leaves_the_fifo(workspace, tmp_path):
    """The TUI's exports go through the same writer as the CLI's (engine/output_files)."""
    import os
    import stat

    fifo = tmp_path / "alpha.csv"
    os.mkfifo(fifo)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_export_dialog(pilot, "alpha")
        app.screen.query_one("#export-path", Input).value = str(fifo)
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.errors(), what="the export's error")
        assert app.errors() == [f"{fifo} is a FIFO (named pipe), not a regular file; give the "
                                "path of a file to write"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert not [p.name for p in tmp_path.iterdir() if "alpha" in p.name and p != fifo]
