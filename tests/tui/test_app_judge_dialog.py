"""The judge dialog defaults to an instruction-tuned model (not a base
model such as gemma3-270m), offers as many queries as the run has and no more, can judge both
orders, and estimates the time with the runs' estimator."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, Select, Static

from engine.arena.judging.estimate import judgeable_queries, judging_estimate
from engine.runs.lookup import load_run
from engine.store import Store
from testkit.arena import ScriptedJudge, drop_references, judge_catalog
from testkit.tui import RecordingApp, open_judge_dialog, settle, text_of, wait_until

INSTRUCT = "scripted-instruct"


def test_the_judging_estimate_counts_battles_and_both_orders(workspace):
    store = Store(workspace["path"])
    run = load_run(store, "beta")
    assert judgeable_queries(store, run) == 6
    one = judging_estimate(store, run, INSTRUCT, 2, "random")
    both = judging_estimate(store, run, INSTRUCT, 2, "both")
    # 3 contestants of fake-a (base, oracle, mixed): 3 pairs on each of 2 queries
    assert (one["battles"], one["calls"], one["queries"]) == (6, 6, 2)
    assert (both["battles"], both["calls"]) == (6, 12)
    # the other order of a battle shares its query and documents in the judge's prompt cache
    assert one["seconds"] < both["seconds"] < 2 * one["seconds"] and one["seconds"] > 0
    assert one["speed"].startswith("assumed")


@pytest.mark.asyncio
async def test_judge_dialog_defaults_caps_orders_and_estimates(workspace, monkeypatch):
    judge = ScriptedJudge(name=INSTRUCT)
    judge_catalog(monkeypatch, judge, INSTRUCT)
    drop_references(workspace["path"])    # no reference judge can judge: the LLMs are offered
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_judge_dialog(pilot, "beta")
        screen = app.screen_stack[-2]               # the leaderboard the dialog opened on
        assert modal.query_one("#judge-model", Select).value == INSTRUCT
        assert "No default judge: " in text_of(modal.query_one("#judge-why", Static))
        queries = modal.query_one("#judge-queries", Input)
        assert queries.value == "6"                          # the run's 6, not 20
        assert "of 6" in text_of(modal.query_one("#judge-queries-max", Static))
        estimate = modal.query_one("#judge-estimate", Static)
        await wait_until(pilot, lambda: "for 18 battles" in text_of(estimate), 30,
                         "the estimate")
        assert text_of(estimate).startswith("Estimate: about ")

        queries.value = "20"                                 # more than the run has
        queries.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is modal
        assert any("at most that many" in m for m, _ in app.notes)

        queries.value = "2"
        modal.query_one("#judge-order", Select).value = "both"
        await wait_until(pilot, lambda: "(12 judge calls: both orders)" in text_of(estimate),
                         30, "the both-orders estimate")
        queries.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        assert any("Arena pairwise:scripted-instruct:both: done, 6/6 battles" in m
                   for m, _ in app.notes), app.notes
        assert not app.errors()
    config = json.loads(Store(workspace["path"]).query(
        "SELECT config FROM arenas WHERE name = 'pairwise:scripted-instruct:both'")[0][0])
    assert (config["order"], config["queries"]) == ("both", 2)


@pytest.mark.asyncio
async def test_on_short_gold_answers_the_dialog_preselects_the_answer_match_judge(workspace,
                                                                                  monkeypatch):
    """On short gold answers the dialog offers and preselects reference:answer-match,
    described as the run's own scorer, with the rule that chose it."""
    judge_catalog(monkeypatch, ScriptedJudge(name=INSTRUCT), INSTRUCT)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_judge_dialog(pilot, "beta")
        select = modal.query_one("#judge-model", Select)
        assert select.value == "reference:answer-match"
        labels = {str(value): text.plain if hasattr(text, "plain") else str(text)
                  for text, value in select._options}
        assert "the run's own scorer" in labels["reference:answer-match"]
        assert "short gold answers" in text_of(modal.query_one("#judge-why", Static))
        assert not app.errors()
