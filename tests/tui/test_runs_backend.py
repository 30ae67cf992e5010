"""The Runs screen names the backend a run's generator ran on, in the summary under the run's
line (issue 26 item 4), driven by Pilot on a workspace whose run the real engine made with a
scripted generator whose identity says ``llama-server``."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from engine.datasets.demo_pool import ensure_demo
from engine.store import Store
from testkit.runs import FakeGenerator, config, run
from testkit.tui import RecordingApp, open_screen, settle, text_of

pytestmark = pytest.mark.asyncio


async def test_runs_summary_names_the_backend(tmp_path):
    from mirage_tui.screens.runs import RunsScreen

    path = tmp_path / "w.db"
    store = Store(path)
    ensure_demo(store)
    run(store, config(name="served", sample=2),
        {"fake-gen": FakeGenerator(backend="llama-server")})
    store.close()
    app = RecordingApp(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, RunsScreen())
        table = app.screen.query_one("#runs", DataTable)
        table.move_cursor(row=table.get_row_index("served"))
        await pilot.press("enter")
        await settle(pilot)
        lines = text_of(app.screen.query_one("#run-summary", Static)).splitlines()
        created = next(i for i, line in enumerate(lines) if line.startswith("created "))
        assert lines[created + 2] == "backend llama-server", lines[:6]
        assert not app.errors()


@pytest.mark.parametrize("generators, served", [
    ({"fake-gen": ("llama-server", "llama-server")}, "llama-server"),
    ({"fake-a": ("llama.cpp", "cpu"), "fake-b": ("http", "http")},
     "fake-a llama.cpp on CPU, fake-b HTTP endpoint"),
])
async def test_live_title_names_the_backend(tmp_path, generators, served):
    path = tmp_path / "w.db"
    store = Store(path)
    ensure_demo(store)
    gens = {}
    for name, (backend, device) in generators.items():
        gens[name] = FakeGenerator(name, backend=backend)
        gens[name].device = device
    run(store, config(name="served", sample=2, generators=list(gens)), gens)
    store.close()
    app = RecordingApp(path)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        title = text_of(app.screen.query_one("#live-title", Static))
        assert title.startswith("served · demo@1 · sample of 2 of 60 queries (seed 0) · "
                                f"{served} · done"), title
        assert not app.errors()
