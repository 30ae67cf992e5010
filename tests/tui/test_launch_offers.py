"""The app remembers what you left running: a run stopped by quitting ("Stop and quit", or the
app ending while it runs) is offered at the next launch (resume, open, later: ask again next
time, never ask about it again); a run cancelled on purpose on Live run is not
(:mod:`engine.runs.stops`)."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Static

from engine.datasets.demo_pool import ensure_demo
from engine.runs.stops import QUIT, record_stop
from engine.store import Store
from mirage_tui.dialogs.choice import ChoiceModal
from mirage_tui.screens.datasets import DatasetsScreen
from mirage_tui.screens.live_run import LiveRunScreen
from testkit.scripted import ScriptedGenerator
from testkit.tui import RecordingApp, settle, text_of, wait_for_run, wait_until

pytestmark = pytest.mark.asyncio

FAKE = "scripted-fake"


def _config(name: str = "left", sample: int = 2):
    from engine.runs import RunConfig

    return RunConfig(dataset="demo", generators=[FAKE], settings=["base", "oracle", "mixed"],
                     sample=sample, seed=0, name=name)       # 3 items a query


def _stored(db_path, name: str = "left") -> tuple[str, str | None, int, int]:
    """``status, stopped_by, ask_at_launch, items stored`` of the run called ``name``."""
    store = Store(db_path)
    try:
        status, by, ask, run_id = store.query(
            "SELECT status, stopped_by, ask_at_launch, id FROM runs WHERE name = ?", (name,))[0]
        done = store.query("SELECT COUNT(*) FROM run_items WHERE run_id = ?", (run_id,))[0][0]
    finally:
        store.close()
    return status, by, ask, done


def _offered(app) -> bool:
    return any(isinstance(s, ChoiceModal) and s.id == "resume-modal" for s in app.screen_stack)


async def _relaunch_offers(db_path) -> bool:
    """Whether a fresh launch on the workspace offers a run; answers Later if it does."""
    app = RecordingApp(db_path, generators={FAKE: ScriptedGenerator()})
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        offered = _offered(app)
        if offered:
            await pilot.press("l")
            await settle(pilot)
        assert not app.errors()
    return offered


def _gated_app(db_path) -> tuple[RecordingApp, threading.Event]:
    """The app, its generator answering three items, then waiting for the gate returned."""
    gate = threading.Event()
    return RecordingApp(db_path, generators={FAKE: ScriptedGenerator(gate=gate,
                                                                      open_calls=3)}), gate


async def _gated_run(pilot, app) -> None:
    """Start the 6-item run and wait until its fourth item waits at the gate, on Live run."""
    gen = app.run_controller.generators[FAKE]
    await settle(pilot)
    app.start_run(_config())
    await wait_until(pilot, lambda: len(gen.calls) >= 4, 120, "the fourth item to wait")
    await wait_until(pilot, lambda: isinstance(app.screen, LiveRunScreen), 60, "Live run")


async def test_a_run_stopped_by_quitting_is_offered_at_the_next_launch_and_resumes(db_path):
    app, gate = _gated_app(db_path)
    async with app.run_test(size=(120, 35)) as pilot:
        await _gated_run(pilot, app)
        await pilot.press("q")
        await wait_until(pilot, lambda: app.screen.id == "quit-modal", 10, "the quit question")
        body = text_of(app.screen.query_one("#choice-body", Static))
        assert "the next launch offers to resume it" in body
        assert "launches do not ask" not in body
        await pilot.press("s")                          # Stop and quit
        gate.set()
        await wait_until(pilot, lambda: not app.is_running, 60, "the app to quit")
    status, by, ask, done = _stored(db_path)
    assert (status, by, ask) == ("cancelled", QUIT, 1) and 0 < done < 6

    again = ScriptedGenerator()
    app = RecordingApp(db_path, generators={FAKE: again})
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, ChoiceModal) and modal.id == "resume-modal"
        assert "Resume run left?" in text_of(modal.query_one("#choice-title"))
        text = text_of(modal.query_one("#choice-body", Static))
        assert f"stopped when you quit mirage-tui with {done} of 6 items" in text
        await pilot.press("r")                          # Resume
        await wait_for_run(pilot)
        assert isinstance(app.screen, LiveRunScreen)
        assert app.run_controller.summary.status == "done"
        assert len(again.calls) == 6 - done             # only the items left
        assert not app.errors()
    assert _stored(db_path)[:2] == ("done", None)
    assert not await _relaunch_offers(db_path)          # done: nothing left to offer


async def test_later_asks_again_and_never_ask_is_remembered(db_path):
    from testkit.runs import run

    store = Store(db_path)
    ensure_demo(store)
    gen = ScriptedGenerator()
    _, summary = run(store, _config(), {FAKE: gen}, cancel=lambda: len(gen.calls) >= 2)
    assert summary.status == "cancelled"
    record_stop(store, "left", QUIT)                     # as quitting the app leaves it
    store.close()

    assert await _relaunch_offers(db_path)               # answered Later (l) ...
    assert await _relaunch_offers(db_path)               # ... so the next launch asks again

    app = RecordingApp(db_path, generators={FAKE: ScriptedGenerator()})
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert _offered(app)
        await pilot.press("n")                           # Never ask
        await settle(pilot)
        assert not _offered(app)
        assert any("will not ask about left again" in m for m, _ in app.notes)
    assert _stored(db_path)[:3] == ("cancelled", QUIT, 0)
    assert not await _relaunch_offers(db_path)


async def test_a_run_cancelled_on_live_is_not_offered_even_when_the_app_quits_meanwhile(db_path):
    app, gate = _gated_app(db_path)
    async with app.run_test(size=(120, 35)) as pilot:
        await _gated_run(pilot, app)
        await pilot.press("c")                           # Live run's cancel ...
        await wait_until(pilot, lambda: app.screen.id == "cancel-run-modal", 10, "the question")
        await pilot.press("c")                           # ... confirmed: on purpose
        await wait_until(pilot, lambda: app.run_controller.cancelling, 10, "the cancel")
        await pilot.press("q")                           # quitting while it stops
        await wait_until(pilot, lambda: app.screen.id == "quit-modal", 10, "the quit question")
        await pilot.press("s")
        gate.set()
        await wait_until(pilot, lambda: not app.is_running, 60, "the app to quit")
    status, by, _, done = _stored(db_path)
    assert (status, by) == ("cancelled", "user") and 0 < done < 6

    app = RecordingApp(db_path, generators={FAKE: ScriptedGenerator()})
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, DatasetsScreen)    # no question at launch
        assert not _offered(app)


async def test_a_run_going_when_the_app_ends_otherwise_is_offered_too(db_path):
    app, gate = _gated_app(db_path)
    async with app.run_test(size=(120, 35)) as pilot:
        await _gated_run(pilot, app)
        threading.Timer(0.3, gate.set).start()
        app.exit()                                       # not through q: nothing asked
    assert _stored(db_path)[:2] == ("cancelled", QUIT)
    assert await _relaunch_offers(db_path)
