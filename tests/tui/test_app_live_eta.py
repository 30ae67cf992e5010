"""In the app, Live's ETA moves while an item runs (it froze until the
item ended: ``2/30 … ETA 3m40s`` for ~45 s), growing once the item overruns its estimate;
and the judge dialog's estimate is the one estimator's (``judging_estimate``)."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Input, Select, Static

from engine.arena.judging.estimate import judging_estimate
from engine.runs.lookup import load_run
from engine.store import Store
from mirage_tui.widgets.estimates import judging_line
from testkit.arena import ScriptedJudge, drop_references, judge_catalog
from testkit.runs import SMOL
from testkit.timed import TimedGenerator
from testkit.tui import (RecordingApp, open_judge_dialog, start_sampled_run, text_of,
                         wait_for_run, wait_until)

INSTRUCT = "scripted-instruct"


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_live_eta_moves_and_grows_while_an_item_runs_long(db_path):
    gate = threading.Event()          # two items pass, the third waits
    model = TimedGenerator(SMOL, prompt_tps=1000.0, gen_tps=50.0, answer_tokens=6,
                           gate=gate, open_calls=2)
    app = RecordingApp(db_path, generators={SMOL: model})
    async with app.run_test(size=(120, 35)) as pilot:
        await start_sampled_run(pilot, sample=2, items=6)
        controller = app.run_controller
        await wait_until(pilot, lambda: len(model.calls) >= 3 and controller.latest is not None
                         and controller.latest.done == 2, 60, "the third item")
        counts = app.screen.query_one("#live-counts", Static)
        first_line, first_eta = text_of(counts), controller.latest.eta_seconds
        # no item ends meanwhile: the line and the ETA change all the same
        await wait_until(pilot, lambda: text_of(counts) != first_line, 10, "the ETA moving")
        await wait_until(pilot, lambda: controller.latest.eta_seconds > first_eta, 10,
                         "the ETA growing while the item overruns")
        assert controller.latest.done == 2 and text_of(counts).startswith("2/6 items · ETA ")
        controller.cancel()
        gate.set()
        await wait_for_run(pilot)
        assert not app.errors()


@pytest.mark.asyncio
async def test_the_judge_dialogs_estimate_is_the_one_estimators(workspace, monkeypatch):
    judge_catalog(monkeypatch, ScriptedJudge(name=INSTRUCT), INSTRUCT)
    drop_references(workspace["path"])
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_judge_dialog(pilot, "beta")
        modal.query_one("#judge-queries", Input).value = "2"
        modal.query_one("#judge-order", Select).value = "both"
        estimate = modal.query_one("#judge-estimate", Static)
        store = Store(workspace["path"])
        expected = judging_line(judging_estimate(store, load_run(store, "beta"), INSTRUCT, 2,
                                                 "both"))
        await wait_until(pilot, lambda: text_of(estimate) == expected, 30, "the estimate")
    assert "assumed 600/70 tok/s" in expected and "(12 judge calls: both orders)" in expected


def test_lives_working_line_carries_the_busy_note():
    from engine.runs.events import run_event
    from mirage_tui.screens.live_run.panels import event_counts, working_line

    def event(note):
        return run_event(run="r", status="running", done=2, total=6, cached=0, generated=2,
                         errors=0, truncated=0, tokens_per_s=3.0, prompt_tokens_per_s=30.0,
                         eta_seconds=50.0, system="smol", setting="base", queries=2,
                         accuracy={}, pace_note=note)

    note = "running 5× slower than smol's model check: machine busy?"
    assert working_line(event(note), False) == (f"running · now smol · base · {note} · "
                                                "c cancels (resumable)")
    assert working_line(event(None), False) == "running · now smol · base · c cancels (resumable)"
    # between events the screen's timer counts the ETA down by the event's age
    assert event_counts(event(None), age=20.0).startswith("2/6 items · ETA 30s")
