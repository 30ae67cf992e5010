"""One unit per metric. A 0–1 metric is a percentage with one decimal
(``33.3 [9.9, 65.1]``) on Live, in the Runs summary and in ``mirage-tui report`` alike; a
difference is ``+12.5 pp``; JSON keeps the raw fractions."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from textual.widgets import DataTable, Static

from engine.stats import Estimate
from engine.units import (fmt_delta, fmt_delta_interval, fmt_estimate, fmt_interval,
                                  fmt_points, fmt_value)
from mirage_tui.cli import main as cli_main
from mirage_tui.screens.live_run import LiveRunScreen
from mirage_tui.widgets.adaptability import AdaptabilityPanel
from testkit.tui import RecordingApp, settle, text_of, wait_until


def test_the_rule():
    assert fmt_interval(0.3, 0.1, 0.6) == "30.0 [10.0, 60.0]"
    assert fmt_value(-1.0) == "-100.0" and fmt_value(None) == "–"
    assert fmt_estimate(Estimate(0.25, 0.05, 0.5, 8)) == "25.0 [5.0, 50.0] n=8"
    assert fmt_estimate(None) == "– n=0"
    assert fmt_delta(0.125) == "+12.5 pp" and fmt_delta(-0.02) == "-2.0 pp"
    assert fmt_delta_interval(0.125, 0.02, 0.23) == "+12.5 pp [+2.0, +23.0]"
    assert fmt_points(0.03) == "3.0 pp"
    assert fmt_interval(1.25, 0.8, 1.7, "citations") == "1.25 [0.80, 1.70]"


def _cli(*args) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):        # the app may hold sys.stdout
        assert cli_main(list(args)) == 0
    return out.getvalue()


@pytest.mark.asyncio
async def test_live_runs_and_report_write_the_same_number_the_same_way(workspace):
    db = str(workspace["path"])
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        live = app.screen
        assert isinstance(live, LiveRunScreen) and live.report is not None
        run = live.run_name
        report = json.loads(_cli("report", "--db", db, run, "--json"))
        text = _cli("report", "--db", db, run)

        # accuracy (exact intervals): the same string on Live and in the report
        system, by_setting = next(iter(report["accuracy"].items()))
        est = by_setting["oracle"]
        assert 0 <= est["value"] <= 1                      # JSON: the raw fraction
        shown = fmt_interval(est["value"], est["lo"], est["hi"])
        table = live.query_one("#live-accuracy", DataTable)
        live_cells = [str(c) for row in range(table.row_count)
                      for c in table.get_row_at(row)]
        assert f"{shown} n={est['n']}" in live_cells
        assert shown in text

        # the overall adaptability score: -100.0 … 100.0 everywhere, never -1.00
        entry = report["systems"][0]
        overall = fmt_value(entry["overall"])
        panel = live.query_one(AdaptabilityPanel)
        headings = [str(getattr(o.prompt, "plain", o.prompt)) for o in panel.options]
        assert any(f"overall {overall} [" in h for h in headings), (overall, headings)
        assert f" {overall} [" in text

        # the Runs summary of the same run
        await pilot.press("3")
        await settle(pilot)
        runs = app.screen
        table = runs.query_one("#runs", DataTable)
        table.move_cursor(row=table.get_row_index(run))
        await pilot.press("enter")
        summary = runs.query_one("#run-summary", Static)
        await wait_until(pilot, lambda: shown in text_of(summary), 30, "the summary")
        assert f" {overall} [" in text_of(summary)
