"""Functional tests of the TUI: Pilot drives the real app on a real temporary SQLite store.

After harlequin's functional tests: ``testkit.tui.wait_for_workers`` settles the thread workers
(and the messages they post, which may start the next worker) before each assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

import engine.datasets.demo_pool
from engine.datasets.catalog import get_dataset, get_query, list_queries
from engine.store import Store
from mirage_tui.dialogs.import_dataset import ImportDatasetScreen
from mirage_tui.screens.datasets import PAGE_SIZE, DatasetsScreen
from mirage_tui.screens.query import ORACLE_MARK, ChunkCard, QueryScreen
from testkit.paths import SHARED_DATA
from testkit.tui import RecordingApp, palette, text_of, wait_for_workers
from testkit.tui import cells as row_cells

DATA = SHARED_DATA
XQUAD_DE = DATA / "xquad" / "xquad.de.json"

pytestmark = pytest.mark.asyncio


# --------------------------------------------------------------------------- helpers


def _paragraphs(topic: str, lang: str) -> list[dict]:
    paragraphs = []
    for i in range(5):
        paragraphs.append({
            "context": f"{topic} paragraph {i}: the answer number {i} is word{i}{lang}.",
            "qas": [{"id": f"tiny-{lang}-{topic}-{i}",
                     "question": f"What is answer {i} about {topic}?",
                     "answers": [{"text": f"word{i}{lang}", "answer_start": 0}]}],
        })
    return paragraphs


@pytest.fixture(autouse=True)
def demo_files(tmp_path_factory, monkeypatch):
    """The shipped demo pool, or a tiny SQuAD-layout stand-in while it is not there yet."""
    if any(engine.datasets.demo_pool.DEMO_DIR.glob("*.json")):
        return
    folder = tmp_path_factory.mktemp("demo")
    for lang in ("en", "es", "de"):
        doc = {"version": "tiny", "data": [{"title": t, "paragraphs": _paragraphs(t, lang)}
                                           for t in ("alpha", "beta")]}
        (folder / f"demo.{lang}.json").write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setattr(engine.datasets.demo_pool, "DEMO_DIR", folder)


async def import_through_modal(pilot, path: Path) -> None:
    await pilot.press("i")
    await pilot.pause()
    assert isinstance(pilot.app.screen, ImportDatasetScreen)
    pilot.app.screen.query_one("#import-path", Input).value = str(path)
    await pilot.press("enter")
    await wait_for_workers(pilot)


# --------------------------------------------------------------------------- tests


async def test_first_launch_imports_demo_and_lists_it(db_path):
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_workers(pilot)
        demo = get_dataset(Store(db_path), "demo")
        table = app.screen.query_one("#datasets", DataTable)
        cells = row_cells(table, demo.label)
        assert cells[0] == "demo@1"
        assert cells[2] == str(demo.queries) and demo.queries > 0
        assert cells[3] == str(demo.chunks) and demo.chunks > 0
        for lang, count in demo.languages.items():
            assert f"{lang} {count}" in cells[4]
        # said on the screen, under the list, not in a toast over it (issue 18)
        welcome = text_of(app.screen.query_one("#datasets-welcome", Static))
        assert f"the demo pool is imported ({demo.queries} queries" in welcome
        # the demo is opened at once: its first page of queries is listed
        queries = app.screen.query_one("#queries", DataTable)
        assert queries.row_count == min(demo.queries, PAGE_SIZE)

    # a second launch finds the demo and imports nothing
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_workers(pilot)
        assert "demo pool is imported" not in text_of(
            app.screen.query_one("#datasets-welcome", Static))
        assert app.screen.query_one("#datasets", DataTable).row_count == 1


async def test_import_xquad_through_the_modal(db_path):
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_workers(pilot)
        await import_through_modal(pilot, XQUAD_DE)
        assert isinstance(app.screen, DatasetsScreen)
        table = app.screen.query_one("#datasets", DataTable)
        cells = row_cells(table, "xquad.de@1")
        assert cells[2] == "1190" and cells[3] == "240"
        assert "de 1190" in cells[4]
        assert any("Imported xquad.de@1" in msg and "1190 queries" in msg
                   for msg, _ in app.notes)
        assert table.row_count == 2  # the demo is still there
        # the new dataset is opened, one page at a time
        queries = app.screen.query_one("#queries", DataTable)
        assert queries.row_count == PAGE_SIZE
        assert "200 of 1190" in text_of(app.screen.query_one("#queries-status", Static))
        await pilot.press("m")
        await wait_for_workers(pilot)
        assert queries.row_count == 2 * PAGE_SIZE
        # search narrows the list through the engine
        search = app.screen.query_one("#query-search", Input)
        search.focus()
        search.value = "Panthers"
        await pilot.press("enter")
        await wait_for_workers(pilot)
        expected = list_queries(Store(db_path), "xquad.de@1", search="Panthers", limit=1000)
        assert 0 < queries.row_count == len(expected)


async def test_open_a_query_shows_its_pool_with_one_oracle(db_path):
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_workers(pilot)
        store = Store(db_path)
        first = list_queries(store, "demo@1", limit=1)[0]
        detail = get_query(store, "demo@1", first["query_id"])

        app.screen.query_one("#datasets", DataTable).focus()
        await pilot.press("enter")  # open the highlighted dataset
        await wait_for_workers(pilot)
        assert app.focused is app.screen.query_one("#queries", DataTable)
        await pilot.press("enter")  # open the first query
        await wait_for_workers(pilot)

        screen = app.screen
        assert isinstance(screen, QueryScreen)
        assert text_of(screen.query_one("#query-text", Static)) == detail.text
        assert detail.answers[0] in text_of(screen.query_one("#query-answers", Static))
        cards = list(screen.query(ChunkCard))
        assert len(cards) == 5
        badges = [text_of(card.query_one(".chunk-badge", Static)) for card in cards]
        assert sum(ORACLE_MARK in badge for badge in badges) == 1
        assert len(screen.query(".chunk.oracle")) == 1
        oracle = next(card for card in cards if card.has_class("oracle"))
        assert oracle.entry.is_oracle
        assert oracle.entry.chunk_id in str(oracle.border_subtitle)

        await pilot.press("o")
        assert app.focused is oracle
        await pilot.press("right_square_bracket")  # the next query of the list (n: New run)
        await wait_for_workers(pilot)
        second = list_queries(store, "demo@1", limit=2)[1]
        assert text_of(screen.query_one("#query-text", Static)) == second["text"]
        await pilot.press("escape")
        assert isinstance(app.screen, DatasetsScreen)


async def test_broken_file_is_an_error_notification_not_a_crash(db_path, tmp_path):
    broken = tmp_path / "broken.squad.json"
    text = XQUAD_DE.read_text(encoding="utf-8")
    broken.write_text(text[:5000], encoding="utf-8")  # truncated JSON
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_workers(pilot)
        await import_through_modal(pilot, broken)
        errors = [msg for msg, severity in app.notes if severity == "error"]
        assert errors and "broken.squad.json" in errors[-1]
        assert "JSON" in errors[-1]
        assert app.is_running
        # the dialog stays open with the reason, so the path can be fixed
        assert isinstance(app.screen, ImportDatasetScreen)
        assert "broken.squad.json" in text_of(app.screen.query_one("#import-status", Static))
        await pilot.press("escape")
        assert isinstance(app.screen, DatasetsScreen)
        table = app.screen.query_one("#datasets", DataTable)
        assert table.row_count == 1 and "demo@1" in table.rows
        await pilot.press("r")
        await wait_for_workers(pilot)
        assert table.row_count == 1


async def test_missing_path_and_unreadable_store_keep_the_app_up(db_path, tmp_path):
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_workers(pilot)
        await import_through_modal(pilot, tmp_path / "nope.json")
        assert any("nope.json" in msg for msg, sev in app.notes if sev == "error")
        assert app.is_running

    not_a_db = tmp_path / "garbage.db"
    not_a_db.write_bytes(b"this is not a sqlite file at all" * 100)
    app = RecordingApp(not_a_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_workers(pilot)
        assert any("garbage.db" in msg for msg, sev in app.notes if sev == "error")
        assert app.is_running
        assert "No workspace" in text_of(app.screen.query_one("#queries-status", Static))


async def test_small_terminal_80x24(db_path):
    app = RecordingApp(db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_workers(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        await pilot.press("question_mark")
        app.screen.query_one("#datasets", DataTable).focus()
        await pilot.press("enter")
        await wait_for_workers(pilot)
        await pilot.press("down", "down", "enter")
        await wait_for_workers(pilot)
        assert isinstance(app.screen, QueryScreen)
        assert len(app.screen.query(ChunkCard)) == 5
        await pilot.press("o", "tab", "pagedown", "left_square_bracket")
        await wait_for_workers(pilot)
        await pilot.press("escape")
        await pilot.press("slash")
        await pilot.press(*"the")
        await pilot.press("enter")
        await wait_for_workers(pilot)
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, ImportDatasetScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DatasetsScreen)
        assert not [msg for msg, sev in app.notes if sev == "error"]
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_language_filter_and_command_palette(db_path):
    app = RecordingApp(db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_workers(pilot)
        demo = get_dataset(Store(db_path), "demo")
        lang, count = next(iter(demo.languages.items()))
        app.screen.query_one("#query-language").value = lang
        await wait_for_workers(pilot)
        queries = app.screen.query_one("#queries", DataTable)
        assert queries.row_count == count
        assert all(row_cells(queries, key.value)[1] == lang for key in queries.rows)
        assert f"{count} of {count} queries in {lang}" in text_of(
            app.screen.query_one("#queries-status", Static))

        await palette(pilot, "datasets: import")
        assert isinstance(app.screen, ImportDatasetScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DatasetsScreen)
