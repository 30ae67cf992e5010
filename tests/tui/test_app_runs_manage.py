"""Managing runs in the app (Textual Pilot): Runs' R rename, D delete (asked; the cache stays unless
purged; a running run refused) and L log; New run's ctrl+o saving the form as the TOML that
``mirage-tui run --config`` plans the same way; config.toml's theme, keys and default models;
a "did you mean" for a typed run name. Real store and engine; the runs were made by the engine
with scripted generators (tests/tui/conftest.py)."""

from __future__ import annotations

import json
import os
import socket

import pytest
from textual.widgets import DataTable, Input, SelectionList, Static

from engine.app_config import load_app_config
from engine.store import Store
from mirage_tui import cli
from mirage_tui.dialogs.choice import ChoiceModal
from mirage_tui.dialogs.run_log import RunLogScreen
from mirage_tui.dialogs.text_prompt import TextPromptScreen
from mirage_tui.screens.new_run import NewRunScreen
from mirage_tui.screens.runs import RunsScreen
from testkit.tui import (RecordingApp, open_screen, palette, settle, text_of, wait_for_workers,
                         wait_until)

pytestmark = pytest.mark.asyncio
SMOL = "smollm2-135m-instruct"


def _counts(path) -> dict:
    store = Store(path)
    try:
        return {t: store.query(f"SELECT COUNT(*) FROM {t}")[0][0]
                for t in ("runs", "run_items", "generations", "scores")}
    finally:
        store.close()


def _names(screen) -> list[str]:
    table = screen.query_one("#runs", DataTable)
    return [str(row.key.value) for row in table.ordered_rows]


async def _highlight(pilot, screen, name: str) -> None:
    table = screen.query_one("#runs", DataTable)
    table.move_cursor(row=table.get_row_index(name))
    await pilot.pause()


async def test_rename_delete_and_log_from_the_runs_screen(workspace):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, RunsScreen())
        screen = app.screen
        await wait_until(pilot, lambda: _names(screen) == ["alpha", "beta"], what="the runs")
        # R: a dialog with the name; a taken name is refused in place
        await _highlight(pilot, screen, "alpha")
        await pilot.press("R")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, TextPromptScreen)
        field = dialog.query_one("#prompt-input", Input)
        assert field.value == "alpha"
        field.value = "beta"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is dialog
        assert "A run named beta exists already." in text_of(dialog.query_one("#prompt-error"))
        field.value = "alpha-renamed"
        await pilot.press("enter")
        await settle(pilot)
        await wait_until(pilot, lambda: _names(screen) == ["alpha-renamed", "beta"],
                         what="the renamed run")
        assert any(m == "Renamed alpha to alpha-renamed." for m, _ in app.notes)
        assert screen.query_one("#runs", DataTable).cursor_row == 0

        # the log, ending with the rename (from the palette here; L is its key)
        await palette(pilot, "show the highlighted run's log")
        await settle(pilot)
        assert isinstance(app.screen, RunLogScreen)
        log = text_of(app.screen.query_one("#log-text", Static))
        assert "session  session 1 started: new run" in log
        assert log.rstrip().endswith("rename   renamed from alpha to alpha-renamed")
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("L")
        await settle(pilot)
        assert isinstance(app.screen, RunLogScreen) and app.screen.run_name == "alpha-renamed"
        await pilot.press("escape")
        await settle(pilot)

        # D: asked first; Cancel (Enter: the safe button) changes nothing
        before = _counts(workspace["path"])
        await _highlight(pilot, screen, "beta")
        await pilot.press("D")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceModal)
        assert "stay in the shared cache" in text_of(app.screen.query_one("#choice-body"))
        await pilot.press("enter")
        await settle(pilot)
        assert _counts(workspace["path"]) == before and _names(screen) == ["alpha-renamed",
                                                                             "beta"]
        # d: delete, keeping the cache; the other run is untouched
        await pilot.press("D")
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        await wait_until(pilot, lambda: _names(screen) == ["alpha-renamed"], what="the delete")
        after = _counts(workspace["path"])
        assert after == {**before, "runs": 1, "run_items": before["run_items"] - 18}
        assert any(m.startswith("Deleted beta (18 items); its cached generations stay")
                   for m, _ in app.notes)


async def test_a_running_run_is_not_deleted_from_the_app(workspace):
    store = Store(workspace["path"])
    with store.write() as w:      # this live process holds beta
        w.conn.execute("UPDATE runs SET status = 'running' WHERE name = 'beta'")
        w.conn.execute("INSERT OR REPLACE INTO run_owners (run_id, pid, host, process_start, "
                       "claimed_at) SELECT id, ?, ?, NULL, 'now' FROM runs WHERE name = 'beta'",
                       (os.getpid(), socket.gethostname()))
    store.close()
    before = _counts(workspace["path"])
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, RunsScreen())
        screen = app.screen
        await wait_until(pilot, lambda: "beta" in _names(screen), what="the runs")
        await _highlight(pilot, screen, "beta")
        await pilot.press("D")
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        await wait_until(pilot, lambda: app.errors(), what="the refusal")
        assert f"run beta is running (pid {os.getpid()}); cannot delete it" in app.errors()[0]
        assert _counts(workspace["path"]) == before


