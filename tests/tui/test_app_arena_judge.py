"""The Leaderboard's judge dialog offers the reference judges beside the LLMs and preselects
the default judge (issues 24, 34): on short gold answers the run's own scorer
(reference:answer-match); on long-form references, a judge calibrated well, in its order. Judging with it needs no LLM, and the
board then says how far people agree with it."""

from __future__ import annotations

import pytest
from textual.widgets import Select, Static

from engine.arena.trust.calibrate import calibrate_judge
from engine.store import Store
from testkit.arena import give_long_form_references, import_reference_labels
from testkit.tui import RecordingApp, open_screen, settle, text_of, wait_until

pytestmark = pytest.mark.asyncio


async def _dialog(pilot):
    from mirage_tui.dialogs.judge_arena import JudgeArenaScreen
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    await open_screen(pilot, LeaderboardScreen("beta"))
    await pilot.press("j")
    await settle(pilot)
    modal = pilot.app.screen
    assert isinstance(modal, JudgeArenaScreen)
    await wait_until(pilot, lambda: text_of(modal.query_one("#judge-why", Static)), 30,
                     "the default judge")
    return modal


async def test_short_gold_answers_preselect_the_answer_match_judge(workspace):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await _dialog(pilot)
        select = modal.query_one("#judge-model", Select)
        assert select.value == "reference:answer-match"
        offered = [value for _, value in select._options if value != Select.BLANK]
        assert {"reference:f1", "reference:char3", "reference:blend",
                "reference:minilm-l6-v2"} <= set(offered)
        why = text_of(modal.query_one("#judge-why", Static))
        assert why.startswith("Default: reference:answer-match in random order: short gold ")
        estimate = modal.query_one("#judge-estimate", Static)
        await wait_until(pilot, lambda: "no LLM" in text_of(estimate), 30, "the estimate")
        assert text_of(estimate).startswith("18 battles on 6 queries, no LLM")
        assert not app.errors()


async def test_a_calibrated_judge_is_preselected_in_its_order_and_judges(workspace, tmp_path):
    store = Store(workspace["path"])
    give_long_form_references(store)          # long-form: calibration against people decides
    labels = import_reference_labels(store, tmp_path)
    calibrate_judge(store, labels, "reference:f1", order="both", n_boot=50)     # 9/10
    store.close()
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await _dialog(pilot)
        assert modal.query_one("#judge-model", Select).value == "reference:f1"
        assert modal.query_one("#judge-order", Select).value == "both"
        assert "the best-calibrated judge here: agrees with people 90.0%" in text_of(
            modal.query_one("#judge-why", Static))
        modal.query_one("#judge-queries").value = "2"
        modal.query_one("#judge-queries").focus()
        await pilot.press("enter")
        screen = app.screen
        await wait_until(pilot, lambda: any("Arena pairwise:reference:f1:both: done" in m
                                            for m, _ in app.notes), 60, "the judging")
        await wait_until(pilot, lambda: text_of(screen.query_one("#lb-judge", Static))
                         .startswith("judged by reference:f1, agrees with people 90.0% ["),
                         30, "the judge line")
        assert not app.errors()
