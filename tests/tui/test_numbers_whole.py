"""No number is ever cut into another (issue 34: at 120 columns the Leaderboard's win rate read
``61.4% [48.6, 72.7] n=1`` for n=110). Every number the Leaderboard, Runs, Compare and the
Inspector show in their tables at 80×24 and 120×35 is read off the screen as drawn
(:mod:`testkit.shown`) and checked against the engine's figures behind it, on a crowded
workspace (:mod:`testkit.crowded`: 12 systems with long names, three-digit battle counts): a
column shows its numbers whole or is left out whole and named, and the rank column says what it
means."""

from __future__ import annotations

import shutil

import pytest
from textual.widgets import DataTable

from engine.store import Store
from test_snapshots_runs import SnapshotApp
from test_snapshots_sizes import SIZES, steps
from testkit.crowded import ARENA, FIXED_TIME, GENERATORS, LABELS, RUN, SETTINGS, add_crowd
from testkit.cuts import cuts
from testkit.scripted_runs import A, B
from testkit.scripted_runs import FIXED_TIME as WORKSPACE_TIMES
from testkit.scripted_runs import LABELS as WORKSPACE_LABELS
from testkit.shown import numbers, shown_cells
from testkit.tui import settle, text_of

pytestmark = pytest.mark.asyncio

SIDE_A, SIDE_B = (f"{RUN}:{g}/mirage@1" for g in (GENERATORS[0], GENERATORS[2]))
SIZES = {**SIZES, "100x30": (100, 30)}      # and a width between


@pytest.fixture(scope="module")
def crowded_template(workspace_template, tmp_path_factory) -> dict:
    """The inspection workspace with the crowded run and its arena, built once."""
    path = tmp_path_factory.mktemp("crowded") / "workspace.db"
    shutil.copy(workspace_template["path"], path)
    return {"path": path, "queries": add_crowd(path)}


@pytest.fixture
def crowded(crowded_template, tmp_path) -> dict:
    path = tmp_path / "workspace.db"
    shutil.copy(crowded_template["path"], path)
    return {**crowded_template, "path": path}


@pytest.fixture(scope="module")
def crowded_store(crowded_template, tmp_path_factory):
    """A store of a copy of the crowded workspace, for the engine's figures that the screens
    are checked against: the same at every size, so computed once a module."""
    path = tmp_path_factory.mktemp("crowded-figures") / "workspace.db"
    shutil.copy(crowded_template["path"], path)
    store = Store(path)
    yield store
    store.close()


@pytest.fixture(scope="module")
def crowded_ratings(crowded_store):
    """The crowded arena's ratings as the Leaderboard computes them."""
    from engine.arena.ratings.battles import load_battles
    from engine.arena.ratings.leaderboard import compute_ratings
    from engine.runs.lookup import load_run
    from mirage_tui.screens.leaderboard.data import N_BOOT

    return compute_ratings(load_battles(crowded_store, load_run(crowded_store, RUN), ARENA),
                           n_boot=N_BOOT, seed=0)


@pytest.fixture(scope="module")
def crowded_comparison(crowded_store):
    """``compare``'s figures for the two sides, at its default bootstrap."""
    from engine.arena.ratings.duel import compare
    from engine.results.pairing import side_runs
    from engine.stats import PAIRED_N_BOOT

    return compare(crowded_store, SIDE_A, SIDE_B, side_runs(crowded_store, SIDE_A, SIDE_B),
                   n_boot=PAIRED_N_BOOT)


async def _read(path, size, screen, tables, texts=()):
    """Open ``screen`` (a step of :func:`steps`: a key, or a screen of the store path) at
    ``size``; once it stopped changing:
    ``({table id: (shown cells, the table)}, {static id: its text}, what is cut on it)``."""
    app = SnapshotApp(path)
    async with app.run_test(size=SIZES[size]) as pilot:
        await steps(screen)(pilot)
        found = cuts(app.screen)
        read = {}
        for table_id in tables:
            table = app.screen.query_one(f"#{table_id}", DataTable)
            read[table_id] = (shown_cells(app.screen, table), table)
            _drawn_as_held(read[table_id][0], table)
        return read, {t: text_of(app.screen.query_one(f"#{t}")) for t in texts}, found