async def test_new_run_saves_the_form_as_a_run_file_that_plans_the_same(
        workspace, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for_workers(pilot)
        await pilot.press("n")
        await wait_for_workers(pilot)
        screen = app.screen
        assert isinstance(screen, NewRunScreen)
        screen.query_one("#run-sample", Input).value = "4"
        screen.query_one("#run-seed", Input).value = "3"
        screen.query_one("#run-max-tokens", Input).value = "32"
        screen.query_one("#run-settings", SelectionList).deselect("mixed")
        plan = screen.query_one("#run-plan", Static)
        await wait_until(pilot, lambda: "Plan: 8 items = 4 queries × 1 system × 2 settings"
                         in text_of(plan), what="the plan")
        config = screen.build_config()
        await pilot.press("ctrl+o")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, TextPromptScreen)
        path = tmp_path / f"{config.name}.toml"
        assert dialog.query_one("#prompt-input", Input).value == str(path)
        await pilot.press("enter")
        await settle(pilot)
        await wait_until(pilot, path.exists, what="the saved file")
        assert any(m.startswith(f"Saved to {path}") for m, _ in app.notes)
        # again: the file is not overwritten
        text = path.read_text()
        await pilot.press("ctrl+o")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await wait_until(pilot, lambda: any("exists already" in m for m, _ in app.notes))
        assert path.read_text() == text
        # the form's plan is the file's plan
        from engine.runs import plan_named

        store = Store(workspace["path"])
        expected = plan_named(store, config).summary()
        store.close()
    capsys.readouterr()
    code = cli.main(["run", "--config", str(path), "--dry-run", "--json",
                     "--db", str(workspace["path"])])
    planned = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {k: planned[k] for k in expected} == expected
    assert planned["name"] == config.name and planned["count"] == 8


async def test_config_theme_keys_and_default_models(workspace, tmp_path, monkeypatch):
    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "config.toml").write_text(
        'theme = "nord"\ngenerators = ["nope-model", "' + SMOL + '"]\n'
        'embedder = "minilm-l6-v2"\n'
        '[keys]\nshow_runs = "f3"\n[keys.runs]\nlog = "ctrl+l"\nfrobnicate = "x"\n',
        encoding="utf-8")
    monkeypatch.setenv("MIRAGE_CONFIG_DIR", str(folder))
    settings = load_app_config()
    app = RecordingApp(workspace["path"], settings=settings)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for_workers(pilot)
        assert app.theme == "nord"
        # the bad key is reported in one line and left out; the app runs on
        warnings = [m for m, sev in app.notes if sev == "warning"]
        assert len(warnings) == 1 and "keys.runs.frobnicate: no such action on the runs " \
            "screen" in warnings[0] and warnings[0].endswith("starts with the default for it.")
        await pilot.press("f3")                 # [keys] show_runs: f3 instead of 3
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        screen = app.screen
        await wait_until(pilot, lambda: bool(_names(screen)), what="the runs")
        await pilot.press("ctrl+l")             # [keys.runs] log
        await settle(pilot)
        assert isinstance(app.screen, RunLogScreen)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("L")                  # the old key no longer opens it
        await settle(pilot)
        assert not isinstance(app.screen, RunLogScreen)
        # New run starts with the config's generators (those offered)
        await pilot.press("n")
        await wait_for_workers(pilot)
        new_run = app.screen
        assert new_run.query_one("#run-generators", SelectionList).selected == [SMOL]
        assert new_run.query_one("#run-retrievers", SelectionList).selected == ["minilm-l6-v2"]
        # a typed run name close to a stored one gets a "did you mean"
        new_run.query_one("#run-name", Input).value = "alpah"
        await wait_until(pilot, lambda: "No run is named alpah; did you mean alpha?" in text_of(
            new_run.query_one("#run-plan", Static)), what="the hint")


class TitledApp(RecordingApp):
    """The real app, remembering the title and text of every notification."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.titled: list[tuple[str, str]] = []

    def notify(self, message, *, title="", **kwargs) -> None:
        self.titled.append((title, str(message)))
        super().notify(message, title=title, **kwargs)


async def test_each_failure_of_the_runs_screen_is_told_once_by_its_part(workspace):
    from mirage_tui.screens.runs_messages import (ChangeFailed, ComparisonFailed, LogFailed,
                                                  ReportFailed, RunExportFailed, RunsFailed)

    app = TitledApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, RunsScreen())
        screen = app.screen
        await wait_until(pilot, lambda: _names(screen) == ["alpha", "beta"], what="the runs")
        await settle(pilot)    # every load of the opening done: none lands after a failure
        # (who posts it, the failure, the notification's title, whether the pane says it too)
        for part, failed, title, in_pane in [
                (screen, RunsFailed, "Could not load the runs", True),
                (screen.summary, ReportFailed, "Could not load the report", True),
                (screen.pairing, ComparisonFailed, "Could not load the comparison", True),
                (screen.changes, ChangeFailed, "Could not do the change", False),
                (screen.changes, LogFailed, "Could not load the log", False),
                (screen.export_resume, RunExportFailed, "Could not do the export", False)]:
            app.titled.clear()
            error = f"OSError: {failed.__name__}"
            part.post_message(failed(error))
            await settle(pilot)
            assert app.titled == [(title, error)], failed.__name__
            pane = text_of(screen.query_one("#run-summary", Static))
            assert (pane == f"Could not load {failed.what}: {error}") is in_pane, failed.__name__
