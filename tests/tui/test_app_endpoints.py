"""Pilot tests of endpoints in the TUI: the Models screen lists configured and running
endpoints and checks one over HTTP; New run offers them as generators and runs one for real.
The server is the tiny OpenAI-compatible fake of :mod:`testkit.openai_server`, on loopback."""

from __future__ import annotations

import json

import pytest
from textual.widgets import DataTable, Input, SelectionList, Static

from engine.store import Store
from mirage_tui.screens.live_run import LiveRunScreen
from mirage_tui.screens.models import ModelsScreen
from testkit.openai_server import fake_openai_server
from testkit.tui import (RecordingApp, cells, text_of, wait_for_run, wait_for_workers,
                         wait_until)

pytestmark = pytest.mark.asyncio
SMOL = "smollm2-135m-instruct"


@pytest.fixture
def server(tmp_path, monkeypatch):
    with fake_openai_server(["fake-a"]) as state:
        folder = tmp_path / "config"
        folder.mkdir()
        (folder / "endpoints.toml").write_text(
            f'[endpoints.mybox]\nurl = "{state.url}"\nmodel = "fake-a"\n'
            'api_key_env = "MYBOX_KEY"\n', encoding="utf-8")
        monkeypatch.setenv("MIRAGE_CONFIG_DIR", str(folder))
        monkeypatch.setenv("MIRAGE_ENDPOINT_PORTS", state.url.split(":")[2].split("/")[0])
        monkeypatch.setenv("MYBOX_KEY", "sk-tui-secret")
        yield state


async def test_models_screen_lists_and_checks_endpoints(tmp_path, server):
    app = RecordingApp(tmp_path / "w.db", threads=1)
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_for_workers(pilot)
        await pilot.press("2")
        await wait_for_workers(pilot)
        screen = app.screen
        assert isinstance(screen, ModelsScreen)
        table = screen.query_one("#models", DataTable)
        discovered = f"{server.url}#fake-a"
        assert cells(table, "mybox")[1:3] == ["endpoint (chat)", "configured"]
        assert cells(table, discovered)[1:3] == ["endpoint (chat)", "running"]
        assert "2 endpoints" in str(table.border_subtitle)

        table.move_cursor(row=table.get_row_index("mybox"))
        await pilot.pause()
        detail = text_of(screen.query_one("#model-detail", Static))
        assert f"url: {server.url} · model: fake-a · key from $MYBOX_KEY" in detail
        assert "sk-tui-secret" not in detail
        await pilot.press("c")
        await wait_for_workers(pilot)
        assert cells(table, "mybox")[3].endswith("tok/s · http")
        assert "fake-a: works (generator, http)" in text_of(
            screen.query_one("#model-detail", Static))
        assert ("/v1/chat/completions", "Bearer sk-tui-secret") in server.seen
        assert not [m for m, sev in app.notes if sev == "error"]


async def test_new_run_picks_an_endpoint_and_runs_it(tmp_path, server):
    db = tmp_path / "w.db"
    app = RecordingApp(db)
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_for_workers(pilot)
        await pilot.press("n")
        await wait_for_workers(pilot)
        screen = app.screen
        generators = screen.query_one("#run-generators", SelectionList)
        values = [generators.get_option_at_index(i).value
                  for i in range(generators.option_count)]
        assert "mybox" in values and f"{server.url}#fake-a" in values
        generators.deselect_all()
        generators.select("mybox")
        screen.query_one("#run-sample", Input).value = "2"
        screen.query_one("#run-name", Input).value = "ui-endpoint"
        await wait_until(pilot, lambda: "Plan: 6 items" in text_of(
            screen.query_one("#run-plan", Static)), 30, "the plan of 2 queries")
        await wait_for_workers(pilot)
        assert "Plan: 6 items = 2 queries × 1 system × 3 settings" in text_of(
            screen.query_one("#run-plan", Static))
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, LiveRunScreen)
        await wait_for_run(pilot, timeout=60)
        assert app.run_controller.summary.status == "done", app.notes
    store = Store(db)
    header = json.loads(store.query("SELECT header FROM runs WHERE name = 'ui-endpoint'")[0][0])
    assert header["models"]["mybox"]["endpoint"]["url"] == server.url
    store.close()
    assert b"sk-tui-secret" not in db.read_bytes()


@pytest.mark.asyncio
async def test_the_inspector_shows_the_servers_message(demo):
    from mirage_tui.screens.inspector import InspectorScreen
    from testkit.fault_server import FaultServer
    from testkit.runs import config, run
    from testkit.tui import open_screen, settle

    from models.http.generator import HttpGenerator

    with FaultServer(refuse=0, error=0, stall=0) as server:
        server.refusal = ("text/plain", b"logit_bias is not supported by this server\n")
        run(demo, config(generators=["endpoint"], sample=1, settings=["base"], name="refused"),
            {"endpoint": HttpGenerator(server.url, timeout=10)})
    app = RecordingApp(demo.path)
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, InspectorScreen("refused"))
        await pilot.press("enter")
        await settle(pilot)
        panels = " ".join(text_of(p) for p in app.screen.query(".setting-panel").results(Static))
        assert "HTTP 400 Bad Request: logit_bias is not supported by this server" in panels, \
            panels
