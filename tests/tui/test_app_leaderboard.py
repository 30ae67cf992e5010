"""The leaderboard screen and the heatmap widget, on the inspection workspace of conftest.py
(two runs by the real engine, arena ``duel`` on ``alpha`` with stored battles). Judging from
the screen runs the real arena engine with a scripted judge model at the edge."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Select, Static

from engine.arena.ratings.battles import load_battles
from engine.arena.ratings.leaderboard import compute_ratings
from engine.arena.types import Ratings, SystemRating
from engine.runs.lookup import load_run
from engine.store import Store
from testkit.arena import drop_references
from testkit.scripted import ScriptedJudge
from testkit.scripted_runs import A, B
from testkit.tui import RecordingApp, cells, open_judge_dialog, open_screen, settle, text_of

pytestmark = pytest.mark.asyncio


# --------------------------------------------------------------------------- heatmap


async def test_heatmap_text_cells_scale_and_legend():
    from mirage_tui.widgets.heatmap import _contrast, fraction_colour, heatmap_text

    names = ["alpha-system | mixed", "beta | oracle", "gamma"]
    fractions = [[None, 0.75, None], [0.25, None, 0.5], [None, 0.5, None]]
    counts = [[0, 8, 0], [8, 0, 2], [0, 2, 0]]
    text = heatmap_text(names, fractions, counts, width=14).plain
    lines = text.splitlines()
    assert lines[0].split() == ["1", "2", "3"]
    assert lines[1].split() == ["1", "—", "75.0", "·"]     # percent, one decimal
    assert lines[2].split() == ["2", "25.0", "—", "50.0"]
    # the legend within 14 cells, each name elided in the middle (its tail tells it apart)
    assert "\n 1 alpha…mixed\n" in text and " 3 gamma" in text
    with_counts = heatmap_text(names, fractions, counts, show_counts=True, width=14).plain
    assert with_counts.splitlines()[1].split() == ["1", "—", "8", "·"]
    # with room beside the grid, each row is labelled with its system's name (the columns
    # with the rows' numbers), no legend below
    wide = heatmap_text(names, fractions, counts, width=60).plain.splitlines()
    assert wide[1].startswith(" 1 alpha-system | mixed ") and wide[1].split()[-3:] == [
        "—", "75.0", "·"]
    assert wide[3].startswith(" 3 gamma ") and wide[0].split() == ["1", "2", "3"]
    assert not [line for line in wide[4:] if line.startswith(" 1 ")]
    assert "battles between row and column" in with_counts
    # red at 0, grey at 0.5, blue at 1; text picked for contrast on each
    assert fraction_colour(0.0) == (178, 34, 34) and fraction_colour(1.0) == (33, 102, 172)
    assert fraction_colour(0.5) == (136, 136, 136)
    assert _contrast(fraction_colour(0.0)) == "white" and _contrast((240, 240, 240)) == "black"


# --------------------------------------------------------------------------- leaderboard


async def test_leaderboard_ratings_heatmap_and_inspector(workspace):
    from mirage_tui.screens.inspector import InspectorScreen
    from mirage_tui.screens.leaderboard import LeaderboardScreen
    from mirage_tui.widgets.heatmap import WinFractionHeatmap

    store = Store(workspace["path"])
    expected = compute_ratings(load_battles(store, load_run(store, "alpha"), "duel"),
                               n_boot=200, seed=0)
    store.close()
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, LeaderboardScreen("alpha"))
        screen = app.screen
        assert screen.arena == "duel"
        table = screen.query_one("#ratings", DataTable)
        assert table.row_count == 4
        for r in expected.systems:
            row = cells(table, r.system)
            assert row[0] == str(r.rank) and row[2] == f"{r.elo:.0f}"
            assert row[3] == f"+{r.elo_hi - r.elo:.0f}/-{r.elo - r.elo_lo:.0f}"
            assert row[4] == str(r.battles) and row[5] == f"{r.wins}/{r.ties}/{r.losses}"
            assert row[6] == (f"{100 * r.win_rate:.1f}% [{100 * r.win_rate_lo:.1f}, "
                              f"{100 * r.win_rate_hi:.1f}] n={r.battles}")
        assert cells(table, f"{A} | mixed")[4] == "12"
        # the leaderboard's order is the engine's: best first
        assert [k.value for k in table.rows] == [r.system for r in expected.systems]
        status = text_of(screen.query_one("#lb-status", Static))
        assert "judge smollm2-135m-instruct" in status and "17 battles rated" in status
        assert "(1 unparsed left out)" in status
        assert "200 tournaments" in status
        # under the table, one line each: who judged it and how far to trust that judge
        # (never calibrated), the rule the default would follow, and the cross-check against
        # accuracy (issue 34); the ranking first
        judge = screen.query_one("#lb-judge", Static)
        header = text_of(judge).splitlines()
        assert header[0] == ("judged by smollm2-135m-instruct, judge not calibrated "
                             "(mirage-tui judge calibrate --judge smollm2-135m-instruct "
                             "--labels DATASET)")
        assert header[1].startswith("judge named for this arena; the default for this data "
                                    "would be reference:answer-match")
        assert header[2].startswith("cross-check with em_loose")
        assert judge.region.y > table.region.y and judge.region.height == 3

        heatmap = screen.query_one("#lb-heatmap", WinFractionHeatmap)
        grid = heatmap.text().plain
        names = [r.system for r in expected.systems]
        for i, name in enumerate(names, start=1):
            assert f"{i} {name}" in grid
        i, j = names.index(f"{B} | mixed"), names.index(f"{A} | mixed")
        row = grid.splitlines()[1 + i].split()[-4:]     # the cells after the row's name
        assert row[j] == "75.0"  # fake-b's mixed won 4, lost 1, tied 1 of 6: 4.5/6
        await pilot.press("c")
        assert heatmap.text().plain.splitlines()[1 + i].split()[-4:][j] == "6"
        app.theme = "textual-light"  # cells carry their own colours: same text, no error
        await pilot.pause()
        assert heatmap.text().plain.splitlines()[1 + i].split()[-4:][j] == "6"
        app.theme = "textual-dark"

        # the surrogate has no features yet: it says so and how to get them
        surrogate = text_of(screen.query_one("#lb-surrogate", Static))
        assert "no features yet" in surrogate or "unavailable" in surrogate
        assert "press u" in surrogate

        # Enter on a row: the inspector on that system and setting
        table.focus()
        table.move_cursor(row=table.get_row_index(f"{B} | mixed"))
        await pilot.press("enter")
        await settle(pilot)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        assert (inspector.filters.system, inspector.filters.setting) == (B, "mixed")
        assert inspector.query_one("#insp-items", DataTable).row_count == 6
        assert app.focused is inspector.query_one("#insp-items"), app.focused
        await pilot.press("escape")
        assert app.screen is screen
        assert not app.errors()


async def test_the_header_says_how_far_people_agree_with_the_judge(workspace, tmp_path):
    from mirage_tui.screens.leaderboard import LeaderboardScreen
    from testkit.html_runs import calibrated

    store = Store(workspace["path"])
    calibrated(store, tmp_path, judge="smollm2-135m-instruct")   # 6 pairs, all right
    store.close()
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, LeaderboardScreen("alpha"))
        line = text_of(app.screen.query_one("#lb-judge", Static))
        assert line.startswith("judged by smollm2-135m-instruct, agrees with people 100.0% [")
        assert "(n=6, labels people@1)" in line
        assert not app.errors()


async def test_surrogate_features_computed_from_the_screen(workspace, monkeypatch):
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, LeaderboardScreen())  # the latest run with an arena: alpha
        screen = app.screen
        assert screen.run_name == "alpha" and screen.arena == "duel"
        assert "no features yet" in text_of(screen.query_one("#lb-surrogate", Static))
        looked = counted_lookups(monkeypatch)
        await pilot.press("u")
        await settle(pilot)
        assert looked == ["alpha"]      # the job used the run held; the refresh after it read it
        surrogate = text_of(screen.query_one("#lb-surrogate", Static))
        assert "Kendall τ" in surrogate and "R²" in surrogate and "n=4" in surrogate
        for name in (f"{A} | mixed", f"{B} | mixed", f"{A} | oracle", f"{B} | oracle"):
            assert name in surrogate
        assert not app.errors()


def counted_lookups(monkeypatch) -> list[str]:
    """The names runs are looked up by from now on (``engine.runs.lookup.find_run``)."""
    import engine.runs.lookup as lookup

    looked, real = [], lookup.find_run

    def counted(store, name):
        looked.append(name)
        return real(store, name)

    monkeypatch.setattr(lookup, "find_run", counted)
    return looked


async def test_the_leaderboard_looks_its_run_up_once(workspace, tmp_path, monkeypatch):
    """The run is looked up by name once, with its arenas: the ratings, the surrogate, the
    HTML export and the judge dialog use that one (the features too: the next test); a refresh
    (the screen shown again) reads it again."""
    from mirage_tui.dialogs.export_run import ExportRunScreen
    from mirage_tui.dialogs.judge_arena import JudgeArenaScreen
    from mirage_tui.screens.leaderboard import LeaderboardScreen
    from testkit.tui import wait_for_workers, wait_until

    looked = counted_lookups(monkeypatch)
    monkeypatch.chdir(tmp_path)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_workers(pilot)
        looked.clear()          # the app's own look at the runs it could resume
        await open_screen(pilot, LeaderboardScreen("alpha"))
        await settle(pilot)
        screen = app.screen
        assert "no features yet" in text_of(screen.query_one("#lb-surrogate", Static))
        assert looked == ["alpha"]
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, ExportRunScreen), what="dialog")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("leaderboard of duel" in m for m, _ in app.notes),
                         what="the export's notification")
        await settle(pilot)
        assert looked == ["alpha"] * 2      # shown again as the dialog closed: read again
        await pilot.press("j")
        await wait_until(pilot, lambda: isinstance(app.screen, JudgeArenaScreen),
                         what="the judge dialog")
        await settle(pilot)                 # its judges listed, its estimate made
        assert "battles on" in text_of(app.screen.query_one("#judge-estimate", Static))
        assert looked == ["alpha"] * 2      # the dialog judges the run the screen holds
        assert not app.errors()


async def test_leaderboard_empty_states(workspace, tmp_path):
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    app = RecordingApp(tmp_path / "empty.db")
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, LeaderboardScreen())
        assert "No runs yet" in text_of(app.screen.query_one("#lb-status", Static))
        await pilot.press("c", "u", "enter")
        await settle(pilot)
        assert not app.errors()

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, LeaderboardScreen("beta"))
        status = text_of(app.screen.query_one("#lb-status", Static))
        assert "No arena yet for run beta" in status and "press j" in status
        assert app.screen.query_one("#ratings", DataTable).row_count == 0
        assert not app.errors()


def prefer_a(s, labels) -> dict[str, float]:
    """Always Answer A (0.7 / 0.2 / 0.1), through label_probs."""
    first = {label[:1].upper(): label for label in labels}
    probs = {label: 0.0 for label in labels}
    for letter, p in (("A", 0.7), ("B", 0.2), ("C", 0.1), ("T", 0.1)):
        if letter in first:
            probs[first[letter]] = p
    return probs


async def test_judging_from_the_leaderboard(workspace, monkeypatch):
    import models.catalog
    from models.catalog import CatalogEntry

    judge = ScriptedJudge(None, probs=prefer_a, name="scripted-judge", n_ctx=8192,
                          backend="scripted")
    entry = CatalogEntry(name="scripted-judge", kind="generator", path="/nowhere.gguf",
                         installed=True, install=None, size_bytes=None, quantization=None,
                         context_length=8192, license=None, chat=True, source="packaged")
    monkeypatch.setattr(models.catalog, "list_models", lambda *a, **k: [entry])
    monkeypatch.setattr(models.catalog, "load_generator", lambda *a, **k: judge)
    drop_references(workspace["path"])    # else the reference judge is the default

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_judge_dialog(pilot, "beta")
        screen = app.screen_stack[-2]               # the leaderboard the dialog opened on
        assert modal.query_one("#judge-model", Select).value == "scripted-judge"
        modal.query_one("#judge-queries").value = "2"
        modal.query_one("#judge-queries").focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        # 3 contestants (fake-a in base, oracle, mixed) → 3 pairs on each of 2 queries; the
        # same two answers twice are one judge call (the judgments cache)
        assert 1 <= len(judge.calls) <= 6
        assert any("Arena pairwise:scripted-judge: done, 6/6 battles" in m for m, _ in app.notes)
        assert screen.arena == "pairwise:scripted-judge"
        assert screen.query_one("#ratings", DataTable).row_count == 3
        assert not app.errors()


async def test_surrogate_text_shows_tau_and_r2_with_ci_and_n():
    from engine.arena.surrogate.forest import SurrogateReport, SurrogateRow
    from engine.stats import Estimate
    from mirage_tui.screens.leaderboard import surrogate_text

    rows = [SurrogateRow("s1", True, 1100.0, 1, 1090.0, 1),
            SurrogateRow("s2", True, 1000.0, 2, 1010.0, 2),
            SurrogateRow("s3", False, None, None, 950.0, 3)]
    report = SurrogateReport(rows, ["rouge_l"], {"rouge_l": 1.0}, Estimate(0.8, 0.4, 1.0, 4),
                             Estimate(0.5, -0.2, 0.9, 4), 2, 1, 200, 0, 200)
    text = surrogate_text(report).plain
    assert "Kendall τ 0.800 [0.400, 1.000] n=4" in text
    assert "R² 0.500 [-0.200, 0.900] n=4" in text
    assert "unjudged" in text and "rouge_l 1.00" in text


async def test_ratings_built_by_hand_render_in_the_widget():
    from mirage_tui.widgets.heatmap import WinFractionHeatmap

    ratings = Ratings(
        systems=[SystemRating("y", 1, 1100, 1050, 1150, 4, 3, 0, 1),
                 SystemRating("x", 1, 900, 850, 950, 4, 1, 0, 3)],
        order=["x", "y"], win_fraction=[[None, 0.25], [0.75, None]],
        battle_counts=[[0, 4], [4, 0]], n_queries=4, n_battles=4, parse_failures=0, n_boot=10,
        seed=0)
    widget = WinFractionHeatmap()
    widget.set_ratings(ratings)
    assert widget.names == ["y", "x"]  # leaderboard order, not the matrix order
    assert widget.fractions == [[None, 0.75], [0.25, None]]
