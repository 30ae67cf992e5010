"""Live run while an item takes long (issue 36, item 1): the working line says that the item is
at work and for how long, counting up between items, so a long item never looks like a freeze;
and once the run is cancelled, no ETA stays beside "cancelled". A gated scripted generator
holds the third item until the test opens it: ordering, not timing."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Static

from testkit.runs import SMOL
from testkit.scripted import ScriptedGenerator
from testkit.tui import RecordingApp, start_sampled_run, text_of, wait_for_run, wait_until


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_live_shows_the_item_at_work_and_drops_the_eta_when_cancelled(db_path):
    gate = threading.Event()          # two items pass, the third waits
    model = ScriptedGenerator(SMOL, gate=gate, open_calls=2)
    app = RecordingApp(db_path, generators={SMOL: model})
    async with app.run_test(size=(120, 35)) as pilot:
        await start_sampled_run(pilot, sample=2, items=6)
        controller = app.run_controller
        await wait_until(pilot, lambda: len(model.calls) >= 3 and controller.latest is not None
                         and controller.latest.done == 2, 60, "the third item")
        now = app.screen.query_one("#live-now", Static)
        counts = app.screen.query_one("#live-counts", Static)
        await wait_until(pilot, lambda: "item 3 at work " in text_of(now), 10,
                         "the item at work")
        first = text_of(now)
        assert first.startswith("running · now ") and first.endswith(" · c cancels (resumable)")
        assert "ETA " in text_of(counts)
        # no item ends meanwhile: the time at work counts up all the same
        await wait_until(pilot, lambda: text_of(now) != first
                         and "item 3 at work " in text_of(now), 10, "the time counting up")
        assert controller.latest.done == 2

        controller.cancel()
        gate.set()
        await wait_for_run(pilot)
        assert controller.summary.status == "cancelled"
        await wait_until(pilot, lambda: "cancelled" in text_of(now), 10, "the cancelled line")
        assert "ETA" not in text_of(counts) and "ETA" not in text_of(now), \
            (text_of(counts), text_of(now))
        assert "at work" not in text_of(now)
        assert not app.errors()


def test_the_working_line_names_the_tokens_so_far_where_the_backend_counts_them():
    from engine.runs.events import run_event
    from mirage_tui.screens.live_run.panels import event_counts, working_line

    def event(**running):
        return run_event(run="r", status="running", done=2, total=6, cached=0, generated=2,
                         errors=0, truncated=0, tokens_per_s=3.0, prompt_tokens_per_s=30.0,
                         eta_seconds=50.0, system="smol", setting="base", queries=2,
                         accuracy={}, **running)

    assert working_line(event(running_s=12.0, running_tokens=40), False, age=3.0) == (
        "running · now smol · base · item 3 at work 15s, 40 tokens so far · c cancels "
        "(resumable)")
    assert working_line(event(running_s=12.0), False) == (
        "running · now smol · base · item 3 at work 12s · c cancels (resumable)")
    assert "ETA" not in event_counts(event(), running=False)
