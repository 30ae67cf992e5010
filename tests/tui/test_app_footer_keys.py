"""Issue 18, finding 5: every key a main screen's footer offers does something (opens a
screen or a dialog, moves the focus, starts its work, changes what is drawn) or says why it
cannot; a key that cannot act leaves the footer and still says why when pressed (Live run's
cancel and resume on a finished run)."""

from __future__ import annotations

import pytest

import models.check
from mirage_tui.screens.live_run import LiveRunScreen
from testkit.scripted import ScriptedGenerator
from testkit.tui import RecordingApp, open_live, settle, wait_for_run, wait_until

SMOL = "smollm2-135m-instruct"     # New run's default generator; ctrl+s starts it


def unsure(name: str = SMOL) -> ScriptedGenerator:
    """Stands in for SmolLM2 at the edge: answers every prompt "I am not sure."."""
    return ScriptedGenerator(name, lambda text: "I am not sure.", sha="unsure",
                             usage=lambda text: (10, 4, 10, 0.001))


MODES = ("datasets", "models", "runs", "leaderboard", "new_run", "live")


def _failed_check(name, max_tokens=16, *, n_threads=None, cancel=None):
    return {"name": name, "kind": "generator", "ok": False, "error": "not loaded in tests"}


class Counting:
    """How many workers the app has started (a key whose work is a reload shows nothing
    else)."""

    def __init__(self, app) -> None:
        self.n = 0
        manager = app.workers
        original = manager.add_worker

        def add_worker(worker, *args, **kwargs):
            self.n += 1
            return original(worker, *args, **kwargs)

        manager.add_worker = add_worker


def _state(app, workers: Counting) -> tuple:
    return (len(app.notes), tuple(map(id, app.screen_stack)), app.focused, workers.n,
            app.export_screenshot())


def _footer_keys(app) -> list[tuple[str, str]]:
    """(key, action) of what the footer shows now for the screen itself."""
    return [(key, active.binding.action) for key, active in app.active_bindings.items()
            if active.binding.show and active.enabled and active.node is app.screen
            and active.binding.action not in ("back", "app.go_back", "go_back")]


async def _show(pilot, mode: str) -> None:
    app = pilot.app
    while len(app.screen_stack) > 1:
        await app.pop_screen()
        await settle(pilot)
    app.go_to(mode)
    await settle(pilot)
    assert app.current_mode == mode


@pytest.mark.asyncio
async def test_every_footer_key_of_every_main_screen_acts_or_says_why(workspace,
                                                                      monkeypatch):
    monkeypatch.setattr(models.check, "check_model", _failed_check)
    app = RecordingApp(workspace["path"], generators={SMOL: unsure()})
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        workers = Counting(app)
        silent = []
        checked = 0
        for mode in MODES:
            await _show(pilot, mode)
            if mode == "live":
                await wait_until(pilot, lambda: app.screen.report is not None,
                                 what="the live report")
            for key, action in _footer_keys(app):
                await _show(pilot, mode)
                before = _state(app, workers)
                await pilot.press(key)
                await settle(pilot)
                if app.run_controller.running:
                    await wait_for_run(pilot)
                if _state(app, workers) == before:
                    silent.append((mode, key, action))
                checked += 1
        assert checked >= 15
        assert not silent, f"footer keys that did nothing and said nothing: {silent}"


@pytest.mark.asyncio
async def test_live_keys_that_cannot_act_leave_the_footer_and_say_why(workspace):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await open_live(pilot)
        shown = {a for _, a in _footer_keys(app)}
        assert not shown & {"cancel_run", "resume_run", "toggle_gold"}   # a finished run
        await pilot.press("c")
        await pilot.press("r")
        await pilot.press("d")
        await settle(pilot)
        notes = [m for m, _ in app.notes]
        assert "This run is not going; nothing to cancel." in notes
        assert f"Run {screen.run_name} is finished; nothing to resume." in notes
        assert "This run has no retrieval to score." in notes


@pytest.mark.asyncio
async def test_r_during_a_run_leaves_the_footer_and_says_why(db_path):
    import threading

    from test_app_runs import FAKE, fake_config
    from testkit.scripted import ScriptedGenerator

    gate = threading.Event()
    slow = ScriptedGenerator(gate=gate, open_calls=1)
    app = RecordingApp(db_path, generators={FAKE: slow})
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        app.start_run(fake_config(sample=2))
        await wait_until(pilot, lambda: len(slow.calls) >= 2, 30, "the second item to wait")
        await pilot.pause()
        assert isinstance(app.screen, LiveRunScreen)
        shown = {a for _, a in _footer_keys(app)}
        assert "cancel_run" in shown and "resume_run" not in shown
        await pilot.press("r")
        await pilot.pause()
        assert "This run is going already." in [m for m, _ in app.notes]
        gate.set()
        await wait_for_run(pilot)
