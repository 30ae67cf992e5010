"""New run's thinking fields: "on and off" plans each generator twice (two systems named
for their mode), the preview says who thinks, the budget and that a model without a switch
ignores the mode; a wrong budget is one line under the form; ctrl+o writes the mode and the
budget into the run file, which plans the same from the command line."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, Select, Static

from mirage_tui import cli
from mirage_tui.dialogs.text_prompt import TextPromptScreen
from mirage_tui.screens.new_run import NewRunScreen
from testkit.runs import SMOL
from testkit.tui import RecordingApp, settle, text_of, wait_for_workers, wait_until


@pytest.mark.asyncio
async def test_new_run_plans_thinking_on_and_off_and_saves_it(workspace, tmp_path,
                                                              monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for_workers(pilot)
        await pilot.press("n")
        await wait_for_workers(pilot)
        screen = app.screen
        assert isinstance(screen, NewRunScreen)
        screen.query_one("#run-sample", Input).value = "2"
        screen.query_one("#run-thinking", Select).value = "on,off"
        plan = screen.query_one("#run-plan", Static)
        await wait_until(pilot, lambda: "Plan: 12 items = 2 queries × 2 systems" in
                         text_of(plan), what="the plan of two systems")
        await wait_until(pilot, lambda: "thinking:" in text_of(plan), what="its thinking")
        shown = text_of(plan)
        assert f"{SMOL}/mirage@1 | think: does not think; mode on" in shown
        assert f"{SMOL}/mirage@1 | no-think: does not think; mode off" in shown
        assert "no thinking switch in its chat template; --thinking off has no effect" in shown
        screen.query_one("#run-thinking-budget", Input).value = "0"
        error = screen.query_one("#run-error", Static)
        await wait_until(pilot, lambda: "thinking_budget" in text_of(error),
                         what="the budget refused")
        screen.query_one("#run-thinking-budget", Input).value = "300"
        await wait_until(pilot, lambda: not text_of(error).strip(), what="the error gone")
        config = screen.build_config()
        assert (config.thinking, config.thinking_budget) == ("on,off", 300)
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert isinstance(app.screen, TextPromptScreen)
        path = tmp_path / f"{config.name}.toml"
        await pilot.press("enter")
        await settle(pilot)
        await wait_until(pilot, path.exists, what="the saved file")
    text = path.read_text()
    assert 'thinking = "on,off"' in text and "thinking_budget = 300" in text
    capsys.readouterr()
    code = cli.main(["run", "--config", str(path), "--dry-run", "--json",
                     "--db", str(workspace["path"])])
    planned = json.loads(capsys.readouterr().out)
    assert code == 0
    assert planned["systems"] == [f"{SMOL}/mirage@1 | think", f"{SMOL}/mirage@1 | no-think"]
    assert planned["name"] == config.name


def test_live_accuracy_columns_keep_the_mode_when_the_template_is_left_out():
    from types import SimpleNamespace

    from engine.stats import Estimate
    from mirage_tui.screens.live_run.panels import accuracy_columns

    cell = Estimate(value=0.5, lo=0.2, hi=0.8, n=4)
    report = SimpleNamespace(accuracy={f"{SMOL}/mirage@1 | think": {"oracle": cell},
                                       f"{SMOL}/mirage@1 | no-think": {"oracle": cell}})
    columns, settings, template = accuracy_columns(report)
    assert [name for name, _ in columns] == ["setting", f"{SMOL} | think",
                                             f"{SMOL} | no-think"]
    assert (settings, template) == (["oracle"], "mirage@1")
