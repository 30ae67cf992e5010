"""Pilot tests of the Models screen: the catalog as a table, and a one-key check that loads the
packaged SmolLM2 for real and reports its speed. Also the shared ``models.check.check_model``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

import mirage_tui.screens.models as models_screen
from mirage_tui.screens.models import ModelsScreen, check_summary
from models.catalog import CatalogEntry, list_models
from models.check import check_model
from testkit.tui import RecordingApp, cells, text_of, wait_for_workers

SMOL = "smollm2-135m-instruct"
GEMMA = "gemma3-270m"


def broken_entry(path: Path) -> CatalogEntry:
    """A GGUF file on disk that llama.cpp cannot load (garbage bytes)."""
    path.write_bytes(b"GGUF" + b"\0" * 64)
    return CatalogEntry(name="broken-model", kind="generator", path=str(path), installed=True,
                        install=None, size_bytes=68, quantization=None, context_length=None,
                        license=None, chat=False)


@pytest.mark.asyncio
async def test_models_screen_lists_packaged_models_and_checks_smollm2(tmp_path, monkeypatch):
    broken = broken_entry(tmp_path / "broken-model.gguf")
    monkeypatch.setattr(models_screen, "list_models", lambda: list_models() + [broken])
    app = RecordingApp(tmp_path / "w.db", threads=1)
    async with app.run_test(size=(160, 30)) as pilot:         # every column shown
        await wait_for_workers(pilot)
        await pilot.press("2")
        await wait_for_workers(pilot)
        screen = app.screen
        assert isinstance(screen, ModelsScreen)
        table = screen.query_one("#models", DataTable)
        smol = dict(zip(table.columns, cells(table, SMOL)))
        assert smol["kind"] == "generator (chat)" and smol["installed"] == "yes"
        assert smol["quant"] == "Q4_1" and smol["license"] == "Apache-2.0"
        assert smol["check"] == "—" and smol["backend"].startswith("llama")
        assert cells(table, GEMMA)[1] == "generator"
        assert any(cells(table, key.value)[1] == "embedder" for key in table.rows)

        table.move_cursor(row=table.get_row_index(SMOL))
        await pilot.press("c")
        await wait_for_workers(pilot)
        check = cells(table, SMOL)[3]
        assert check.endswith("tok/s · cpu") and float(check.split()[0]) > 0
        detail = text_of(screen.query_one("#model-detail", Static))
        assert f"{SMOL}: works (generator, cpu); loaded in" in detail
        assert "tokens/s" in detail and "Said:" in detail
        assert not [m for m, sev in app.notes if sev == "error"]

        # a model that does not load: an error notification and a failed cell, no crash
        table.move_cursor(row=table.get_row_index("broken-model"))
        await pilot.press("c")
        await wait_for_workers(pilot)
        assert cells(table, "broken-model")[3] == "✗ failed"
        errors = [m for m, sev in app.notes if sev == "error"]
        assert errors and "broken-model" in errors[-1]
        assert app.is_running


def test_check_model_reports_speed_and_failures(tmp_path):
    result = check_model(SMOL, max_tokens=2, n_threads=1)
    assert result["ok"] and result["kind"] == "generator" and result["device"] == "cpu"
    assert result["tokens_per_s"] > 0 and result["load_seconds"] >= 0
    assert check_summary(result).endswith("tok/s · cpu")
    missing = check_model("no-such-model")
    assert not missing["ok"] and "no such model" in missing["error"]
    assert check_summary(missing) == "✗ failed"
    bad = check_model(SMOL, max_tokens=0)
    assert not bad["ok"] and "at least 1" in bad["error"]
