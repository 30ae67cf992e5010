"""No silent overwrite: every export of the TUI (Runs ``e``, the Inspector's ``E``, the
Leaderboard's ``e``, Compare ``x``) asks before it replaces a file that is there (replace,
another name, cancel), as the command line refuses without ``--force``; and the toast that
names a written file shows its name whole, the folder elided instead, at 80×24."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, Select, Static
from textual.widgets._toast import Toast

from engine.output_files import existing_outputs, free_path
from engine.results.export import export_files, header_path
from engine.text_fit import ELLIPSIS, break_path, fit_long_words
from mirage_tui.dialogs.export_run import ExportRunScreen
from testkit.scripted_runs import A, B
from testkit.tui import RecordingApp, open_screen, settle, text_of, wait_until

MARK = "written before: must survive unless replaced\n"


# --------------------------------------------------------------------------- the pieces


def test_free_path_skips_every_taken_name_and_companion(tmp_path):
    (tmp_path / "r.csv").write_text("x")
    (tmp_path / "r-2.header.json").write_text("x")      # r-2.csv's header is taken
    assert free_path(tmp_path / "r.csv", lambda p: [header_path(p)]) == tmp_path / "r-3.csv"
    assert free_path(tmp_path / "q.csv") == tmp_path / "q.csv"
    assert existing_outputs(export_files(tmp_path / "r.csv", "csv")) == [tmp_path / "r.csv"]
    assert existing_outputs(export_files(tmp_path / "r-2.csv", "csv")) == \
        [tmp_path / "r-2.header.json"]
    assert existing_outputs([None, "-", tmp_path / "new.html"]) == []


def test_a_long_file_name_is_kept_whole_and_its_folder_elided():
    name = "compare-quick-comparison_smollm2-135m-instruct_mirage_1-vs-gemma3_mirage_1.json"
    path = "/home/someone/work/a-folder-of-exports/" + name
    lines = break_path(path, 36).split("\n")
    assert all(len(line) <= 36 for line in lines)
    assert lines[0].endswith("a-folder-of-exports/") and ELLIPSIS in lines[0]
    assert "".join(lines[1:]) == name                    # whole, broken after '-' or '_'
    assert all(line[-1] in "-_" for line in lines[1:-1])
    fitted = fit_long_words(f"Wrote {path} and its .csv", 36)
    assert name in fitted.replace("\n", "") and ELLIPSIS not in fitted.split("\n", 1)[1]


# --------------------------------------------------------------------------- the dialogs


def _wrote(app) -> int:
    return sum(1 for m, _ in app.notes if m.startswith("Wrote"))


async def _open_runs(pilot) -> None:
    from mirage_tui.screens.runs import RunsScreen

    if not isinstance(pilot.app.screen, RunsScreen):
        await open_screen(pilot, RunsScreen())
    table = pilot.app.screen.query_one("#runs", DataTable)
    table.move_cursor(row=table.get_row_index("alpha"))
    await pilot.press("e")


async def _open_inspector(pilot) -> None:
    from mirage_tui.screens.inspector import InspectorScreen

    if not isinstance(pilot.app.screen, InspectorScreen):
        await open_screen(pilot, InspectorScreen("alpha", system=B))
    await pilot.press("E")


async def _open_leaderboard(pilot) -> None:
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    if not isinstance(pilot.app.screen, LeaderboardScreen):
        await open_screen(pilot, LeaderboardScreen("alpha"))
        await settle(pilot)
    await pilot.press("e")


async def _export(pilot, open_dialog, out, fmt: str) -> ExportRunScreen:
    """Open the export dialog, set ``out`` and ``fmt``, press Enter; returns the dialog."""
    app = pilot.app
    await open_dialog(pilot)
    await wait_until(pilot, lambda: isinstance(app.screen, ExportRunScreen), 30, "the dialog")
    dialog = app.screen
    dialog.query_one("#export-format", Select).value = fmt
    await pilot.pause()
    field = dialog.query_one("#export-path", Input)
    field.value = str(out)
    field.focus()
    await pilot.press("enter")
    return dialog


async def _asked(pilot) -> str:
    await wait_until(pilot, lambda: pilot.app.screen.id == "overwrite-modal", 10,
                     "the overwrite question")
    return text_of(pilot.app.screen.query_one("#choice-body", Static))


@pytest.mark.asyncio
@pytest.mark.parametrize("where,fmt", [("runs", "csv"), ("inspector", "jsonl"),
                                       ("leaderboard", "html")])
async def test_exporting_twice_asks_and_replaces_only_when_told(workspace, tmp_path, where, fmt):
    open_dialog = {"runs": _open_runs, "inspector": _open_inspector,
                   "leaderboard": _open_leaderboard}[where]
    out = tmp_path / f"export.{fmt}"
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await _export(pilot, open_dialog, out, fmt)       # the first time: written, unasked
        await wait_until(pilot, lambda: _wrote(app) == 1, 30, "the first export")
        assert app.screen.id != "overwrite-modal"
        written = export_files(out, fmt)
        assert all(p.exists() for p in written)
        out.write_text(MARK)

        # again: asked; Escape goes back to the dialog as it was, Cancel writes nothing
        dialog = await _export(pilot, open_dialog, out, fmt)
        body = await _asked(pilot)
        assert out.name in body and str(tmp_path) in body
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is dialog, 10, "the dialog again")
        assert dialog.query_one("#export-path", Input).value == str(out)
        await pilot.press("enter")
        await _asked(pilot)
        await pilot.press("c")
        await wait_until(pilot, lambda: not isinstance(app.screen, ExportRunScreen), 10,
                         "the dialog to close")
        await settle(pilot)
        assert _wrote(app) == 1 and out.read_text() == MARK

        # again: another name, the first free one offered, written there
        dialog = await _export(pilot, open_dialog, out, fmt)
        await _asked(pilot)
        await pilot.press("n")
        other = tmp_path / f"export-2.{fmt}"
        await wait_until(pilot, lambda: app.screen is dialog, 10, "the dialog again")
        assert dialog.query_one("#export-path", Input).value == str(other)
        await pilot.press("enter")
        await wait_until(pilot, lambda: _wrote(app) == 2, 30, "the export under another name")
        assert all(p.exists() for p in export_files(other, fmt))
        assert out.read_text() == MARK

        # again: replaced, as told
        await _export(pilot, open_dialog, out, fmt)
        await _asked(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: _wrote(app) == 3, 30, "the replacing export")
        assert out.read_text() != MARK
        assert not app.errors()


@pytest.mark.asyncio
async def test_compare_export_twice_asks_and_replaces_only_when_told(workspace, tmp_path,
                                                                    monkeypatch):
    from mirage_tui.dialogs.text_prompt import TextPromptScreen
    from mirage_tui.screens.compare import CompareScreen

    monkeypatch.chdir(tmp_path)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 40)) as pilot:
        await open_screen(pilot, CompareScreen(f"alpha:{A}", f"alpha:{B}"))
        screen = app.screen
        await _export_where(pilot)
        await settle(pilot)
        (js,) = tmp_path.glob("compare-*.json")
        files = [js, js.with_suffix(".csv"), js.with_suffix(".html")]
        assert all(p.exists() for p in files) and _wrote(app) == 1
        for p in files:
            p.write_text(MARK)

        await _export_where(pilot)
        body = await _asked(pilot)
        assert all(p.name in body for p in files)
        await pilot.press("c")
        await settle(pilot)
        assert app.screen is screen and _wrote(app) == 1
        assert all(p.read_text() == MARK for p in files)
        assert any(m == "Nothing written." for m, _ in app.notes)

        await _export_where(pilot)
        await _asked(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPromptScreen), 10, "a name")
        other = js.with_name(js.stem + "-2.json")
        assert app.screen.query_one("#prompt-input", Input).value == str(other)
        await pilot.press("enter")
        await settle(pilot)
        assert _wrote(app) == 2 and app.screen is screen
        assert all(other.with_suffix(s).exists() for s in (".json", ".csv", ".html"))
        assert all(p.read_text() == MARK for p in files)

        await _export_where(pilot)
        await _asked(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert _wrote(app) == 3
        assert all(p.read_text() != MARK for p in files)
        assert not app.errors()


@pytest.mark.asyncio
async def test_an_export_over_a_symlink_replaces_the_link_never_its_target(workspace, tmp_path):
    """A link at the export path (planted in a shared folder, pointing at another file): the
    question names it and what it points to; Replace replaces the link, the file it pointed to
    keeps its bytes."""
    victim = tmp_path / "elsewhere.txt"
    victim.write_text(MARK)
    out = tmp_path / "export.jsonl"
    out.symlink_to(victim)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await _export(pilot, _open_runs, out, "jsonl")
        body = await _asked(pilot)
        assert f"(a link to {victim}: the link is replaced" in body.replace("\n", " "), body
        await pilot.press("r")
        await wait_until(pilot, lambda: _wrote(app) == 1, 30, "the export over the link")
        assert not out.is_symlink() and out.read_text() != MARK
        assert victim.read_text() == MARK
        assert not app.errors()


async def _export_where(pilot, path=None) -> str:
    """Compare's ``x``: the question where to write (its offered path returned); ``path``
    typed instead when given; Enter."""
    from mirage_tui.dialogs.text_prompt import TextPromptScreen

    await pilot.press("x")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, TextPromptScreen), 10,
                     "where to export")
    field = pilot.app.screen.query_one("#prompt-input", Input)
    offered = field.value
    if path is not None:
        field.value = str(path)
    await pilot.press("enter")
    return offered


@pytest.mark.asyncio
async def test_compare_export_asks_where_and_writes_nothing_until_told(workspace, tmp_path,
                                                                       monkeypatch):
    """``x`` writes nothing into the current folder unasked: it asks where (the current
    folder's ``compare-A-vs-B.json`` offered); Escape writes nothing; a folder typed gets the
    offered name inside it; a name typed without a suffix gets ``.json``."""
    from mirage_tui.dialogs.text_prompt import TextPromptScreen
    from mirage_tui.screens.compare import CompareScreen

    here = tmp_path / "here"                # the workspace is in tmp_path
    here.mkdir()
    monkeypatch.chdir(here)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 40)) as pilot:
        await open_screen(pilot, CompareScreen(f"alpha:{A}", f"alpha:{B}"))
        screen = app.screen
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPromptScreen), 10, "where")
        offered = app.screen.query_one("#prompt-input", Input).value
        assert offered.startswith(str(here / "compare-")) and offered.endswith(".json")
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and list(here.iterdir()) == []
        assert _wrote(app) == 0 and any(m == "Nothing written." for m, _ in app.notes)

        folder = here / "exports"
        folder.mkdir()
        await _export_where(pilot, folder)
        await wait_until(pilot, lambda: _wrote(app) == 1, 30, "the export into a folder")
        name = offered.rsplit("/", 1)[1]
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            name[:-len(".json")] + s for s in (".csv", ".html", ".json"))

        await _export_where(pilot, here / "mine")
        await wait_until(pilot, lambda: _wrote(app) == 2, 30, "the export under a name")
        assert all((here / f"mine{s}").is_file() for s in (".json", ".csv", ".html"))
        assert not app.errors()


# --------------------------------------------------------------------------- the toast


def _toast_lines(app) -> list[str]:
    toast = app.screen.query(Toast).last()
    return [
        "".join(seg.text for seg in strip).strip(" ▌")
        for strip in toast.render_lines(toast.region.reset_offset)]


@pytest.mark.asyncio
async def test_the_export_toast_shows_the_whole_file_name_at_80x24(workspace, tmp_path,
                                                                   monkeypatch):
    from mirage_tui.screens.compare import CompareScreen

    folder = tmp_path / "a-rather-long-folder-for-exports" / "of-this-week"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await open_screen(pilot, CompareScreen(f"alpha:{A}", f"alpha:{B}"))
        await _export_where(pilot)
        await settle(pilot)
        (js,) = folder.glob("compare-*.json")
        assert len(js.name) > 36                       # wider than the toast's text at 80
        await wait_until(pilot, lambda: app.screen.query(Toast), 10, "the toast")
        lines = _toast_lines(app)
        assert js.name in "".join(lines), lines        # whole, on lines of its own
        assert not any(ELLIPSIS in line and "compare-" in line for line in lines), lines
        assert any(line.endswith("of-this-week/") for line in lines), lines
        assert str(folder) not in "".join(lines)       # the folder elided instead
