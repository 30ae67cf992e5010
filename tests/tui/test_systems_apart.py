"""Layout that tells systems apart (issue 36): systems on one host that differ only by their
model, settings that differ only by their retriever's index, twelve arena contestants
(:mod:`testkit.host_systems`). At 80×24 and 120×35 no two rows of the Leaderboard, Runs,
Compare or Inspector read the same when their systems differ, what every name shares is said
once, a tall terminal shows all twelve ratings, and the footer keeps Quit and Keys."""

from __future__ import annotations

import shutil

import pytest
from rich.text import Text
from textual.widgets import DataTable, Select, Static

from engine.text_fit import ELLIPSIS
from mirage_tui.widgets.safe_text import ElidedText
from testkit.cuts import cuts
from testkit.host_systems import (HOST, MODELS, RUN, SYSTEMS, build_host_workspace,
                                  contestants)
from testkit.tui import RecordingApp, open_screen, screen_stable, settle, text_of, wait_until

pytestmark = pytest.mark.asyncio

SIZES = {"80x24": (80, 24), "120x35": (120, 35)}


@pytest.fixture(scope="module")
def host_template(tmp_path_factory):
    return build_host_workspace(tmp_path_factory.mktemp("hosts") / "hosts.db")["path"]


@pytest.fixture
def hosts(host_template, tmp_path):
    path = tmp_path / "hosts.db"
    shutil.copy(host_template, path)
    return path


def _leaderboard():
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    return LeaderboardScreen(RUN)


def _runs():
    from mirage_tui.screens.runs import RunsScreen

    return RunsScreen()


def _compare():
    from mirage_tui.screens.compare import CompareScreen

    return CompareScreen(f"{RUN}:{SYSTEMS[0]}", f"{RUN}:{SYSTEMS[1]}")


def _inspector():
    from mirage_tui.screens.inspector import InspectorScreen

    return InspectorScreen(RUN)


SCREENS = {"leaderboard": _leaderboard, "runs": _runs, "compare": _compare,
           "inspector": _inspector}


def _plain(cell) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def rows_alike(table: DataTable) -> list[str]:
    """Rows of ``table`` that read the same though what they stand for differs."""
    seen: dict[tuple, tuple] = {}
    found = []
    for r in range(table.row_count):
        cells = table.get_row_at(r)
        shown = tuple(_plain(c) for c in cells)
        full = tuple(c.full if isinstance(c, ElidedText) else _plain(c) for c in cells)
        if seen.setdefault(shown, full) != full:
            found.append(f"#{table.id}: {shown} stands for {seen[shown]} and {full}")
    return found




@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("screen", list(SCREENS))
async def test_no_two_rows_read_the_same(screen, size, hosts):
    app = RecordingApp(hosts)
    async with app.run_test(size=SIZES[size]) as pilot:
        await open_screen(pilot, SCREENS[screen]())
        await screen_stable(pilot)
        tables = [t for t in app.screen.query(DataTable) if t.row_count]
        assert tables, "no rows shown"
        found = [f for t in tables for f in rows_alike(t)]
        assert not found, "\n".join(found)
        assert not cuts(app.screen), "\n".join(cuts(app.screen))


async def test_the_leaderboard_keeps_the_model_and_says_the_host_once(hosts):
    """At 120×35 every contestant's model shows whole, the host, the template and the
    retriever's name (shared by all) are said once under the table, and the index hashes
    that differ tell the retrievers apart."""
    app = RecordingApp(hosts)
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, _leaderboard())
        table = app.screen.query_one("#ratings", DataTable)
        assert table.row_count == len(contestants())
        shown = {_plain(table.get_row_at(r)[1]) for r in range(table.row_count)}
        assert len(shown) == len(contestants())
        for model in MODELS:
            assert sum(name.startswith(f"{model} | #") for name in shown) == 3, shown
        assert not any(HOST in name or "mirage@1" in name for name in shown), shown
        caption = _plain(table.border_subtitle)
        assert caption.startswith(f"all on {HOST}") and "mirage@1" in caption, caption


