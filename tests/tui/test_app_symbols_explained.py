"""Through Pilot on the inspection workspace: every symbol explained where
it is shown. The adaptability bars have a legend and say in words why items are not counted;
every key ``?`` lists has its description; Compare's ``?`` explains its verdict line, Holm and
the number of tests, and why mixed is the headline; the Leaderboard's win rate carries its CI
and n; the Inspector writes scores in percent and the judge's orders in words, and its footer
offers the verdict keys on a judged item."""

from __future__ import annotations

import re

import pytest
from textual.widgets import DataTable, Static
from textual.widgets._footer import FooterKey

from engine.arena.ratings.battles import load_battles
from engine.arena.ratings.leaderboard import compute_ratings
from engine.metrics.adaptability import OVERALL_MEANING
from engine.results.adaptability_rows import LeftOut
from engine.runs.lookup import load_run
from engine.store import Store
from mirage_tui.screens.compare import CompareScreen
from mirage_tui.widgets.adaptability import LEGEND, AdaptabilityPanel, heading_line
from testkit.report_rows import adaptability_row
from testkit.scripted_runs import A, B
from testkit.tui import RecordingApp, cells, open_screen, settle, text_of

pytestmark = pytest.mark.asyncio


def _options(panel: AdaptabilityPanel) -> list[str]:
    return [getattr(o.prompt, "plain", None) or str(o.prompt) for o in panel.options]


async def test_the_bars_have_a_legend_and_left_out_items_say_why(workspace):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("l")                        # Live, on the newest run
        await settle(pilot)
        panel = app.screen.query_one(AdaptabilityPanel)
        lines = _options(panel)
        assert lines[-2] == LEGEND
        # and the headings' overall says what it means (issue 36)
        assert lines[-1] == OVERALL_MEANING
        assert any(" · overall " in line for line in lines)
        assert "█ to the 95% CI's low end" in LEGEND and "▓ to the estimate" in LEGEND
        assert "─┤ to its high end" in LEGEND
    entry = adaptability_row("s", 4, overall=(0.5, 0.2, 0.8), left_out=LeftOut(1, 1))
    head = heading_line(entry).plain
    assert "left out" not in head
    assert "2 items not counted (1 errored, 1 not in all of base, oracle and mixed yet)" in head


async def test_every_key_the_help_lists_has_its_description(workspace):
    from mirage_tui.screens.inspector import InspectorScreen

    app = RecordingApp(workspace["path"])
    missing: list[str] = []

    def look(where: str) -> None:
        for key, active in app.screen.active_bindings.items():
            if not active.binding.system and not active.binding.description.strip():
                missing.append(f"{where}: {key} ({active.binding.action})")

    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        for key, where in (("1", "Datasets"), ("2", "Models"), ("3", "Runs"),
                           ("4", "Leaderboard"), ("n", "New run"), ("l", "Live run")):
            await pilot.press(key)
            await settle(pilot)
            if where == "New run":
                app.screen.query_one("#run-generators").focus()   # a list's own keys too
                await pilot.pause()
            look(where)
        # Live on a finished run: c and r cannot act; their hidden twins stand in
        assert not app.screen.check_action("resume_run", ())
        await open_screen(pilot, InspectorScreen("alpha"))
        look("Inspector")
        await open_screen(pilot, CompareScreen(f"alpha:{A}", f"alpha:{B}"))
        look("Compare")
    assert not missing, missing


async def test_compare_question_mark_explains_the_verdict(workspace):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 40)) as pilot:
        await open_screen(pilot, CompareScreen(f"alpha:{A}", f"alpha:{B}"))
        screen = app.screen
        verdict = text_of(screen.query_one("#cmp-verdict", Static))
        tests = int(re.search(r"(\d+) tests\)", verdict).group(1))
        # what "no clear difference" and Holm p mean, under the verdict (issue 36)
        assert (f"\nno clear difference = Holm p ≥ 0.05 (p corrected for {tests} tests) or 0 in "
                "the CI\n") in verdict
        explain = screen.query_one("#cmp-explain", Static)
        assert not explain.display
        await pilot.press("question_mark")
        await pilot.pause()
        assert explain.display
        text = text_of(explain)
        assert "em_loose in mixed" in text
        assert "mixed is the headline" in text and "distractors" in text
        assert f"{tests} tests: one p-value per row" in text
        assert "Holm's adjustment" in text and "under 5%" in text
        assert "Holm p < 0.05 and a CI that excludes 0" in text
        await pilot.press("question_mark")
        await pilot.pause()
        assert not explain.display


async def test_the_leaderboard_win_rate_has_its_ci_and_n(workspace):
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    store = Store(workspace["path"])
    expected = compute_ratings(load_battles(store, load_run(store, "alpha"), "duel"), n_boot=200,
                               seed=0)
    store.close()
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, LeaderboardScreen("alpha"))
        table = app.screen.query_one("#ratings", DataTable)
        for r in expected.systems:
            rate = cells(table, r.system)[6]
            assert rate == (f"{100 * r.win_rate:.1f}% [{100 * r.win_rate_lo:.1f}, "
                            f"{100 * r.win_rate_hi:.1f}] n={r.battles}")


async def test_inspector_scores_in_percent_orders_in_words_verdict_keys_in_footer(workspace):
    from mirage_tui.screens.inspector import InspectorScreen

    app = RecordingApp(workspace["path"])

    def footer_keys() -> set[str]:
        return {key for key, active in app.screen.active_bindings.items()
                if active.binding.show and active.node is app.screen}

    async with app.run_test(size=(120, 40)) as pilot:
        await open_screen(pilot, InspectorScreen("alpha", system=B, setting="mixed"))
        screen = app.screen
        assert not {"a", "e", "b"} & footer_keys()      # no item open: not offered
        await pilot.press("enter")
        await settle(pilot)
        assert screen.detail_shown and screen.shown_verdicts
        assert {"a", "e", "b"} <= footer_keys()
        await pilot.pause(0.2)
        shown = {k.key for k in app.screen.query(FooterKey)
                 if k.region.width and k.region.right <= app.size.width}
        assert {"a", "e", "b"} <= shown, shown          # on screen, not past the footer's end
        panels = [text_of(p) for p in screen.query(".setting-panel")]
        scores = "\n".join(panels)
        assert "rates in %" in scores
        f1 = re.search(r"^f1_mirage\s+(\S+)", scores, re.M).group(1)
        assert re.fullmatch(r"\d{1,3}\.\d", f1), f1                 # 12.9, not 0.129
        verdicts = text_of(screen.query_one("#d-verdicts", Static))
        assert "shown ab" not in verdicts and "shown ba" not in verdicts
        assert re.search(r"shown first, .+ second: the judge chose ", verdicts), verdicts
        assert "P(first) " in verdicts and "%" in verdicts
        await pilot.press("escape")                     # back to the list
        await pilot.pause()
        assert not {"a", "e", "b"} & footer_keys()
        await pilot.press("a")                          # pressed anyway: it says why
        await pilot.pause()
        assert any("Open an item first" in m for m, _ in app.notes)
