"""Issue 18, finding 7: screens that show the store as it is now. Runs and Datasets follow the
workspace (a run or a dataset written by another process appears without a key), and a model
check outlives the session."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from textual.widgets import DataTable, Static

import mirage_tui.screens.models as models_screen
from engine.model_speeds import latest_model_checks
from engine.runs.estimates import record_model_check
from engine.store import Store
from mirage_tui.screens.models import ModelsScreen
from models.catalog import list_models
from testkit.paths import ROOT
from testkit.scripted_runs import make_run
from testkit.tui import RecordingApp, cells, settle, text_of, wait_until

SMOL = "smollm2-135m-instruct"
TINY = {"version": "1.1", "data": [{"title": "T", "paragraphs": [{
    "context": "Paris is the capital of France.",
    "qas": [{"id": "q1", "question": "What is the capital of France?",
             "answers": [{"text": "Paris", "answer_start": 0}]}]}]}]}


@pytest.mark.asyncio
async def test_a_dataset_imported_from_the_cli_appears_on_datasets(tmp_path):
    db = tmp_path / "w.db"
    source = tmp_path / "tiny.json"
    source.write_text(json.dumps(TINY))
    app = RecordingApp(db)
    async with app.run_test(size=(120, 35)) as pilot:
        table = app.screen.query_one("#datasets", DataTable)
        await wait_until(pilot, lambda: "demo@1" in {k.value for k in table.rows},
                         what="the demo pool")
        await settle(pilot)
        out = subprocess.run([sys.executable, "-m", "mirage_tui.cli", "data", "import",
                              str(source), "--db", str(db)], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        await wait_until(pilot, lambda: "tiny@1" in {k.value for k in table.rows}, timeout=20,
                         what="the imported dataset without r")
        assert cells(table, "tiny@1")[2] == "1"


@pytest.mark.asyncio
async def test_runs_follow_a_run_written_elsewhere(workspace):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        await wait_until(pilot, lambda: table.row_count == 2, what="two runs")
        table.move_cursor(row=table.get_row_index("beta"))
        # another process (here: another connection) stores a whole run
        other = Store(workspace["path"])
        make_run(other, "gamma", {"fake-c": [(0, 1, 1)] * 6}, at="2025-01-04 09:00:00")
        other.close()
        await wait_until(pilot, lambda: table.row_count == 3, timeout=20,
                         what="the new run without r")
        assert cells(table, "gamma")[2:4] == ["done", "18/18"]
        assert table.cursor_row == table.get_row_index("beta")     # the cursor stays


@pytest.mark.asyncio
async def test_runs_reload_only_when_the_store_changed(workspace, monkeypatch):
    """The screen's watch starts from the store as its first load read it: its looks that find
    nothing new reload nothing (a reload rebuilt the table a second after every opening),
    and a write made elsewhere still reloads, once."""
    import mirage_tui.screens.runs as runs_screen

    loads, looks = [], []

    def counted_rows(store):
        loads.append(1)
        return run_rows(store)

    def counted_fingerprint(store):
        looks.append(1)
        return runs_fingerprint(store)

    run_rows, runs_fingerprint = runs_screen.run_rows, runs_screen.runs_fingerprint
    monkeypatch.setattr(runs_screen, "run_rows", counted_rows)
    monkeypatch.setattr(runs_screen, "runs_fingerprint", counted_fingerprint)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        table = app.screen.query_one("#runs", DataTable)
        await wait_until(pilot, lambda: table.row_count == 2, what="two runs")
        # the loader's read and then three looks of the watch, each finding the same store
        await wait_until(pilot, lambda: len(looks) >= 4, timeout=30, what="the watch's looks")
        await settle(pilot)
        assert len(loads) == 1
        other = Store(workspace["path"])
        make_run(other, "gamma", {"fake-c": [(0, 1, 1)] * 6}, at="2025-01-04 09:00:00")
        other.close()
        await wait_until(pilot, lambda: table.row_count == 3, timeout=20,
                         what="the new run without r")
        seen = len(looks)
        await wait_until(pilot, lambda: len(looks) >= seen + 2, timeout=30,
                         what="two more looks")
        await settle(pilot)
        assert len(loads) == 2


def _checked(store: Store, model: str, result: dict, at: str) -> None:
    """A stored check of ``model`` made ``at`` (no clock in the assertions)."""
    record_model_check(store, result, model)
    with store.write() as db:
        db.conn.execute("UPDATE model_checks SET checked_at = ? WHERE id = "
                        "(SELECT MAX(id) FROM model_checks)", (at,))


def test_the_latest_check_of_each_model(db_path):
    store = Store(db_path)
    try:
        _checked(store, SMOL, {"ok": False, "error": "x"}, "2025-01-01 00:00:00")
        _checked(store, SMOL, {"ok": True, "kind": "generator", "tokens_per_s": 3.2,
                               "device": "cpu"}, "2025-01-02 00:00:00")
        _checked(store, "gemma3-270m", {"ok": False, "error": "y"}, "2025-01-01 00:00:00")
        latest = latest_model_checks(store)
        assert sorted(latest) == ["gemma3-270m", SMOL] and latest[SMOL]["ok"] is True
        assert latest[SMOL]["checked_at"] == "2025-01-02 00:00:00"
        assert latest["gemma3-270m"]["error"] == "y"
    finally:
        store.close()


@pytest.mark.asyncio
async def test_a_model_check_survives_a_relaunch(tmp_path, monkeypatch):
    from test_app_models import broken_entry

    broken = broken_entry(tmp_path / "broken-model.gguf")
    monkeypatch.setattr(models_screen, "list_models", lambda: list_models() + [broken])
    db = tmp_path / "w.db"
    store = Store(db)
    _checked(store, SMOL, {"ok": True, "kind": "generator", "name": SMOL, "device": "cpu",
                           "tokens_per_s": 3.2, "load_seconds": 0.5, "prompt_tokens": 30,
                           "prompt_tokens_per_s": 40.0, "completion_tokens": 16,
                           "finish_reason": "length", "text": "Jupiter"},
             "2025-01-02 03:04:05")
    store.close()

    app = RecordingApp(db, threads=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ModelsScreen)
        table = screen.query_one("#models", DataTable)
        assert cells(table, SMOL)[3] == "3 tok/s · cpu"      # not "—"
        table.move_cursor(row=table.get_row_index(SMOL))
        await pilot.pause()
        detail = text_of(screen.query_one("#model-detail", Static))
        assert "loaded in 0.5 s" in detail and "checked 2025-01-02 03:04 UTC" in detail
        table.move_cursor(row=table.get_row_index("broken-model"))
        await pilot.press("c")
        await settle(pilot)
        assert cells(table, "broken-model")[3] == "✗ failed"

    again = RecordingApp(db, threads=1)
    async with again.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        table = again.screen.query_one("#models", DataTable)
        assert cells(table, "broken-model")[3] == "✗ failed"
        assert cells(table, SMOL)[3] == "3 tok/s · cpu"


@pytest.mark.asyncio
async def test_runs_shows_the_progress_live_shows_during_a_run(db_path):
    import threading

    from test_app_runs import FAKE, fake_config
    from testkit.scripted import ScriptedGenerator

    gate = threading.Event()
    slow = ScriptedGenerator(gate=gate, open_calls=3)     # three items, then it waits
    app = RecordingApp(db_path, generators={FAKE: slow})
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("3")                             # Runs, shown before the run
        await settle(pilot)
        app.start_run(fake_config(sample=2))               # 6 items
        await wait_until(pilot, lambda: len(slow.calls) >= 4, 30, "the fourth item to wait")
        controller = app.run_controller
        await wait_until(pilot, lambda: controller.latest is not None
                         and controller.latest.done == 3, 30, "Live at 3/6")
        await pilot.press("3")
        table = app.screen.query_one("#runs", DataTable)
        await wait_until(pilot, lambda: "fake-run" in {k.value for k in table.rows}
                         and cells(table, "fake-run")[2:4] == ["running", "3/6"], 20,
                         "Runs at 3/6 like Live")
        gate.set()
        await wait_until(pilot, lambda: not controller.running, 60, "the run's end")
        await pilot.press("3")
        await wait_until(pilot, lambda: cells(table, "fake-run")[2:4] == ["done", "6/6"], 20,
                         "Runs at done 6/6")