async def test_the_inspector_tells_the_retrieved_settings_apart(hosts):
    """At 80×24 the three retrieved settings (one retriever, three indexes) read apart in the
    list, and the filters keep a label each."""
    app = RecordingApp(hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_screen(pilot, _inspector())
        await screen_stable(pilot)
        table = app.screen.query_one("#insp-items", DataTable)
        settings = {}
        for r in range(table.row_count):
            cell = table.get_row_at(r)[1]
            settings.setdefault(cell.full, set()).add(_plain(cell))
        retrieved = {full: shown for full, shown in settings.items()
                     if full.startswith("retrieved@")}
        assert len(retrieved) == 3
        assert len({next(iter(s)) for s in retrieved.values()}) == 3, retrieved
        assert all(len(s) == 1 for s in settings.values()), settings
        assert HOST in _plain(table.border_subtitle)
        # the cut filter is offered only to a run with answers cut at the token limit: not here
        assert not app.screen.query_one("#f-cut", Select).display
        for select in app.screen.query(Select):
            if not select.display:
                continue
            prompt = select.prompt
            assert prompt not in ("all", "any", "no") and len(prompt) <= select.size.width - 3, \
                (select.id, prompt, select.size.width)


async def test_a_tall_terminal_shows_every_rating(hosts):
    """Issue 36: the Ratings table stayed at 10 rows in a 70-row terminal, hiding 2 of 12;
    in a low one it is no higher than the pane it scrolls in (its cursor stays in sight)."""
    app = RecordingApp(hosts)
    async with app.run_test(size=(120, 70)) as pilot:
        await open_screen(pilot, _leaderboard())
        await screen_stable(pilot)
        table = app.screen.query_one("#ratings", DataTable)
        assert table.row_count == 12
        assert table.max_scroll_y == 0, (table.size, table.virtual_size)
        assert table.scrollable_content_region.height >= 12 + 1     # the header too
        await pilot.resize_terminal(80, 16)     # lower than the 12 rows with the header
        await screen_stable(pilot)
        body = app.screen.query_one("#lb-body")
        assert table.outer_size.height <= body.size.height < 12 + 3, (table.outer_size,
                                                                      body.size)
        assert table.max_scroll_y > 0


def _footer_keys(app) -> dict[str, str]:
    """The footer's keys shown whole on screen: action -> description."""
    width = app.size.width
    return {k.action: k.description for k in app.screen.query("FooterKey")
            if k.display and k.region.width and k.region.right <= width}


def _rows(table_id: str):
    return lambda screen: screen.query_one(table_id, DataTable).row_count > 0


LOADED = {"3": _rows("#runs"), "4": _rows("#ratings"), "1": _rows("#datasets"),
          "2": _rows("#models"), "l": lambda screen: screen.report is not None,
          "n": lambda screen: text_of(screen.query_one("#run-plan", Static)) != "Planning…"}
"""What each screen shows once loaded: the footer is read in that state (the Runs list's
Export and Refresh join the footer when it loads; read before, the test passed where the
footer went past column 80 after)."""


@pytest.mark.parametrize("keys", ["3", "4", "1", "2", "n", "l"],
                         ids=["runs", "leaderboard", "datasets", "models", "new_run", "live"])
async def test_the_narrow_footer_keeps_quit_and_keys(keys, hosts):
    app = RecordingApp(hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(keys)
        await wait_until(pilot, lambda: LOADED[keys](app.screen), 60, "the screen loaded")
        await settle(pilot)
        await screen_stable(pilot)
        shown = _footer_keys(app)
        assert "app.quit" in shown or "quit" in shown, shown
        assert "app.toggle_help" in shown or "toggle_help" in shown, shown


async def test_the_narrow_footer_keeps_quit_and_keys_on_the_inspector(hosts):
    app = RecordingApp(hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_screen(pilot, _inspector())
        await screen_stable(pilot)
        shown = _footer_keys(app)
        assert {"quit", "toggle_help"} <= {a.removeprefix("app.") for a in shown}, shown
        # whole keys left out, never one cut at the edge
        assert all(k.region.right <= app.size.width for k in app.screen.query("FooterKey")
                   if k.display and k.region.width), shown


async def test_the_narrow_footer_keeps_the_keys_on_compare(hosts):
    """Compare binds ? to the keys with the verdict explained beside them: the footer keeps
    it, and Quit, at 80x24."""
    app = RecordingApp(hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_screen(pilot, _compare())
        await screen_stable(pilot)
        shown = _footer_keys(app)
        assert {"quit", "explain"} <= {a.removeprefix("app.") for a in shown}, shown
        assert shown.get("explain") == "Keys, why", shown


async def test_the_surrogate_names_its_systems_by_what_differs():
    """The surrogate's table under the ratings: each row within 80 columns, the contestants
    apart by model and index, what they share said once after it."""
    from engine.arena.surrogate.forest import SurrogateReport, SurrogateRow
    from engine.stats import Estimate
    from mirage_tui.screens.leaderboard import surrogate_text

    names = contestants()
    rows = [SurrogateRow(n, True, 1000.0 - i, i + 1, 990.0 - i, i + 1)
            for i, n in enumerate(names)]
    report = SurrogateReport(rows, ["rouge_l"], {"rouge_l": 1.0}, Estimate(0.8, 0.4, 1.0, 4),
                             Estimate(0.5, -0.2, 0.9, 4), 12, 0, 200, 0, 200)
    lines = surrogate_text(report).plain.splitlines()
    table = lines[lines.index(next(x for x in lines if x.lstrip().startswith("pred"))) + 1:][
        :len(names)]
    assert all(len(line) <= 78 for line in table), table
    assert len({line.split()[2] + line.split()[3] + line.split()[4] for line in table}) == 12
    assert any(line.startswith(f"systems all on {HOST}") for line in lines), lines


async def test_the_compare_title_names_a_and_b_by_what_differs(hosts):
    app = RecordingApp(hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_screen(pilot, _compare())
        assert app.screen.sub_title == f"compare · {MODELS[0]} vs {MODELS[1]}"


async def test_the_heatmap_legend_names_its_systems_by_what_differs():
    """The legend under the heatmap cut each name at the edge, so the twelve read alike."""
    from mirage_tui.widgets.heatmap import heatmap_text

    names = contestants()
    grid = [[None if i == j else 0.5 for j in range(12)] for i in range(12)]
    lines = heatmap_text(names, grid, [[1] * 12] * 12, width=78).plain.splitlines()
    legend = [line for line in lines if line.strip().split(" ", 1)[0].isdigit()
              and "|" in line]
    assert len(legend) == 12 and len(set(legend)) == 12, legend
    assert all(len(line) <= 78 and ELLIPSIS not in line for line in legend), legend
    assert f"systems all on {HOST} · mirage@1 · retrieved@3 · minilm-l6-v2" in lines
