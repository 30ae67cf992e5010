"""The quick comparison ends on a judged Leaderboard (issue 24): once its run is done the app
judges its arena with the default judge (nothing calibrated, the demo's gold answers: MiniLM
against them, no LLM), says so, and the Leaderboard heads its ratings with that judge. The
generators are instant scripted fakes at the edge; retrieval, the store, the arena and the
reference judge are real."""

from __future__ import annotations

import re

import pytest
from textual.widgets import DataTable, Static

import mirage_tui.app_runs as app_module
from engine.store import Store
from mirage_tui.quick_comparison import QUICK_GENERATORS, QUICK_NAME, QuickJudging
from testkit.html_runs import InstantGenerator
from testkit.tui import RecordingApp, open_screen, text_of, wait_for_run, wait_until

pytestmark = pytest.mark.asyncio


async def test_the_quick_comparison_is_judged_by_the_default_judge(db_path, monkeypatch):
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    monkeypatch.setattr(app_module, "missing_models", lambda config: [])
    generators = {name: InstantGenerator(name, {}) for name in QUICK_GENERATORS}
    app = RecordingApp(db_path, generators=generators)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.store is not None, 60, "the workspace")
        await pilot.press("g")
        await wait_for_run(pilot, timeout=300)
        assert app.run_controller.summary.status == "done"
        await wait_until(pilot, lambda: any(m.startswith("Leaderboard: ") for m, _ in
                                            app.notes), 120, "the quick comparison's arena")
        note = next(m for m, _ in app.notes if m.startswith("Leaderboard: "))
        assert note.startswith(f"Leaderboard: pairwise:reference:answer-match of {QUICK_NAME}, "
                               "done, 660/660 battles")      # 12 contestants, 10 queries
        # Live, where the run ended, and the note say which key opens the Leaderboard
        assert note.endswith(" 4 opens it."), note
        await wait_until(pilot, lambda: "4 Leaderboard" in text_of(
            app.screen.query_one("#live-now", Static)), 30, "Live's ended line")
        # judged as a job of the app's (progress followed, waited for at quit, cancellable)
        judging = app.quick_judging
        assert judging.name == QuickJudging.NAME and not judging.running
        assert judging.latest is not None and judging.latest.done == 660, judging.latest
        app.action_stop_quick_judging()
        await pilot.pause()
        assert app.notes[-1][0] == "The quick comparison's arena is not being judged."
        # the demo pool has short gold answers: the run's own scorer judges (issue 34)
        assert "judged by reference:answer-match: short gold answers" in note
        # seconds, not an LLM's minutes (duration() writes a minute or more as 1m05s)
        assert re.search(r"660/660 battles in \d+s,", note), note
        await open_screen(pilot, LeaderboardScreen(QUICK_NAME))
        screen = app.screen
        await wait_until(pilot, lambda: screen.query_one("#ratings", DataTable).row_count == 12,
                         60, "the ratings")
        header = text_of(screen.query_one("#lb-judge", Static)).splitlines()
        assert header[0].startswith("judged by reference:answer-match: the run's own EM_loose")
        assert header[1].startswith("the default judge for this data: short gold answers")
        assert header[2].startswith("cross-check with em_loose")
        assert not [m for m, sev in app.notes if sev == "error"]
    battles = Store(db_path).query("SELECT COUNT(*) FROM battles")[0][0]
    assert battles == 660
