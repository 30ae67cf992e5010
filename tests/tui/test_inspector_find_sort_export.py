"""The inspector's search box, column sorts, view export and full detail (issue 18 item 13),
driven by Pilot on the real inspection workspace (conftest.py: the demo pool and two runs made
by the run engine with scripted generators)."""

from __future__ import annotations

import json

import pytest
from textual.widgets import DataTable, Input, Select, Static

from engine.results.inspector import items_for
from engine.runs.lookup import load_run
from engine.store import Store
from testkit.scripted_runs import A, B, WRONG
from testkit.tui import RecordingApp, open_screen, palette, settle, text_of, wait_until

pytestmark = pytest.mark.asyncio


def _keys(table: DataTable) -> list[tuple]:
    return [tuple(k.value.split("\t")) for k in table.rows]


def _expected(path, **args) -> list[tuple]:
    store = Store(path)
    return [(r.system, r.setting, str(r.query_rowid))
            for r in items_for(store, load_run(store, "alpha"), limit=10**6, **args)]


async def _search(pilot, text: str) -> None:
    await pilot.press("slash")
    assert pilot.app.screen.focused.id == "f-search"
    await pilot.press(*text)
    await pilot.press("enter")
    await settle(pilot)


async def test_slash_searches_enter_applies_escape_clears(workspace):
    from mirage_tui.screens.inspector import InspectorScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, InspectorScreen("alpha"))
        screen = app.screen
        table = screen.query_one("#insp-items", DataTable)
        assert table.row_count == 36
        # typed keys go to the box (S, E, / are the screen's keys elsewhere): nothing applies
        # before Enter
        await pilot.press("slash", *"SURE", "slash")
        await settle(pilot)
        assert screen.query_one("#f-search", Input).value == "SURE/"
        assert table.row_count == 36
        await pilot.press("backspace", "enter")
        await settle(pilot)
        want = _expected(workspace["path"], search="SURE")
        assert 0 < len(want) < 36 and _keys(table) == want
        store = Store(workspace["path"])
        assert all(r.response == WRONG for r in items_for(store, load_run(store, "alpha"),
                                                           limit=100, search="sure"))
        status = text_of(screen.query_one("#insp-status", Static))
        assert f"{len(want)} items match" in status and "search “SURE”" in status
        assert screen.focused is table
        # combined with a filter
        screen.query_one("#f-system", Select).value = B
        await settle(pilot)
        assert _keys(table) == _expected(workspace["path"], search="SURE", system=B)
        # Escape in the box clears the search; the system filter stays
        await pilot.press("slash", "escape")
        await settle(pilot)
        assert screen.query_one("#f-search", Input).value == ""
        assert _keys(table) == _expected(workspace["path"], system=B)
        assert screen.focused is table
        # what users type is searched for as it is: no syntax error, no match
        for nasty in ['"', 'AND "x', "*", "NEAR(the"]:
            await _search(pilot, nasty)
            assert table.row_count == 0, nasty
            assert "0 items match" in text_of(screen.query_one("#insp-status", Static))
            await pilot.press("slash", "escape")
            await settle(pilot)
        # the palette lists the screen's commands
        await palette(pilot, "inspector: search")
        assert screen.focused.id == "f-search"
        assert not app.errors()


async def test_sorting_by_key_and_header_pages_in_order(workspace):
    from mirage_tui.screens.inspector import InspectorScreen, screen as module

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        module_page = module.PAGE_SIZE
        module.PAGE_SIZE = 7     # several keyset pages of the sorted list
        try:
            await open_screen(pilot, InspectorScreen("alpha"))
            screen = app.screen
            table = screen.query_one("#insp-items", DataTable)

            async def load_all():
                while not screen.exhausted:
                    await pilot.press("m")
                    await settle(pilot)

            await pilot.press("S")  # system -> setting
            await settle(pilot)
            await load_all()
            assert screen.sort == "setting"
            assert _keys(table) == _expected(workspace["path"], sort="setting")
            assert str(table.columns["setting"].label) == "setting ▲"
            assert "sorted by setting ▲" in text_of(screen.query_one("#insp-status", Static))
            await pilot.press("R")
            await settle(pilot)
            await load_all()
            assert _keys(table) == _expected(workspace["path"], sort="setting", descending=True)
            assert len(set(_keys(table))) == 36
            # a header click sorts by that column; the same header again reverses it
            for descending in (False, True):
                column = table.columns["response"]
                table.post_message(DataTable.HeaderSelected(table, column.key, 7, column.label))
                await settle(pilot)
                await load_all()
                assert (screen.sort, screen.descending) == ("response", descending)
                assert _keys(table) == _expected(workspace["path"], sort="response",
                                                 descending=descending)
            # with a filter and a search
            screen.query_one("#f-system", Select).value = A
            await settle(pilot)
            await _search(pilot, "answer")
            await load_all()
            assert _keys(table) == _expected(workspace["path"], sort="response",
                                             descending=True, system=A, search="answer")
        finally:
            module.PAGE_SIZE = module_page
        assert not app.errors()


