"""Reasoning models in the TUI, driven by Pilot: the Inspector folds a model's thinking under
its answer with its token count (``r`` unfolds it, untrusted text shown as text) and filters the
answers cut at the token limit or while thinking; Live run and the Runs summary count the cut
answers beside their other counts. The runs are real engine runs against the reasoning
stand-in of :mod:`testkit.reasoning_server` (an OpenAI-compatible server on loopback)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import DataTable, Select, Static

from engine.store import Store
from models.http.generator import HttpGenerator
from testkit.reasoning_server import DEMO_SQUAD, reasoning_server, squad_answers
from testkit.runs import SMOL, config, run
from testkit.store import copy_workspace, idle_machine_load
from testkit.tui import (RecordingApp, open_screen, settle, start_sampled_run, text_of,
                         wait_for_run, wait_until)

pytestmark = pytest.mark.asyncio

HOSTILE = " [b]bold?[/b] \x1b[31m"
"""Written after every answer (so into every reasoning): markup and a terminal escape."""


def _run(store: Store, url: str, name: str, models: list[str], max_tokens: int) -> None:
    run(store, config(generators=models, settings=["oracle"], sample=3, name=name,
                      max_tokens=max_tokens),
        {m: HttpGenerator(url, model=m, timeout=10) for m in models})


@pytest.fixture(scope="module")
def runs_template(tmp_path_factory) -> Path:
    """Run ``thought``: think-field answering in full (every answer with markup and an escape
    after it) and think-hidden (its thinking only counted); run ``cut``: think-inline and plain at 20 tokens (the thinking never closes).
    Made once a module, never written: each test takes a copy."""
    from engine.datasets.demo_pool import ensure_demo

    path = tmp_path_factory.mktemp("reasoning-runs") / "w.db"
    with pytest.MonkeyPatch.context() as monkeypatch:      # as built inside a test
        idle_machine_load(monkeypatch)
        store = Store(path)
        ensure_demo(store)
        answers = {q: a + HOSTILE for q, a in squad_answers(DEMO_SQUAD).items()}
        with reasoning_server(answers) as server:
            _run(store, server.url, "thought", ["think-field", "think-hidden"], 1000)
        with reasoning_server() as server:
            _run(store, server.url, "cut", ["think-inline", "plain"], 20)
        store.close()
    return path


@pytest.fixture
def runs(runs_template, tmp_path) -> Store:
    return Store(copy_workspace(runs_template, tmp_path / "w.db"))


def _panels(screen) -> str:
    return "\n".join(text_of(p) for p in screen.query(".setting-panel").results(Static))


async def test_inspector_folds_the_reasoning_under_the_answer(runs):
    from mirage_tui.screens.inspector import InspectorScreen

    app = RecordingApp(runs.path)
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, InspectorScreen("thought"))
        screen = app.screen
        assert not screen.query_one("#f-cut", Select).display   # nothing was cut
        await pilot.press("enter")
        await settle(pilot)
        folded = _panels(screen)
        tokens = re.search(r"▸ Reasoning · (\d+) tokens · r unfolds", folded)
        assert tokens and int(tokens.group(1)) > 100, folded
        assert "Okay, the user asks" not in folded
        answer = folded.split("Response\n", 1)[1].split("\n", 1)[0]
        assert answer.endswith("[b]bold?[/b] ␛[31m") or "[b]bold?[/b]" in answer, answer

        await pilot.press("r")
        await settle(pilot)
        unfolded = _panels(screen)
        assert f"▾ Reasoning · {tokens.group(1)} tokens · r folds" in unfolded
        reasoning = unfolded.split("r folds\n", 1)[1]
        assert reasoning.startswith("Okay, the user asks: ")
        assert "[b]bold?[/b]" in reasoning and "\x1b" not in unfolded   # text, not markup
        assert "stop" in unfolded and "cut" not in unfolded.split("Scores")[0].split(
            "r folds")[0]

        await pilot.press("r")
        await settle(pilot)
        assert _panels(screen) == folded

        await pilot.press("s")                  # think-hidden beside it: only a count came
        await settle(pilot)
        both = _panels(screen)
        assert re.search(r"Reasoning · \d+ tokens · not returned by the server", both), both
        assert not [m for m, sev in app.notes if sev == "error"]


async def test_inspector_filters_the_answers_cut_while_thinking(runs):
    from mirage_tui.screens.inspector import InspectorScreen

    app = RecordingApp(runs.path)
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, InspectorScreen("cut"))
        screen = app.screen
        table = screen.query_one("#insp-items", DataTable)
        assert table.row_count == 6
        picker = screen.query_one("#f-cut", Select)
        assert picker.display
        picker.value = "thinking"
        await settle(pilot)
        status = screen.query_one("#insp-status", Static)
        await wait_until(pilot, lambda: "3 items match" in text_of(status), 10, "the filter")
        assert "cut while thinking" in text_of(status)
        assert {k.value.split("\t")[0] for k in table.rows} == {"think-inline/mirage@1"}

        await pilot.press("enter")
        await settle(pilot)
        panel = _panels(screen)
        assert "Response\n(no answer: cut while thinking)\n" in panel
        assert "cut while thinking: no answer came before the token limit" in panel
        assert re.search(r"▸ Reasoning · 20 tokens · r unfolds", panel), panel

        await pilot.press("escape")
        picker.value = "limit"
        await settle(pilot)
        await wait_until(pilot, lambda: "cut at the token limit" in text_of(status), 10,
                         "the limit filter")
        assert "3 items match" in text_of(status)      # plain's one-word answers fit


async def test_live_and_the_runs_summary_count_the_cut_answers(runs):
    from mirage_tui.screens.live_run import LiveRunScreen

    app = RecordingApp(runs.path)
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, LiveRunScreen("cut"))
        screen = app.screen
        await wait_until(pilot, lambda: screen.report is not None, 30, "the live report")
        await settle(pilot)
        counts = text_of(screen.query_one("#live-counts", Static))
        assert counts.startswith("6/6 items · 0 errors")
        assert "3 cut at the token limit (3 while thinking)" in counts, counts

        await open_screen(pilot, LiveRunScreen("thought"))
        screen = app.screen
        await wait_until(pilot, lambda: screen.report is not None, 30, "the live report")
        await settle(pilot)
        assert "cut" not in text_of(screen.query_one("#live-counts", Static))

        await pilot.press("3")
        await settle(pilot)
        runs_table = app.screen.query_one("#runs", DataTable)
        runs_table.move_cursor(row=runs_table.get_row_index("cut"))
        await pilot.press("enter")
        pane = app.screen.query_one("#summary-pane")
        await wait_until(pilot, lambda: "6/6 items" in str(pane.query_one(Static).content),
                         30, "the summary")
        title = str(pane.query_one(Static).content).splitlines()[0]
        assert title.endswith("6/6 items · 3 cut at the token limit (3 while thinking)"), title


async def test_live_counts_the_cut_answers_of_the_run_it_follows(db_path):
    """A run started from New run (the stand-in's think-inline in place of the default model,
    64 tokens an answer): Live's progress line ends with its answers cut while thinking."""
    with reasoning_server() as server:
        model = HttpGenerator(server.url, model="think-inline", timeout=10)
        app = RecordingApp(db_path, generators={SMOL: model})
        async with app.run_test(size=(120, 35)) as pilot:
            await start_sampled_run(pilot, sample=2, items=6)
            await wait_for_run(pilot)
            summary = app.run_controller.summary
            assert (summary.status, summary.cut, summary.cut_while_thinking) == ("done", 6, 6)
            counts = app.screen.query_one("#live-counts", Static)
            await wait_until(pilot, lambda: "6 cut at the token limit (6 while thinking)"
                             in text_of(counts), 30, "the cut count")
            assert text_of(counts).startswith("6/6 items · ")
            assert not app.errors()