def _drawn_as_held(shown: dict, table: DataTable) -> None:
    """Each cell on screen is drawn whole: what the screen shows is the cell's text."""
    assert shown, f"{table.id}: no row on screen"
    for key, cells in shown.items():
        held = dict(zip(table.columns, table.get_row(key)))
        for column, text in cells.items():
            plain = getattr(held[column], "plain", str(held[column])).strip()
            assert text == plain, f"{table.id} {key!r}: {column} shows {text!r} of {plain!r}"


def _check(shown: dict, expected: dict) -> None:
    """Every shown cell's numbers are the figures ``expected[row][column]``; a column left
    out is not checked here (the caller checks that it is named)."""
    for key, cells in shown.items():
        for column, figures in expected[key].items():
            if column in cells:
                assert numbers(cells[column]) == figures, (key, column, cells[column], figures)


def _named(table: DataTable, labels: dict, where: str) -> None:
    """The columns left out of ``table`` are named in its border ``where`` (title/subtitle)."""
    text = str(getattr(table, f"border_{where}"))
    missing = [label for key, label in labels.items() if key not in table.columns]
    assert all(label in text for label in missing), (missing, text)


@pytest.mark.parametrize("size", list(SIZES))
async def test_leaderboard_numbers_are_whole_and_the_rank_explained(size, crowded,
                                                                   crowded_ratings):
    from mirage_tui.screens.leaderboard import LeaderboardScreen
    from mirage_tui.screens.leaderboard.board import RATING_COLUMNS

    read, texts, found = await _read(crowded["path"], size,
                                     lambda path: LeaderboardScreen(RUN, ARENA), ["ratings"],
                                     ["lb-notes"])
    shown, table = read["ratings"]
    ratings = crowded_ratings

    def pct(x: float) -> str:
        return f"{100 * x:.1f}"

    expected = {s.system: {
        "rank": [str(s.rank)], "elo": [f"{s.elo:.0f}"],
        "ci": [f"{s.elo_hi - s.elo:.0f}", f"{s.elo - s.elo_lo:.0f}"],
        "battles": [str(s.battles)], "wtl": [str(s.wins), str(s.ties), str(s.losses)],
        "rate": [pct(s.win_rate), pct(s.win_rate_lo), pct(s.win_rate_hi), str(s.battles)]}
        for s in ratings.systems}
    assert {s.battles for s in ratings.systems} == {132}     # three digits: n=13 was cut
    _check(shown, expected)
    assert {"rank", "elo", "ci", "rate"} <= set(table.columns), list(table.columns)
    _named(table, RATING_COLUMNS, "title")
    assert not found, "\n".join(found)
    top = sum(s.rank == 1 for s in ratings.systems)
    notes = texts["lb-notes"]
    assert top > 1 and f"overlapping CIs share a rank ({top} share rank 1)" in notes, notes


@pytest.mark.parametrize("size", list(SIZES))
async def test_runs_numbers_are_whole(size, crowded):
    from engine.runs.lookup import load_run
    from mirage_tui.screens.runs import COLUMNS

    read, _, found = await _read(crowded["path"], size, "3", ["runs"])
    shown, table = read["runs"]
    labels = {**WORKSPACE_LABELS, RUN: LABELS}
    times = {**WORKSPACE_TIMES, RUN: FIXED_TIME}
    store = Store(crowded["path"])
    try:
        seeds = {name: str(load_run(store, name).config["seed"]) for name in labels}
    finally:
        store.close()
    expected = {}
    for name, per in labels.items():
        items = str(len(per) * len(SETTINGS) * len(next(iter(per.values()))))
        expected[name] = {"items": [items, items], "seed": [seeds[name]],
                          "created": numbers(times[name][:10]),
                          "updated": numbers(times[name][11:16]), "dataset": ["1"]}
    assert set(shown) == set(labels)
    _check(shown, expected)
    _named(table, {c: c for c in COLUMNS}, "title")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("size", list(SIZES))
