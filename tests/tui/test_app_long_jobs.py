"""Long work in the TUI goes through JobController (issue 28): each job shows how to cancel it
while it runs, a cancel stops it after its step, and only whole steps are stored (real SQLite;
the only fakes are at the edges: a parser held at a gate, a gated model)."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Static

import engine.datasets.formats.squad as squad
from engine.store import Store
from mirage_tui.dialogs.import_dataset import ImportDatasetScreen
from mirage_tui.screens.datasets import DatasetsScreen
from testkit.paths import SHARED_DATA
from testkit.tui import RecordingApp, text_of, wait_for_workers, wait_until

pytestmark = pytest.mark.asyncio

XQUAD_DE = SHARED_DATA / "xquad" / "xquad.de.json"


async def cancel_at_gate(pilot, key: str, job, gate: threading.Event) -> None:
    """Press the cancel ``key`` while ``job`` (a JobController) is held at ``gate``, then open
    the gate and wait until the job has stopped."""
    await pilot.press(key)
    await pilot.pause()
    assert job.cancelling
    gate.set()
    await wait_until(pilot, lambda: not job.running, what="the job to stop")
    await wait_for_workers(pilot)


def held_parser(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """squad.parse, held at its first step until ``gate`` opens (``reached`` says it is
    there): the edge the import job's cancel is checked at."""
    reached, gate = threading.Event(), threading.Event()
    real_parse = squad.parse

    def parse(path, steps=None):
        def held(done, total, what):
            reached.set()
            gate.wait(30)
            steps(done, total, what)
        return real_parse(path, held if steps else None)

    monkeypatch.setattr(squad, "parse", parse)
    return reached, gate


def datasets_named(path, name: str) -> int:
    store = Store(path)
    try:
        return store.query("SELECT COUNT(*) FROM datasets WHERE name = ?", (name,))[0][0]
    finally:
        store.close()


async def test_escape_cancels_an_import_and_stores_nothing(db_path, monkeypatch):
    reached, gate = held_parser(monkeypatch)
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_workers(pilot)
        assert isinstance(app.screen, DatasetsScreen)
        await pilot.press("i")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ImportDatasetScreen)
        dialog.query_one("#import-path").value = str(XQUAD_DE)
        await pilot.press("enter")
        await wait_until(pilot, reached.is_set, what="the parser's first step")
        status = dialog.query_one("#import-status", Static)
        assert dialog.running and "Esc cancels" in text_of(status)

        await cancel_at_gate(pilot, "escape", dialog.importing, gate)
        assert app.screen is dialog                  # Esc cancelled; it did not close it
        assert "cancelled; nothing was stored" in text_of(status)
        assert datasets_named(db_path, "xquad.de") == 0
        assert not app.errors()

        # the same import again goes through, and the dialog closes with its result
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is not dialog, what="the import")
        await wait_for_workers(pilot)
        assert datasets_named(db_path, "xquad.de") == 1


# --------------------------------------------------------------------------- a model check

SMOL = "smollm2-135m-instruct"


def stored_checks(path) -> dict:
    from engine.model_speeds import latest_model_checks

    store = Store(path)
    try:
        return latest_model_checks(store)
    finally:
        store.close()


