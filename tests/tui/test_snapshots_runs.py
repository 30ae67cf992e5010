"""Snapshot tests of the Models, New run and Live run screens at 100×30.

Deterministic by construction: a fixed catalog, default speeds (no file sizes, no stored
timings), a finished stored run made by a scripted generator and a scripted retriever (for the
live screen: stored counts only, no clocks), a fixed sub-title, no notifications, no cursor
blink. Update them with ``pytest tests/test_snapshots_runs.py --snapshot-update`` and look at
the SVGs under ``tests/__snapshots__/`` before committing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input
from textual.worker import WorkerCancelled, WorkerState

import engine.model_speeds
import engine.runs.estimates
import engine.runs.plan
import mirage_tui.screens.models as models_screen
import models.catalog
from engine.datasets.demo_pool import ensure_demo
from engine.runs import RunConfig, execute, plan_named
from engine.store import Store
from mirage_tui.app import MirageApp
from models.catalog import CatalogEntry
from testkit.runs import BackwardsRetriever
from testkit.scripted import ScriptedGenerator, context_start
from testkit.tui import screen_stable

SIZE = (100, 30)


class SnapshotApp(MirageApp):
    """The real app with what varies between machines and runs held still."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sub_title = "workspace.db"

    def notify(self, *args, **kwargs) -> None:
        pass   # toasts come and go with time


async def settle(pilot) -> None:
    for _ in range(40):
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:     # an exclusive worker replaced by a newer one: wait again
            continue
        await pilot.pause()
        if not [w for w in pilot.app.workers
                if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]:
            break
    for field in pilot.app.screen.query(Input):
        field.cursor_blink = False
    await pilot.pause()
    await screen_stable(pilot)


def keys(*pressed: str):
    async def run_before(pilot) -> None:
        await settle(pilot)
        for key in pressed:
            await pilot.press(key)
            await pilot.pause(0.4)     # New run plans a moment after a change
            await settle(pilot)

    return run_before


def entry(name, kind, quant, context, size, licence, chat=False, dim=None, installed=True,
          install=None, source="packaged") -> CatalogEntry:
    return CatalogEntry(name=name, kind=kind, path=None if not installed else f"/models/{name}",
                        installed=installed, install=install, size_bytes=size,
                        quantization=quant, context_length=context, license=licence, chat=chat,
                        source=source, dim=dim)


CATALOG = [
    entry("smollm2-135m-instruct", "generator", "Q4_1", 8192, 98_350_880, "Apache-2.0",
          chat=True),
    entry("gemma3-270m", "generator", "Q4_K_M", 32768, 253_097_984, "Gemma Terms of Use"),
    entry("my-llama-3b", "generator", "Q5_K_M", 131072, 2_320_000_000, "llama3.2",
          chat=True, source="local"),
    entry("qwen-missing", "generator", "Q8_0", None, None, "Apache-2.0", installed=False,
          install="pip install qwen-gguf"),
    entry("minilm-l6-v2", "embedder", "fp32", 256, 91_600_000, "Apache-2.0", dim=384),
    entry("e5-small-q4", "embedder", "q4_0", 512, 71_600_000, "MIT", dim=384),
]


@pytest.fixture
def fixed_catalog(monkeypatch):
    monkeypatch.setattr(models_screen, "list_models", lambda: list(CATALOG))
    monkeypatch.setattr(models.catalog, "list_models",
                        lambda folders=None, include_embedders=True: [
                            e for e in CATALOG if include_embedders or e.kind != "embedder"])
    monkeypatch.setattr(models.catalog, "embedder_entries",
                        lambda: [e for e in CATALOG if e.kind == "embedder"])
    monkeypatch.setattr(engine.runs.plan, "check_run_models", lambda config: None)
    monkeypatch.setattr(engine.model_speeds, "model_file_size", lambda name: None)
    monkeypatch.setattr(engine.runs.estimates, "model_file_size", lambda name: None)


def test_models_screen(snap_compare, tmp_path, fixed_catalog):
    app = SnapshotApp(tmp_path / "w.db")
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("2", "down"))


def test_new_run_screen(snap_compare, tmp_path, fixed_catalog):
    app = SnapshotApp(tmp_path / "w.db")
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("n"))


# --------------------------------------------------------------------------- a stored run

def snapshot_generator(name: str) -> ScriptedGenerator:
    """Answers with the start of its first context chunk (40 characters for ``…-b``, else 80),
    or "I don't know"."""
    cut = 40 if name.endswith("b") else 80
    return ScriptedGenerator(name, lambda text: context_start(text, cut), sha="b" * 64,
                             usage=lambda text: (len(text) // 4, 7, len(text) // 4, 0.01))


def stored_run(db: Path) -> None:
    store = Store(db)
    ensure_demo(store)
    config = RunConfig(dataset="demo", generators=["scripted-a", "scripted-b"],
                       settings=["base", "oracle", "mixed", "retrieved@1", "retrieved@3"],
                       retrievers=["pool"], sample=12, seed=0, name="snapshot-run")
    plan = plan_named(store, config, check_models=False)
    summary = execute(store, plan, generators={"scripted-a": snapshot_generator("scripted-a"),
                                               "scripted-b": snapshot_generator("scripted-b")},
                      retrievers={"pool": BackwardsRetriever(store, "pool-backwards#00000000",
                                                           stores=True)})
    assert summary.status == "done", summary.message
    store.close()


def test_live_run_screen_of_a_finished_run(snap_compare, tmp_path):
    db = tmp_path / "w.db"
    stored_run(db)
    app = SnapshotApp(db)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("l"))
