"""A workspace that cannot be written (a read-only mount; here a 0444 file in a 0555 folder,
and for root, who writes those anyway, ``os.access`` saying what a read-only mount says) opens
in the app for reading: it says so once, the datasets are listed, and no error is shown."""

from __future__ import annotations

import os

import pytest
from textual.widgets import DataTable

import engine.store.database as database
from testkit.tui import RecordingApp, settle, wait_until


@pytest.mark.asyncio
async def test_the_app_opens_a_read_only_workspace_and_says_so_once(answered_path, monkeypatch):
    real = os.access
    monkeypatch.setattr(database.os, "access", lambda path, mode, **kw:
                        False if mode & os.W_OK else real(path, mode, **kw))
    folder = answered_path.parent
    answered_path.chmod(0o444)
    folder.chmod(0o555)
    try:
        app = RecordingApp(answered_path)
        async with app.run_test(size=(120, 35)) as pilot:
            table = app.screen.query_one("#datasets", DataTable)
            await wait_until(pilot, lambda: "demo@1" in {k.value for k in table.rows},
                             what="the demo pool, read from the read-only workspace")
            await settle(pilot)
            said = [m for m, sev in app.notes if "opened for reading only" in m]
            assert said == [f"{answered_path} cannot be written here: opened for reading only "
                            "(browsing works; a run, an import or a verdict is refused)"]
            assert app.errors() == [] and app.store.read_only
    finally:
        folder.chmod(0o755)
        answered_path.chmod(0o644)