async def test_x_cancels_a_model_check_and_records_nothing(tmp_path, monkeypatch):
    import models.catalog
    from mirage_tui.screens.models import ModelsScreen
    from testkit.timed import TimedGenerator

    gate = threading.Event()
    model = TimedGenerator(SMOL, gate=gate)        # its warm-up call waits at the gate
    monkeypatch.setattr(models.catalog, "load_generator", lambda name, **kw: model)
    app = RecordingApp(tmp_path / "w.db", threads=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_workers(pilot)
        await pilot.press("2")
        await wait_for_workers(pilot)
        screen = app.screen
        assert isinstance(screen, ModelsScreen)
        assert not screen.check_action("cancel_check", ())     # no x in the footer yet
        table = screen.query_one("#models")
        table.move_cursor(row=table.get_row_index(SMOL))
        await pilot.press("c")
        await wait_until(pilot, lambda: len(model.calls) >= 1, what="the check's warm-up")
        assert screen.check_action("cancel_check", ())         # x is in the footer now
        assert "x cancels" in text_of(screen.query_one("#model-detail", Static))

        await cancel_at_gate(pilot, "x", screen.check_job, gate)
        assert len(model.calls) == 1            # stopped after the warm-up: no timed job
        assert screen.checking is None and not screen.check_action("cancel_check", ())
        assert SMOL not in screen.checks and SMOL not in stored_checks(tmp_path / "w.db")
        assert any("cancelled; nothing was recorded" in m for m, _ in app.notes)
        assert not app.errors()


# --------------------------------------------------------------------------- surrogate features

def responses_with_features(path) -> int:
    store = Store(path)
    try:
        return store.query("SELECT COUNT(*) FROM (SELECT DISTINCT generation_key, query_rowid "
                           "FROM scores WHERE metric LIKE 'feat:%')")[0][0]
    finally:
        store.close()


async def test_x_cancels_the_surrogate_features_after_a_whole_response(workspace, monkeypatch):
    import engine.arena.surrogate.features.stored as stored
    from mirage_tui.screens.leaderboard import LeaderboardScreen
    from testkit.tui import open_screen, settle

    reached, gate = threading.Event(), threading.Event()
    real = stored.model_free_features
    calls = []

    def held(response):           # the second response waits at the gate
        calls.append(response)
        if len(calls) == 2:
            reached.set()
            gate.wait(30)
        return real(response)

    monkeypatch.setattr(stored, "model_free_features", held)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, LeaderboardScreen())
        screen = app.screen
        job = screen.jobs.controller
        assert not screen.check_action("cancel_job", ())
        await pilot.press("u")
        await wait_until(pilot, reached.is_set, what="the second response")
        assert screen.check_action("cancel_job", ())
        await cancel_at_gate(pilot, "x", job, gate)
        await settle(pilot)
        assert responses_with_features(workspace["path"]) == 2     # whole responses only
        assert job.summary.cancelled and not screen.check_action("cancel_job", ())
        assert any("cancelled" in m and "u computes the rest" in m for m, _ in app.notes)

        await pilot.press("u")                  # the rest, then the surrogate
        await wait_until(pilot, lambda: not job.running, what="the rest")
        await settle(pilot)
        assert job.summary.skipped == 2 and not job.summary.cancelled
        surrogate = text_of(screen.query_one("#lb-surrogate", Static))
        assert "Kendall τ" in surrogate and "n=4" in surrogate
        assert not app.errors()


# --------------------------------------------------------------------------- a calibration

async def test_x_cancels_a_calibration_in_the_footer_while_it_runs(tmp_path, monkeypatch):
    from engine.arena.trust.calibrate import list_calibrations
    from mirage_tui.screens.calibration import CalibrationScreen
    from test_app_calibration import first_wins, labelled_workspace, scripted_catalog
    from testkit.arena import ScriptedJudge
    from testkit.tui import open_screen, settle

    class HeldJudge(ScriptedJudge):
        """The scripted judge; its second call waits at the gate."""

        def generate(self, prompt, params):
            if len(self.calls) == 1:
                reached.set()
                gate.wait(30)
            return super().generate(prompt, params)

    reached, gate = threading.Event(), threading.Event()
    path = labelled_workspace(tmp_path)
    judge = HeldJudge(first_wins, name="lazy-judge")
    scripted_catalog(monkeypatch, judge, "lazy-judge")
    app = RecordingApp(path)
    async with app.run_test(size=(110, 40)) as pilot:
        await open_screen(pilot, CalibrationScreen())
        screen = app.screen
        assert not screen.check_action("cancel_calibration", ())
        await pilot.press("j")
        await settle(pilot)
        await pilot.click("#calib-go")
        await wait_until(pilot, reached.is_set, what="the second verdict")
        assert app.screen is screen and screen.check_action("cancel_calibration", ())
        await cancel_at_gate(pilot, "x", screen.calibrating, gate)
        await settle(pilot)
        assert screen.calibrating.summary.status == "cancelled"
        assert not screen.check_action("cancel_calibration", ())
        assert any("press j again to resume" in m for m, _ in app.notes)
        assert not app.errors()
    store = Store(path)
    try:
        assert list_calibrations(store) == []               # only whole verdicts stored
        assert store.query("SELECT COUNT(*) FROM judgments")[0][0] == len(judge.calls) == 2
    finally:
        store.close()