async def test_export_writes_the_filtered_sorted_view(workspace, tmp_path):
    from mirage_tui.screens.inspector import InspectorScreen
    from mirage_tui.screens.inspector.export_view import ExportViewScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, InspectorScreen("alpha", system=B))
        screen = app.screen
        await _search(pilot, "answer is")
        await pilot.press("S", "S", "S", "S")  # system -> setting -> query -> lang -> EM
        await settle(pilot)
        assert screen.sort == "em"
        await pilot.press("E")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ExportViewScreen)
        assert "system" in dialog.view and "search “answer is”" in dialog.view \
            and "sorted by EM ▲" in dialog.view
        out = tmp_path / "out" / "view.jsonl"
        out.parent.mkdir()                  # an export never makes folders (issue 35)
        dialog.query_one("#export-path", Input).value = str(out)
        dialog.query_one("#export-format", Select).value = "jsonl"
        await pilot.pause()
        dialog.query_one("#export-path", Input).value = str(out)
        await pilot.press("enter")
        await settle(pilot)
        await wait_until(pilot, lambda: any("Wrote" in m for m, _ in app.notes), 30,
                         "the export's notice")
        header, *items = [json.loads(line) for line in out.read_text().splitlines()]
        want = _expected(workspace["path"], system=B, search="answer is", sort="em")
        assert [(r["system"], r["setting"], str(r["query_rowid"])) for r in items] == want
        assert header["rows"] == len(want) and header["view"]["sort"] == "em"
        note = next(m for m, _ in app.notes if "Wrote" in m)
        assert f"Wrote {len(want)} items of this view" in note and str(out) in note
        assert "search “answer is”" in note
        assert not app.errors()


async def test_the_detail_shows_long_texts_whole(workspace):
    from mirage_tui.screens.inspector import InspectorScreen

    store = Store(workspace["path"])
    rowid = workspace["queries"]["alpha"][0]
    run_id = store.query("SELECT id FROM runs WHERE name = 'alpha'")[0][0]
    key = store.query("SELECT generation_key FROM run_items WHERE run_id = ? AND system = ? "
                      "AND setting = 'oracle' AND query_rowid = ?", (run_id, A, rowid))[0][0]
    response = " ".join(f"word{i:03d}" for i in range(400)) + " THE-END-OF-IT"
    question = "Why " + " ".join(f"q{i:03d}" for i in range(120)) + " LAST-WORD?"
    with store.write() as db:
        db.conn.execute("UPDATE generations SET text = ? WHERE key = ?", (response, key))
        db.conn.execute("UPDATE queries SET text = ? WHERE id = ?", (question, rowid))
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(80, 24)) as pilot:
        await open_screen(pilot, InspectorScreen("alpha", system=A))
        screen = app.screen
        await _search(pilot, "THE-END-OF-IT")
        table = screen.query_one("#insp-items", DataTable)
        assert _keys(table) == [(A, "oracle", str(rowid))]
        await pilot.press("enter")
        await settle(pilot)
        # what the widgets draw, every line of them (not only what the screen scrolls to)
        drawn = {}
        for name, widget in (("question", screen.query_one("#d-query")),
                             ("oracle", list(screen.query(".setting-panel"))[1])):
            size = widget.size
            lines = widget.render_lines(widget.region.reset_offset)
            assert size.height >= 2
            inside = "".join(s.text.strip().strip("│") for s in lines)   # no border
            drawn[name] = "".join(inside.split())
        assert "".join(response.split()) in drawn["oracle"]
        assert "".join(question.split()) in drawn["question"]
        assert not app.errors()


async def test_an_export_says_what_the_run_is_now_not_when_the_inspector_opened(workspace,
                                                                                tmp_path):
    """The Inspector holds the run it looked up when it opened; a run that went on (here:
    stopped) meanwhile is exported with its status now, read again by its id."""
    from mirage_tui.screens.inspector import InspectorScreen
    from mirage_tui.screens.inspector.export_view import ExportViewScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, InspectorScreen("alpha"))
        opened = app.screen.query_one("ViewExport").run.info.status
        store = Store(workspace["path"])
        with store.write() as db:
            db.conn.execute("UPDATE runs SET status = 'cancelled' WHERE name = 'alpha'")
        store.close()
        await pilot.press("E")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ExportViewScreen)
        out = tmp_path / "view.jsonl"
        dialog.query_one("#export-format", Select).value = "jsonl"
        await pilot.pause()
        dialog.query_one("#export-path", Input).value = str(out)
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("Wrote" in m for m, _ in app.notes), 30,
                         "the export's notice")
        header = json.loads(out.read_text().splitlines()[0])
        assert opened == "done" and header["status"] == "cancelled", (opened, header)
        assert header["partial"].startswith("partial:"), header
        assert not app.errors()
