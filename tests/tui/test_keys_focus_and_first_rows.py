"""Keys and focus a new user meets first: the Leaderboard starts with its ranking (at 120×35
at most 4 lines above the first row and all 12 systems of the host arena in sight, at 80×24
at least 8 rows), its other panes a documented key away (``t`` the judge's lines whole, ``m``
the heatmap, ``s`` the surrogate, ``a`` a list of arenas and runs that opens in sight); every
main screen opens with the focus on its main table; ``?`` typed into a text field stays text
and F1 shows the keys there (the footer offering F1 and ctrl+q, not ``?`` and ``q``); an
Inspector filter's menu opens framed where Tab reaches it (:mod:`testkit.host_systems`)."""

from __future__ import annotations

import pytest
from textual.containers import VerticalScroll
from textual.widgets import DataTable, HelpPanel, Input, Select, Static

from test_systems_apart import SIZES, host_template, hosts  # noqa: F401 - the fixtures
from testkit.host_systems import RUN, SYSTEMS, contestants
from testkit.tui import RecordingApp, open_screen, screen_stable, settle, text_of, wait_until

pytestmark = pytest.mark.asyncio


def screen_lines(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def _leaderboard():
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    return LeaderboardScreen(RUN)


async def _open_board(pilot):
    await open_screen(pilot, _leaderboard())
    screen = pilot.app.screen
    table = screen.query_one("#ratings", DataTable)
    await wait_until(pilot, lambda: table.row_count == 12, 60, "the 12 ratings")
    await screen_stable(pilot)
    return screen, table


def _rows_in_sight(screen, table) -> int:
    """Rating rows drawn whole on the screen: from the first row (under the table's top
    border and header) to the body's or the table's bottom, whichever is higher."""
    body = screen.query_one("#lb-body", VerticalScroll)
    first = table.region.y + 2
    last = min(body.region.bottom, table.region.bottom - 1)    # the bottom border
    return min(table.row_count, last - first)


@pytest.mark.parametrize("size", list(SIZES))
async def test_the_leaderboard_starts_with_its_ranking(size, hosts):
    app = RecordingApp(hosts)
    async with app.run_test(size=SIZES[size]) as pilot:
        screen, table = await _open_board(pilot)
        best = table.get_row_at(0)[1].plain
        lines = screen_lines(app)
        first = next(i for i, line in enumerate(lines) if f" {best} " in line)
        assert first == table.region.y + 2 <= 4, lines[:first + 1]    # at most 4 lines over it
        assert app.focused is table, app.focused
        if size == "120x35":
            assert _rows_in_sight(screen, table) == 12 and table.max_scroll_y == 0
        else:
            assert _rows_in_sight(screen, table) >= 8, (table.region, lines)
        # the arena named once on screen; its judge lines one row each, whole behind t
        assert sum(line.count("hosts-duel") for line in lines) == 1, lines
        judge = screen.query_one("#lb-judge", Static)
        full = text_of(judge).splitlines()
        assert len(full) == 3 and judge.region.height == 3
        assert full[0].startswith("judged by ") and full[2].startswith("cross-check ")
        assert all(len(line.rstrip()) <= app.size.width for line in lines)
        await pilot.press("t")
        await settle(pilot)
        body = text_of(app.screen.query_one("#choice-body", Static))
        assert all(line in body for line in full), body
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and not app.errors()


async def test_the_heatmap_and_the_surrogate_are_a_key_away(hosts):
    """At 120×35 ``m`` brings all twelve heatmap rows into view, each named by its system,
    ``s`` the surrogate's part; Escape gives the focus back to the table."""
    app = RecordingApp(hosts)
    async with app.run_test(size=(120, 35)) as pilot:
        screen, table = await _open_board(pilot)
        body = screen.query_one("#lb-body", VerticalScroll)
        await pilot.press("m")
        await screen_stable(pilot)
        assert app.focused is body
        heatmap = screen.query_one("#lb-heatmap")
        assert body.region.y <= heatmap.region.y and heatmap.region.y + 13 <= body.region.bottom
        lines = screen_lines(app)
        grid = lines[heatmap.region.y + 1:heatmap.region.y + 13]
        for i, line in enumerate(grid, start=1):
            label = line.strip().split("  ")[0]
            assert label.startswith(f"{i} ") and len(label) > 4, grid  # a number and a name
        shown = table.get_row_at(11)[1].plain
        assert shown.split(" | ")[0] in grid[11], (shown, grid[11])
        await pilot.press("s")
        await screen_stable(pilot)
        surrogate = screen.query_one("#lb-surrogate")
        assert body.region.y <= surrogate.region.y < body.region.bottom
        await pilot.press("escape")
        await settle(pilot)
        assert app.focused is table and app.screen is screen


async def test_a_opens_the_arenas_and_runs_in_sight_and_picks_one(hosts):
    from mirage_tui.dialogs.pick_system import PickSystemScreen
    from testkit.host_systems import SECOND

    app = RecordingApp(hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, table = await _open_board(pilot)
        await pilot.press("a")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, PickSystemScreen)
        options = dialog.query_one("#pick-systems")
        assert options.region.height >= 2 and options.highlighted == 0
        labels = [str(options.get_option_at_index(i).prompt)
                  for i in range(options.option_count)]
        assert labels[0].startswith("arena hosts-duel (") and f"run {SECOND}" in labels
        assert any("arena hosts-duel (" in line for line in screen_lines(app))
        await pilot.press("escape")                 # keeps the arena
        await settle(pilot)
        assert app.screen is screen and screen.arena == "hosts-duel"
        await pilot.press("a")
        await settle(pilot)
        await pilot.press("down", "enter")          # another run: its Leaderboard
        await settle(pilot)
        assert app.screen is screen and screen.run_name == SECOND
        assert not app.errors()


FOCUSED = {"datasets": ("1", "#datasets"), "runs": ("3", "#runs"),
           "leaderboard": ("4", "#ratings"), "live": ("l", "#live-adaptability")}


@pytest.mark.parametrize("mode", list(FOCUSED))
async def test_a_main_screen_opens_on_its_main_table(mode, hosts):
    key, main = FOCUSED[mode]
    app = RecordingApp(hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await settle(pilot)
        assert app.focused is app.screen.query_one(main), app.focused


@pytest.mark.parametrize("screen", ["inspector", "compare"])
async def test_a_pushed_screen_opens_on_its_main_table(screen, hosts):
    from mirage_tui.screens.compare import CompareScreen
    from mirage_tui.screens.inspector import InspectorScreen

    pushed, main = {"inspector": (lambda: InspectorScreen(RUN), "#insp-items"),
                    "compare": (lambda: CompareScreen(f"{RUN}:{SYSTEMS[0]}",
                                                      f"{RUN}:{SYSTEMS[1]}"), "#cmp-rows")}[screen]
    app = RecordingApp(hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_screen(pilot, pushed())
        assert app.focused is app.screen.query_one(main), app.focused


def _footer_shown(app) -> dict[str, str]:
    """key -> description of the footer keys drawn whole at the screen's width."""
    return {k.key: k.description for k in app.screen.query("FooterKey")
            if k.display and k.region.width and k.region.right <= app.size.width}


@pytest.mark.parametrize("field", ["#run-adaptive", "#run-name"])
async def test_question_mark_in_a_field_is_text_and_f1_shows_the_keys(field, hosts):
    app = RecordingApp(hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        box = app.screen.query_one(field, Input)
        box.focus()
        await screen_stable(pilot)
        shown = _footer_shown(app)
        assert shown.get("f1") == "Keys" and shown.get("ctrl+q") == "Quit", shown
        assert "question_mark" not in shown and "q" not in shown, shown
        await pilot.press("question_mark", "question_mark")
        await pilot.pause()
        assert box.value.endswith("??") and not app.screen.query(HelpPanel)
        await pilot.press("f1")
        await pilot.pause()
        assert app.screen.query(HelpPanel) and app.focused is box
        await pilot.press("f1")
        await pilot.pause()
        assert not app.screen.query(HelpPanel)
        app.screen.query_one("#run-generators").focus()      # out of the field: ? again
        await screen_stable(pilot)
        shown = _footer_shown(app)
        assert shown.get("question_mark") == "Keys" and shown.get("q") == "Quit", shown
        assert "f1" not in shown


async def test_f1_shows_the_keys_from_the_datasets_search_too(hosts):
    app = RecordingApp(hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        search = app.screen.query_one("#query-search", Input)
        search.focus()
        await pilot.press("question_mark")
        await pilot.pause()
        assert search.value == "?" and not app.screen.query(HelpPanel)
        await pilot.press("f1")
        await pilot.pause()
        assert app.screen.query(HelpPanel)


async def test_tab_reaches_an_inspector_filter_whose_menu_opens_in_sight(hosts):
    """After ``/`` and Enter, Tab wraps to the filters: Down opens the system filter's menu
    framed, as wide as its options, in sight over the list; Escape closes it unchanged."""
    from mirage_tui.screens.inspector import InspectorScreen

    app = RecordingApp(hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_screen(pilot, InspectorScreen(RUN))
        await pilot.press("slash", "enter", "tab")
        await settle(pilot)
        select = app.focused
        assert isinstance(select, Select), select
        before = select.value
        await pilot.press("down")
        await screen_stable(pilot)
        assert select.expanded
        overlay = select.query_one("SelectOverlay")
        widest = max(len(str(overlay.get_option_at_index(i).prompt))
                     for i in range(overlay.option_count))
        assert overlay.region.height >= 3 and overlay.region.width >= widest + 2
        assert overlay.styles.border.top[0] == "round"
        await pilot.press("escape")
        await settle(pilot)
        assert not select.expanded and select.value == before


async def test_every_contestant_is_named_on_the_heatmap_at_120():
    from mirage_tui.widgets.heatmap import heatmap_text

    names = contestants()
    grid = [[None if i == j else 0.5 for j in range(12)] for i in range(12)]
    lines = heatmap_text(names, grid, [[1] * 12] * 12, width=118).plain.splitlines()
    rows = lines[1:13]
    assert all(len(line) <= 118 for line in lines)
    assert len({row.strip().split("  ")[0] for row in rows}) == 12, rows
    assert all(row.split()[0] == str(i) for i, row in enumerate(rows, start=1))
    # every number whole: a cell reads 50.0, never 50. or 0.0 cut
    assert all(row.split()[-12:].count("50.0") == 11 for row in rows), rows
