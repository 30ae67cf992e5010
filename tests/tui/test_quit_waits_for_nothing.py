"""Issue 27 finding 6: `q` with no run going quits without waiting for any worker thread.

A worker still busy when the user quits (here the workspace opening, held on purpose) used to
be waited for: Textual runs thread workers on the event loop's default executor, which
``asyncio.run`` and the interpreter join when the app ends. What the end would wait for is
counted (the worker threads it would join, the jobs it waits on), not timed. A job that writes
results (a run) is still waited for, until it has finished its item."""

from __future__ import annotations

import threading

import pytest

from engine.runs import RunConfig
from engine.store import Store
from mirage_tui.jobs import stop_jobs
from testkit.scripted import ScriptedGenerator
from testkit.tui import RecordingApp, settle, wait_until


def _joined_at_exit(thread: threading.Thread) -> bool:
    """Whether ending the app (asyncio.run's executor shutdown, then the interpreter) would
    wait for ``thread``: it does for every non-daemon thread."""
    return thread.is_alive() and not thread.daemon


@pytest.mark.asyncio
async def test_q_waits_for_no_worker_thread(db_path, monkeypatch):
    Store(db_path).close()
    held, release = [], threading.Event()

    def slow_demo(store):
        held.append(threading.current_thread())
        release.wait(60)

    monkeypatch.setattr("mirage_tui.app.ensure_demo", slow_demo)
    app = RecordingApp(db_path)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: held, 10, "the workspace worker to start")
            await pilot.press("q")
            await wait_until(pilot, lambda: not app.is_running, 10, "the app to quit")
        assert app.return_code == 0
        assert held[0].is_alive()                   # still busy, and nobody waits for it
        assert [t for t in held if _joined_at_exit(t)] == []
        assert await stop_jobs() == 0               # no job was going either
    finally:
        release.set()


@pytest.mark.asyncio
async def test_a_run_going_when_the_app_ends_is_waited_for_until_its_item_is_done(db_path):
    # answers at once, except that every call after the first waits for its gate
    gen = ScriptedGenerator("gated", lambda text: "I am not sure.", sha="b" * 64,
                            usage=lambda text: (len(text) // 4 + 1, 4, len(text) // 4 + 1, 0.001),
                            gate=threading.Event(), open_calls=1)
    app = RecordingApp(db_path, generators={"gated": gen})
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.start_run(RunConfig(dataset="demo", generators=["gated"], settings=["base"],
                                sample=3, seed=0, name="held"))
        await wait_until(pilot, lambda: len(gen.calls) >= 2, 20, "the second item")
        threading.Timer(0.3, gen.gate.set).start()     # the item in flight ends a bit later
        app.exit()                                    # not through q: no question asked
    assert not app.run_controller.running             # the app's end waited for the item
    store = Store(db_path)
    assert store.query("SELECT status FROM runs WHERE name = 'held'")[0][0] == "cancelled"
    assert store.query("SELECT COUNT(*) FROM run_items WHERE run_id = (SELECT id FROM runs "
                       "WHERE name = 'held') AND generation_key IS NOT NULL")[0][0] == 2
    store.close()
