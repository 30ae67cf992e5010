"""The Live run's Retrieval panel: which gold definition it shows, and `d` that switches it
(both tables are computed with the report, so the switch redraws without a new report)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from engine.store import Store
from mirage_tui.screens.live_run import LiveRunScreen
from testkit.tui import RecordingApp, cells, settle, text_of
from test_snapshots_runs import stored_run   # the snapshot tests' finished run (demo, 12 queries)

pytestmark = pytest.mark.asyncio


def widen_gold(db) -> int:
    """Mark each query's last pool chunk (what the scripted retriever ranks first) supporting
    by answer match, as the SQuAD importer marks siblings that contain an answer."""
    store = Store(db)
    with store.write() as conn:
        cur = conn.conn.execute(
            "UPDATE pool SET support = 1, support_source = 'answer-match' "
            "WHERE support = 0 AND position = 4")
        changed = cur.rowcount
    store.close()
    return changed


async def test_d_switches_the_retrieval_panels_gold_definition(tmp_path):
    db = tmp_path / "w.db"
    stored_run(db)
    assert widen_gold(db) > 0
    app = RecordingApp(db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        live = app.screen
        assert isinstance(live, LiveRunScreen) and live.report is not None
        table = live.query_one("#live-retrieval", DataTable)
        assert table.display
        assert str(table.border_subtitle).startswith("gold oracle (")
        assert "answer-match rows not counted" in str(table.border_subtitle)
        oracle_r1 = cells(table, "r@1")[1]
        notes = text_of(live.query_one("#live-notes", Static))
        assert "Correct language: langid" in notes and "Retrieval gold: oracle (" in notes

        await pilot.press("d")
        await pilot.pause()
        assert live.gold == "oracle+answer-match"
        assert str(table.border_subtitle).startswith("gold oracle+answer-match (incl.")
        widened_r1 = cells(table, "r@1")[1]
        # the scripted retriever ranks the answer-match chunk first: R@1 moves
        assert widened_r1 != oracle_r1
        assert widened_r1 == _cell(live.report.retrieval_by_gold["oracle+answer-match"])
        assert oracle_r1 == _cell(live.report.retrieval_by_gold["oracle"])

        await pilot.press("d")
        await pilot.pause()
        assert str(table.border_subtitle).startswith("gold oracle (")
        assert cells(table, "r@1")[1] == oracle_r1
        assert not app.errors()


def _cell(entries: list) -> str:
    from mirage_tui.screens.live_run.panels import retrieval_cell

    return retrieval_cell(entries[0].metrics["r@1"])
