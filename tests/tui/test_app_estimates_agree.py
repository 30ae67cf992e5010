"""On a resumed run, the New-run form, ``run --dry-run`` and the Live ETA
give the same time (within 25%): all three count only the items left and use the one estimator
(:mod:`engine.runs.estimates`) at the speeds measured on this machine."""

from __future__ import annotations

import contextlib
import io
import json
import threading
import time

import pytest
from textual.widgets import DataTable, Static

from mirage_tui.cli import main as cli_main
from mirage_tui.screens.new_run import NewRunScreen
from testkit.runs import SMOL
from testkit.timed import TimedGenerator
from testkit.tui import (RecordingApp, start_sampled_run, text_of, wait_for_run,
                         wait_for_workers, wait_until)


@pytest.mark.asyncio
@pytest.mark.timeout(300)
async def test_form_dry_run_and_live_eta_agree_on_a_resumed_run(db_path, capsys):
    gate = threading.Event()          # five items pass, the sixth waits for the cancel
    model = TimedGenerator(SMOL, prompt_tps=1000.0, gen_tps=50.0, answer_tokens=6,
                           gate=gate, open_calls=5)
    app = RecordingApp(db_path, generators={SMOL: model})
    async with app.run_test(size=(120, 35)) as pilot:
        plan = await start_sampled_run(pilot, sample=4, items=12)
        form = plan.screen
        await wait_until(pilot, lambda: len(model.calls) >= 6, 60, "the sixth item")
        app.run_controller.cancel()
        gate.set()
        await wait_for_run(pilot)
        stopped = app.run_controller.summary
        assert stopped.status == "cancelled" and stopped.done == 6, stopped
        model.gate, model.open_calls = threading.Event(), len(model.calls)   # the next call waits

        # New run again, same form: it resumes, and times only the six items left
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewRunScreen)
                         and "exists (cancelled)" in text_of(plan), 30, "the resume plan")
        await wait_for_workers(pilot)
        assert "for 6 items left" in text_of(plan) and "6 finished items" in text_of(plan)
        form_seconds = form.estimate_seconds

        out = io.StringIO()
        with contextlib.redirect_stdout(out):       # the app holds sys.stdout meanwhile
            code = cli_main(["run", "--db", str(db_path), "--dataset", "demo", "--generator",
                             SMOL, "--sample", "4", "--dry-run", "--json"])
        dry = json.loads(out.getvalue())
        assert code == 0 and dry["stored"] == 6 and dry["run_exists"]
        dry_seconds = dry["estimate_seconds"]

        controller = app.run_controller
        events, forward = [], controller._progress
        controller._progress = lambda event: (events.append(event), forward(event))
        await pilot.press("ctrl+s")                  # resumes; its first item waits
        await wait_until(pilot, lambda: controller.running and any(
            e.eta_seconds is not None for e in events), 30, "the live ETA")
        # the first ETA the session sent: later ones count the gated item's time as it waits
        live_seconds = next(e.eta_seconds for e in events if e.eta_seconds is not None)
        eta_line = text_of(app.screen.query_one("#live-now", Static))
        opened = time.perf_counter()
        model.gate.set()
        await wait_for_run(pilot)
        took = time.perf_counter() - opened
        assert controller.summary.status == "done" and controller.summary.generated == 6

    # the model was given to the app, loaded: Live counts no load, the form and --dry-run
    # count its load from its file size (nothing logged a load of it here)
    load = dry["estimate"][SMOL]["load_seconds"]
    seconds = [form_seconds - load, dry_seconds - load, live_seconds]
    print("form / dry run / live ETA:", [f"{s:.2f}s" for s in seconds],
          f"the six items took {took:.2f}s;", eta_line)
    assert min(seconds) > 0 and max(seconds) <= 1.25 * min(seconds), seconds


@pytest.mark.asyncio
async def test_a_model_check_on_models_sets_new_runs_speed_after_a_relaunch(db_path,
                                                                           monkeypatch):
    import models.check
    from mirage_tui.screens.models import ModelsScreen

    # the check itself is the edge: a loaded machine where the model makes 3 tokens a second
    checked = {"name": SMOL, "kind": "generator", "ok": True, "device": "cpu",
               "seconds": 5.3, "load_seconds": 0.4, "tokens_per_s": 3.0,
               "prompt_tokens_per_s": 40.0, "items_per_s": None, "error": None,
               "prompt_tokens": 30, "completion_tokens": 16, "finish_reason": "length",
               "text": "Jupiter", "chat": True}
    monkeypatch.setattr(models.check, "check_model", lambda name, **kw: dict(checked))
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for_workers(pilot)
        await pilot.press("2")
        await wait_for_workers(pilot)
        assert isinstance(app.screen, ModelsScreen)
        table = app.screen.query_one("#models", DataTable)
        table.move_cursor(row=table.get_row_index(SMOL))
        await pilot.press("c")
        await wait_for_workers(pilot)

    relaunched = RecordingApp(db_path)
    async with relaunched.run_test(size=(120, 35)) as pilot:
        await wait_for_workers(pilot)
        await pilot.press("n")
        await wait_for_workers(pilot)
        plan = relaunched.screen.query_one("#run-plan", Static)
        await wait_until(pilot, lambda: "Estimate" in text_of(plan), 30, "the estimate")
        text = text_of(plan)
        assert "40 prompt / 3 generated tok/s" in text and "model check of" in text, text
        # 60 answers of up to 64 tokens at 3 tokens a second: at least 20 minutes
        assert relaunched.screen.estimate_seconds >= 60 * 64 / 3.0
