"""Exporting a run from Runs that has not finished says "partial: N of M
items" in its notification (it said "Wrote 7 items" before)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, Select

from engine.datasets.demo_pool import ensure_demo
from engine.store import Store
from mirage_tui.dialogs.export_run import ExportRunScreen
from testkit.runs import FakeGenerator, config, run
from testkit.tui import RecordingApp, settle, wait_until


@pytest.mark.asyncio
async def test_exporting_a_cancelled_run_from_runs_says_partial(db_path, tmp_path):
    store = Store(db_path)
    ensure_demo(store)
    gen = FakeGenerator()
    _, summary = run(store, config(name="half"), {"fake-gen": gen},
                     cancel=lambda: len(gen.calls) >= 4)
    store.close()
    assert summary.status == "cancelled" and summary.done < summary.total == 18

    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        assert app.screen.id != "resume-modal"      # cancelled on purpose: not asked
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        table.move_cursor(row=table.get_row_index("half"))
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, ExportRunScreen)
        out = tmp_path / "half.jsonl"
        app.screen.query_one("#export-format", Select).value = "jsonl"
        app.screen.query_one("#export-path", Input).value = str(out)
        app.screen.query_one("#export-path", Input).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(m.startswith("Wrote") for m, _ in app.notes), 30,
                         "the export")
        note = next(m for m, _ in app.notes if m.startswith("Wrote"))
        assert f"Wrote {summary.done} items of half to {out}" in note
        assert f"partial: {summary.done} of 18 items (run cancelled)" in note
        assert out.exists()