async def test_compare_numbers_are_whole(size, crowded, crowded_comparison):
    from engine.results.paired_words import p_text
    from engine.units import fmt_delta_interval, fmt_value
    from mirage_tui.screens.compare import ROW_COLUMNS, CompareScreen

    read, _, found = await _read(crowded["path"], size,
                                      lambda path: CompareScreen(SIDE_A, SIDE_B),
                                      ["cmp-rows", "cmp-flips"])
    shown, table = read["cmp-rows"]
    c = crowded_comparison
    expected = {str(i): {
        "n": [str(r.n)], "A": numbers(fmt_value(r.a, r.metric)),
        "B": numbers(fmt_value(r.b, r.metric)),
        "Δ [95% CI]": numbers(fmt_delta_interval(r.delta, r.lo, r.hi, r.metric)),
        "p": numbers(p_text(r.p)), "Holm p": numbers(p_text(r.p_holm))}
        for i, r in enumerate(c.rows)}
    _check(shown, expected)
    assert "Δ [95% CI]" in table.columns
    _named(table, ROW_COLUMNS, "subtitle")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("size", list(SIZES))
async def test_inspector_numbers_are_whole(size, crowded):
    from mirage_tui.screens.inspector import InspectorScreen

    read, _, found = await _read(crowded["path"], size,
                                      lambda path: InspectorScreen(RUN), ["insp-items"])
    shown, table = read["insp-items"]
    position = {q: i for i, q in enumerate(crowded["queries"])}
    expected = {}
    for key in shown:
        system, setting, query = key.split("\t")
        pattern = LABELS[system.split("/")[0]][position[int(query)]]
        em = pattern[SETTINGS.index(setting)]
        expected[key] = {"EM": [str(em)], "pattern": [str(x) for x in pattern]}
    _check(shown, expected)
    # a question or a reply narrows at words: every figure it shows is one of its own, whole
    for key, cells in shown.items():
        held = dict(zip(table.columns, table.get_row(key)))
        for column in ("question", "response"):
            whole = numbers(held[column].full)
            assert all(n in whole for n in numbers(cells[column])), (key, cells[column])
    assert not found, "\n".join(found)


async def test_the_leaderboard_refits_when_the_terminal_is_resized(crowded):
    """From 120 to 80 columns and back: the columns that no longer fit go whole and are
    named, and come back whole."""
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    app = SnapshotApp(crowded["path"])
    async with app.run_test(size=SIZES["120x35"]) as pilot:
        await steps(lambda path: LeaderboardScreen(RUN, ARENA))(pilot)
        table = app.screen.query_one("#ratings", DataTable)
        assert "wtl" in table.columns
        for size, left_out in (("80x24", True), ("120x35", False)):
            await pilot.resize_terminal(*SIZES[size])
            await settle(pilot)
            assert ("wtl" not in table.columns) == left_out
            assert ("W/T/L" in str(table.border_title)) == left_out
            _drawn_as_held(shown_cells(app.screen, table), table)
            assert not cuts(app.screen), (size, cuts(app.screen))


async def test_the_reader_sees_a_number_cut_at_the_edge():
    """The reader itself: a column running past a narrow table's right edge is read cut, as
    the screen draws it (``n=1`` of ``n=110``), and one wholly past it reads empty."""
    from textual.app import App

    class Narrow(App):
        CSS = "DataTable { width: 36; height: 4; scrollbar-size-vertical: 0; }"

        def compose(self):
            yield DataTable(id="t")

        def on_mount(self):
            table = self.query_one(DataTable)
            table.add_column("system", key="system")
            table.add_column("rate", key="rate")
            table.add_column("more", key="more")
            table.add_row("gemma3-270m", "61.4% [48.6, 72.7] n=110", "7", key="g")

    app = Narrow()
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        shown = shown_cells(app.screen, app.query_one(DataTable))
    assert shown == {"g": {"system": "gemma3-270m", "rate": "61.4% [48.6, 72.7] n=1",
                           "more": ""}}, shown
    assert numbers(shown["g"]["rate"])[-1] == "1"
