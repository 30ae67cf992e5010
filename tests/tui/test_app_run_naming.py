"""One naming rule for a run's configuration. The New-run form and
``mirage-tui run`` name the same plan the same way, so starting it from one resumes a run
started from the other."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Static

from engine.runs import RunConfig
from engine.runs.plan import dataset_reference
from engine.store import Store
from mirage_tui.cli import main as cli_main
from testkit.runs import SMOL
from testkit.timed import TimedGenerator
from testkit.tui import RecordingApp, text_of, wait_for_run, wait_for_workers, wait_until

@pytest.mark.asyncio
async def test_form_and_cli_name_the_same_plan_alike_and_the_cli_resumes_it(db_path, capsys):
    fast = TimedGenerator(SMOL, prompt_tps=1e6, gen_tps=1e6)
    app = RecordingApp(db_path, generators={SMOL: fast})
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for_workers(pilot)
        await pilot.press("n")
        await wait_for_workers(pilot)
        screen = app.screen
        screen.query_one("#run-sample", Input).value = "3"
        plan = screen.query_one("#run-plan", Static)
        await wait_until(pilot, lambda: "Plan: 9 items" in text_of(plan), 30, "the plan")
        name = screen.config.name
        assert name.startswith(f"demo-{SMOL}-"), name     # the dataset as the CLI writes it
        await pilot.press("ctrl+s")
        await wait_for_run(pilot)
        assert app.run_controller.summary.status == "done"
        assert app.run_controller.summary.done == 9

    # the same plan from the command line: the same name, and it resumes the form's run
    code = cli_main(["run", "--db", str(db_path), "--dataset", "demo", "--generator", SMOL,
                     "--sample", "3", "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"run {name} (resumes (status done))" in out
    assert "stored: 9 items of this run" in out
    # typed with the version, or with the settings in another order: still the same run
    code = cli_main(["run", "--db", str(db_path), "--dataset", "demo@1", "--generator", SMOL,
                     "--settings", "mixed,base,oracle", "--sample", "3", "--dry-run"])
    assert code == 0 and f"run {name} (resumes" in capsys.readouterr().out
    assert Store(db_path).query("SELECT COUNT(*) FROM runs")[0][0] == 1


def test_dataset_reference_is_the_bare_name_for_the_newest_version(tmp_path):
    from engine.datasets.demo_pool import ensure_demo

    store = Store(tmp_path / "w.db")
    ensure_demo(store)
    assert dataset_reference(store, "demo@1") == "demo"
    assert dataset_reference(store, "demo") == "demo"
    assert dataset_reference(store, "demo@7") == "demo@7"      # unknown: plan_run says so
    a = RunConfig(dataset="demo", generators=["g"], settings=["mixed", "base"], sample=3)
    b = RunConfig(dataset="demo", generators=["g"], settings=["base", "mixed"], sample=3)
    assert a.name == b.name and a.settings == ["base", "mixed"]
