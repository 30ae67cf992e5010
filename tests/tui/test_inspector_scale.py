"""The inspector over a 20,000-item run: scrolling loads page after page, each costing SQLite no
more work deep in the run than at its start (keyset pages, counted in SQLite's virtual-machine
steps, which a loaded machine does not change), the screen answering keys while pages load; a
filter whose items all lie at the end of the run, then scrolling through its pages to the last.
How long a page takes is measured by ``benchmarks/bench_results_scale.py`` (``inspector_page``:
~10 ms on a quiet laptop at 60k items).

The run is written by direct SQL (6,667 queries × base, oracle, mixed; each item with a
generation and five scores), the way :mod:`testkit.toy_run` writes its toy run, so building
it takes a second, not a run engine's minutes.
"""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest
from textual.widgets import DataTable, Select, Static

from engine.store import Store
from testkit.tui import RecordingApp, open_screen, settle, text_of

pytestmark = pytest.mark.asyncio

QUERIES = 6667              # × 3 settings = 20,001 items
SCROLLED = 25               # pages scrolled from the start (each page costs the UI ~0.1 s)
LAST = 250                  # the last queries are in French: a filter deep in the run
SYSTEM = "gen-big/mirage@1"
STEP = 1000                 # SQLite's progress handler runs every STEP virtual-machine steps


class Steps:
    """SQLite's virtual-machine steps on every connection the store opens (in thousands): the
    work a query does, the same on a quiet or a loaded machine."""

    def __init__(self, monkeypatch):
        self.count, lock = 0, threading.Lock()
        connect = Store._connect

        def tick() -> int:
            with lock:
                self.count += 1
            return 0                            # go on

        def counted(store) -> sqlite3.Connection:
            conn = connect(store)
            conn.set_progress_handler(tick, STEP)
            return conn

        monkeypatch.setattr(Store, "_connect", counted)


def build_big_run(path) -> int:
    store = Store(path)
    with store.write() as db:
        c = db.conn
        c.execute("INSERT INTO datasets (id, name, version, kind, format, content_hash, "
                  "created_at) VALUES (1, 'big', 1, 'qa', 'mirage', 'hash-big', '2024-01-01')")
        c.executemany(
            "INSERT INTO queries (id, dataset_id, query_id, text, language, source, answers) "
            "VALUES (?, 1, ?, ?, ?, ?, ?)",
            [(i, f"q{i}", f"What is item {i}?", "fr" if i > QUERIES - LAST else "en" if i % 2 else "de", f"src{i % 40}",
              json.dumps([f"ans{i}"])) for i in range(1, QUERIES + 1)])
        c.execute("INSERT INTO runs (id, name, dataset_id, config, header, status, created_at, "
                  "updated_at) VALUES (1, 'big', 1, '{\"seed\": 0}', '{}', 'done', "
                  "'2024-01-02', '2024-01-02')")
        items, generations, scores = [], [], []
        for i in range(1, QUERIES + 1):
            for n, setting in enumerate(("base", "oracle", "mixed")):
                key = f"k{i}-{setting}"
                right = (i * 7 + n * 3) % 5 < 3
                generations.append((key, f"It is ans{i}." if right else "I do not know."))
                items.append((setting, i, key))
                for metric, value in (("em_loose", float(right)), ("em_strict", float(right)),
                                      ("f1_mirage", 0.5 * right), ("no_answer", 1.0 - right)):
                    scores.append((key, i, metric, value))
                scores.append((key, i, "_scorer", None))
        c.executemany("INSERT INTO generations (key, model_key, model_name, prompt, params, "
                      "text, created_at) VALUES (?, 'm', 'gen-big', 'p', '{}', ?, '2024-01-02')",
                      generations)
        c.executemany(f"INSERT INTO run_items (run_id, system, setting, query_rowid, "
                      f"generation_key) VALUES (1, '{SYSTEM}', ?, ?, ?)", items)
        c.executemany("INSERT INTO scores (generation_key, query_rowid, metric, value) "
                      "VALUES (?, ?, ?, ?)", scores)
    store.close()
    return len(items)


async def test_scrolling_and_filtering_a_20k_item_run_page_by_page(tmp_path, monkeypatch):
    from mirage_tui.screens.inspector import InspectorScreen
    from mirage_tui.screens.inspector.screen import PAGE_SIZE

    path = tmp_path / "big.db"
    total = build_big_run(path)
    steps = Steps(monkeypatch)
    app = RecordingApp(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, InspectorScreen("big"))
        await settle(pilot)
        screen = app.screen
        table = screen.query_one("#insp-items", DataTable)
        assert table.row_count == PAGE_SIZE
        assert f"{total} items match" in text_of(screen.query_one("#insp-status", Static))
        costs = await scroll(pilot, screen, table, steps, SCROLLED)
        assert len(screen.rows) == SCROLLED * PAGE_SIZE + PAGE_SIZE
        # keyset pages: the 25th page deep in the run costs what the first did (an OFFSET or
        # a read of the whole run would grow with the depth: ~25× here)
        print("SQLite steps (thousands) a page, scrolling:", costs)
        assert max(costs) <= 2 * min(costs) + 2, costs
        keys = [(r.system, r.query_rowid, r.setting) for r in screen.rows]
        order = {"base": 0, "oracle": 1, "mixed": 2}
        assert keys == sorted(keys, key=lambda k: (k[0], k[1], order[k[2]]))
        assert len(set(keys)) == len(keys)

        # a filter whose items are the run's last: its first page, then every page to the end
        before = steps.count
        screen.query_one("#f-language", Select).value = "fr"
        # the first page, then its count (once per filter, after the page is shown): the count
        # is the filter's, not a page's, so it is waited for before pages are counted
        while not screen.rows or screen.rows[0].language != "fr" or screen.total is None:
            await pilot.pause(0.005)
        print("SQLite steps (thousands), the filter's first page and count:",
              steps.count - before)
        deep = await scroll(pilot, screen, table, steps, 10)
        print("SQLite steps (thousands) a page, the filter's pages:", deep)
        assert max(deep) <= 2 * min(costs) + 2, (deep, costs)
        assert screen.exhausted and len(screen.rows) == 3 * LAST == screen.total
        assert {r.query_rowid for r in screen.rows} == set(range(QUERIES - LAST + 1,
                                                                  QUERIES + 1))
        assert app.errors() == []


async def scroll(pilot, screen, table, steps: Steps, pages: int) -> list[int]:
    """Scroll ``pages`` pages (or to the end): the cursor to the last loaded row loads the
    next page. Returns each page's SQLite steps (thousands), from the scroll to its rows in
    the table."""
    costs = []
    for _ in range(pages):
        if screen.exhausted:
            break
        loaded, before = len(screen.rows), steps.count
        table.move_cursor(row=loaded - 1)
        await pilot.press("down")               # the screen answers keys while it loads
        while len(screen.rows) == loaded and not screen.exhausted:
            await pilot.pause(0.005)
        costs.append(steps.count - before)
    return costs
