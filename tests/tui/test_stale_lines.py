"""A line goes the moment its cause changes (issue 36, "one truth"): the new-calibration
dialog's aspects once no labels are chosen (its "finding labels…" once none are found:
tests/tui/test_app_calibration.py); the judge dialog's description and default line once
another judge is chosen, and its estimate once the queries stop making sense; the Calibration
screen's pair once another calibration is shown."""

from __future__ import annotations

import json

import pytest
from textual.widgets import DataTable, Input, Select, Static

from engine.arena.trust.calibrate import calibrate_judge
from engine.datasets.importing import import_path
from engine.store import Store
from testkit.arena import ScriptedJudge, judge_catalog
from testkit.tui import RecordingApp, open_judge_dialog, open_screen, settle, text_of

pytestmark = pytest.mark.asyncio


def shown(select: Select) -> str:
    """What a Select shows in its one line: the chosen option, else its prompt."""
    return text_of(select.query_one("SelectCurrent #label", Static))


def first_wins(s):
    return "1"


async def test_calibrate_dialog_aspects_follow_the_labels_chosen(tmp_path, monkeypatch):
    from test_app_calibration import labelled_workspace, scripted_catalog

    from mirage_tui.dialogs.calibrate import CalibrateScreen

    scripted_catalog(monkeypatch, ScriptedJudge(first_wins), "fake-judge")
    app = RecordingApp(labelled_workspace(tmp_path))
    async with app.run_test(size=(110, 40)) as pilot:
        await open_screen(pilot, CalibrateScreen())
        modal = app.screen
        labels, aspect = (modal.query_one(f"#calib-{w}", Select) for w in ("labels", "aspect"))
        assert labels.value == "small@1" and aspect.value == "overall"
        labels.clear()                                # no labels chosen: no aspect to offer
        await settle(pilot)
        assert aspect.value == Select.NULL and shown(aspect) == "no labels"
        assert shown(labels) == "pick labels"
        assert not app.errors()


async def test_judge_dialog_describes_the_judge_chosen(workspace, monkeypatch):
    """Short gold answers: reference:answer-match is the default; choosing reference:f1 then
    MiniLM changes the judge's line, the default's line and the estimate at once."""
    judge_catalog(monkeypatch, ScriptedJudge(name="scripted-instruct"), "scripted-instruct")
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 34)) as pilot:
        modal = await open_judge_dialog(pilot, "beta")
        select = modal.query_one("#judge-model", Select)
        about, why, estimate = (modal.query_one(f"#judge-{w}", Static)
                                for w in ("about", "why", "estimate"))
        assert select.value == "reference:answer-match"
        assert text_of(about).startswith("reference:answer-match: the run's own scorer")
        assert text_of(why).startswith("Default: reference:answer-match in random order: ")

        select.value = "reference:f1"
        await settle(pilot)
        assert text_of(about) == "reference:f1: token F1 with the reference answer; no LLM."
        assert text_of(why) == "Not the default judge (reference:answer-match, random order)."
        lines = " ".join(text_of(w) for w in (about, why, estimate,
                                              modal.query_one("#judge-hint", Static)))
        assert "embedding" not in lines and "MiniLM" not in lines, lines
        assert text_of(estimate) == "18 battles on 6 queries, no LLM call: seconds"

        select.value = "reference:minilm-l6-v2"
        await settle(pilot)
        assert text_of(about) == ("reference:minilm-l6-v2: cosine of minilm-l6-v2 embeddings "
                                  "with the reference; each text embedded once; no LLM.")

        select.value = "scripted-instruct"
        await settle(pilot)
        assert text_of(about).startswith("scripted-instruct: an LLM reads the question")
        assert text_of(estimate).startswith("Estimate: about ")
        # the queries stop making sense: the estimate for the old number goes at once, before
        # any worker could answer
        queries = modal.query_one("#judge-queries", Input)
        queries.value = ""
        await pilot.pause()
        assert text_of(estimate) == "No estimate: queries must be a whole number, at least 1."

        select.value = "reference:answer-match"         # back to the default: its line again
        await settle(pilot)
        assert text_of(why).startswith("Default: reference:answer-match in random order: ")
        assert not app.errors()


async def test_calibration_pair_goes_with_its_calibration(tmp_path):
    from mirage_tui.screens.calibration import CalibrationScreen

    path = tmp_path / "w.db"
    store = Store(path)
    rows = [{"query": f"Question {i}?", "answer_a": f"first {i}", "answer_b": f"second {i}",
             "label": (-2, 2, 1, -1)[i], "annotator": who}
            for i in range(4) for who in ("ann", "bob")]
    (tmp_path / "mine.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    import_path(store, tmp_path / "mine.jsonl")
    for order in ("random", "both"):                  # two calibrations of one judge
        assert calibrate_judge(store, "mine", ScriptedJudge(first_wins, name="lazy-judge"),
                               order=order, n_boot=20).status == "done"
    store.close()
    app = RecordingApp(path)
    async with app.run_test(size=(110, 40)) as pilot:
        await open_screen(pilot, CalibrationScreen("lazy-judge"))
        screen = app.screen
        table = screen.query_one("#cal-disagreements", DataTable)
        assert table.row_count > 0
        table.focus()
        await pilot.press("enter")
        await settle(pilot)
        pair = screen.query_one("#cal-pair", Static)
        assert text_of(pair).startswith("Pair ")
        assert "2 of 2 stored" in text_of(screen.query_one("#cal-status", Static))
        await pilot.press("left_square_bracket")       # the older calibration
        await settle(pilot)
        assert "1 of 2 stored" in text_of(screen.query_one("#cal-status", Static))
        assert text_of(pair) == ""
        assert not app.errors()
