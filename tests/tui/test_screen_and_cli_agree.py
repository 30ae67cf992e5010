"""The screen and the CLI show the same figures for the same run (issue 36, "one truth"): the
Runs summary against ``report --json``, the Compare screen against ``compare --json``, the
Leaderboard against ``arena ratings --json``, each command run as the user runs it (a child
process, its default resamples and seed) on the inspection workspace
(:mod:`testkit.scripted_runs`), each screen driven by Pilot."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from textual.widgets import DataTable, Static

from testkit.scripted_runs import A, B
from testkit.shown import numbers, shown_cells
from testkit.tui import RecordingApp, open_screen, settle, text_of

pytestmark = pytest.mark.asyncio

WIDE = (220, 60)        # every table on one line a row: cells read whole


def cli(path, *args) -> dict:
    out = subprocess.run([sys.executable, "-m", "mirage_tui.cli", *args, "--db", str(path),
                          "--json"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def cells(line: str) -> list[str]:
    """A text table's row as its cells (columns are two or more spaces apart)."""
    return re.split(r"\s{2,}", line.strip())


async def test_runs_summary_shows_the_figures_of_report_json(workspace):
    from engine.results.text import pct
    from engine.stats import N_BOOT, SEED
    from mirage_tui.screens.runs import RunsScreen

    report = cli(workspace["path"], "report", "alpha")
    assert (report["n_boot"], report["seed"]) == (N_BOOT, SEED)     # the CLI's defaults
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=WIDE) as pilot:
        await open_screen(pilot, RunsScreen())
        table = app.screen.query_one("#runs", DataTable)
        table.move_cursor(row=table.get_row_index("alpha"))
        await pilot.press("enter")
        await settle(pilot)
        shown = text_of(app.screen.query_one("#run-summary", Static))
        assert not app.errors()
    lines = shown.splitlines()
    # the same resampling, said in the same words
    assert (f"bootstrap, {report['n_boot']} resamples, seed {report['seed']})"
            in " ".join(lines)), shown
    # every accuracy: system × setting, value and CI as the JSON has them
    settings = list(dict.fromkeys(s for per in report["accuracy"].values() for s in per))
    assert len(report["accuracy"]) == 2 and settings == ["base", "oracle", "mixed"]
    for system, per in report["accuracy"].items():
        row = next(cells(x) for x in lines if x.strip().startswith(system + " "))
        assert row == [system] + [f"{pct(per[s]['value'], per[s]['lo'], per[s]['hi'])} "
                                  f"n={per[s]['n']}" for s in settings], (system, row)
    # every adaptability share and the overall, with its n
    systems = report["systems"]
    assert len(systems) == 2
    for entry in systems:
        rows = [cells(x) for x in lines if x.strip().startswith(entry["system"] + " ")]
        shares, overall = rows[1], rows[2]      # after the accuracy row
        assert shares == [entry["system"], str(entry["n"])] + [
            pct(entry[k], entry[f"{k}_lo"], entry[f"{k}_hi"]) for k in ("nv", "ca", "ci", "cm")]
        assert overall == [entry["system"], pct(entry["overall"], entry["overall_lo"],
                                                entry["overall_hi"])]


async def test_compare_screen_shows_the_figures_of_compare_json(workspace):
    """The Δ CIs come from the paired bootstrap: other resamples would move them."""
    from engine.results.paired_words import p_text
    from engine.stats import PAIRED_N_BOOT, SEED
    from engine.units import fmt_delta_interval
    from mirage_tui.screens.compare import CompareScreen

    a, b = f"alpha:{A}", f"alpha:{B}"
    data = cli(workspace["path"], "compare", a, b)
    assert (data["n_boot"], data["seed"]) == (PAIRED_N_BOOT, SEED)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=WIDE) as pilot:
        await open_screen(pilot, CompareScreen(a, b))
        await settle(pilot)
        table = app.screen.query_one("#cmp-rows", DataTable)
        shown = shown_cells(app.screen, table)
        used = app.screen.comparison.n_boot, app.screen.comparison.seed
        assert not app.errors()
    assert used == (data["n_boot"], data["seed"])
    assert len(shown) == len(data["rows"]) > 3
    bootstrapped = 0
    for i, row in enumerate(data["rows"]):
        got = shown[str(i)]
        assert (got["metric"], got["n"]) == (row["metric"], str(row["n"]))
        assert numbers(got["Δ [95% CI]"]) == numbers(
            fmt_delta_interval(row["delta"], row["lo"], row["hi"], row["metric"])), (row, got)
        assert numbers(got["Holm p"]) == numbers(p_text(row["p_holm"]))
        bootstrapped += row["lo"] is not None and row["lo"] != row["hi"]
    assert bootstrapped > 3


async def test_leaderboard_shows_the_figures_of_arena_ratings_json(workspace):
    from engine.stats import SEED, TOURNAMENTS
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    data = cli(workspace["path"], "arena", "ratings", "alpha", "--arena", "duel")
    assert (data["n_boot"], data["seed"]) == (TOURNAMENTS, SEED)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=WIDE) as pilot:
        await open_screen(pilot, LeaderboardScreen("alpha", "duel"))
        await settle(pilot)
        shown = shown_cells(app.screen, app.screen.query_one("#ratings", DataTable))
        used = app.screen.ratings.n_boot, app.screen.ratings.seed
        assert not app.errors()
    assert used == (data["n_boot"], data["seed"])
    assert set(shown) == {s["system"] for s in data["systems"]}
    for s in data["systems"]:
        got = shown[s["system"]]
        assert numbers(got["elo"]) == [f"{s['elo']:.0f}"]
        assert numbers(got["ci"]) == [f"{s['elo_hi'] - s['elo']:.0f}",
                                      f"{s['elo'] - s['elo_lo']:.0f}"], (s, got)
        assert numbers(got["rank"]) == [str(s["rank"])]
