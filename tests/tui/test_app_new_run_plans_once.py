"""New run plans once: the plan its preview shows is the plan Start executes, and the run is
looked up by name once, by that preview: neither the run controller nor the engine looks it up
again (traced: every statement reading the ``runs`` table by a name, on every connection, and
every call of the store's look-up by name, each by where it came from; Live run reading the
run it shows for its report is the screen's own read). When the form or the stored runs
changed since the plan shown, Start says so and the run is planned again (a run stored
meanwhile under the same name is resumed, not inserted twice).
(The CLI commands: ``tests/cli/test_run_looked_up_once.py``.)"""

from __future__ import annotations

import re
import traceback
from collections import Counter
from dataclasses import replace

import pytest
from textual.widgets import Input, Static

import engine.runs
import engine.store.runs as run_table
from engine.runs import execute, plan_named
from engine.runs import lookup
from engine.store import Store
from mirage_tui.screens import new_run
from testkit.runs import SMOL
from testkit.scripted import ScriptedGenerator
from testkit.tui import RecordingApp, text_of, wait_for_run, wait_for_workers, wait_until

BY_NAME = re.compile(r"\bFROM runs\b.*\bname = '", re.IGNORECASE | re.DOTALL)
ORIGINS = {"mirage_tui/screens/new_run.py": "new run", "mirage_tui/run_controller.py": "start",
           "mirage_tui/screens/live_run/": "live run's report"}


def origin() -> str:
    """Who asked: New run, the run controller (starting the run) or Live run."""
    for frame in reversed(traceback.extract_stack()):
        path = frame.filename.replace("\\", "/")
        found = next((who for part, who in ORIGINS.items() if part in path), None)
        if found:
            return found
    return "elsewhere"


@pytest.fixture
def traced(monkeypatch) -> dict[str, list]:
    """``statements`` (SQL reading ``runs`` by name) and ``calls`` (the store's look-ups by
    name), each as where it came from (:func:`origin`), and ``executed`` (every plan handed to
    ``execute``) from here on."""
    seen: dict[str, list] = {"statements": [], "calls": [], "executed": []}
    connect = Store._connect

    def tracing(self):
        conn = connect(self)
        conn.set_trace_callback(
            lambda sql: seen["statements"].append(origin()) if BY_NAME.search(sql) else None)
        return conn

    def counted(module, name):
        real = getattr(module, name)

        def call(*args, **kwargs):
            seen["calls"].append(origin())
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, call)

    def executing(store, plan, **kwargs):
        seen["executed"].append(plan)
        return execute(store, plan, **kwargs)

    monkeypatch.setattr(Store, "_connect", tracing)
    counted(lookup, "run_by_name")
    counted(run_table, "run_by_name")
    counted(run_table, "run_id_named")
    monkeypatch.setattr(engine.runs, "execute", executing)
    return seen


async def open_form(pilot):
    """New run (``n``), once its first preview is shown; returns the screen."""
    await wait_for_workers(pilot)
    await pilot.press("n")
    form = pilot.app.screen
    assert isinstance(form, new_run.NewRunScreen)
    await wait_until(pilot, lambda: form.preview is not None, 30, "the first preview")
    await wait_for_workers(pilot)
    return form


async def previewed(pilot, form, sample: int):
    """The form's sample set to ``sample`` queries; the plan its preview shows then."""
    form.query_one("#run-sample", Input).value = str(sample)
    line = form.query_one("#run-plan", Static)
    await wait_until(pilot, lambda: form.preview is not None
                     and form.preview.plan.first_batch == sample
                     and f"Plan: {3 * sample} items" in text_of(line), 30, "the preview")
    await wait_for_workers(pilot)
    return form.preview.plan


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_start_executes_the_plan_the_preview_made_and_looks_the_run_up_once(db_path,
                                                                                   traced):
    app = RecordingApp(db_path, generators={SMOL: ScriptedGenerator(SMOL)})
    async with app.run_test(size=(120, 35)) as pilot:
        form = await open_form(pilot)
        for found in traced.values():
            found.clear()
        plan = await previewed(pilot, form, 2)
        await pilot.press("ctrl+s")
        await wait_for_run(pilot)
        summary = app.run_controller.summary
    assert summary is not None and summary.status == "done" and summary.total == 6, summary
    assert traced["executed"] == [plan] and traced["executed"][0] is plan
    for kind in ("statements", "calls"):
        made = Counter(traced[kind])
        assert made["new run"] == 1 and made["start"] == 0, (kind, made)
        assert set(made) <= {"new run", "live run's report"}, (kind, made)
    assert not [note for note, _ in app.notes if "planning it again" in note]


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_a_form_changed_since_the_preview_is_planned_again_and_said(db_path, traced,
                                                                          monkeypatch):
    monkeypatch.setattr(new_run, "PREVIEW_DELAY", 600)    # no new preview before ctrl+s
    app = RecordingApp(db_path, generators={SMOL: ScriptedGenerator(SMOL)})
    async with app.run_test(size=(120, 35)) as pilot:
        form = await open_form(pilot)
        shown = form.preview.plan
        form.query_one("#run-sample", Input).value = "2"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_for_run(pilot)
        summary = app.run_controller.summary
    assert "The form changed since the plan shown: planning it again." in [
        note for note, _ in app.notes]
    [plan] = traced["executed"]
    assert plan is not shown and plan.first_batch == 2
    assert summary is not None and summary.status == "done" and summary.total == 6, summary


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_a_run_stored_since_the_preview_is_planned_again_and_resumed(db_path, traced):
    app = RecordingApp(db_path, generators={SMOL: ScriptedGenerator(SMOL)})
    async with app.run_test(size=(120, 35)) as pilot:
        form = await open_form(pilot)
        shown = await previewed(pilot, form, 2)
        assert shown.existing_run is None
        other = Store(db_path)             # another process runs the same plan meanwhile
        try:
            done = execute(other, plan_named(other, replace(shown.config), check_models=False),
                           generators={SMOL: ScriptedGenerator(SMOL)})
        finally:
            other.close()
        assert done.status == "done" and done.generated == 6
        await pilot.press("ctrl+s")
        await wait_for_run(pilot)
        summary = app.run_controller.summary
    assert "The stored runs changed since the plan shown: planning it again." in [
        note for note, _ in app.notes]
    plan = traced["executed"][-1]
    assert plan is not shown and plan.existing_run is not None
    assert summary is not None and summary.status == "done", summary
    assert (summary.total, summary.generated, summary.cached) == (6, 0, 6), summary
