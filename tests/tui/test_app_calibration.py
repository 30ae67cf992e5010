"""The Calibration screen on a real calibration (a scripted judge on hand-made labels): the
figures beside the anchors, the confusion matrix, the disagreements list opening a pair; its
snapshot; the Leaderboard's ``h`` opens it."""

from __future__ import annotations

import json

import pytest
from textual.binding import Binding
from textual.widgets import DataTable, Static

from engine.arena.trust.calibrate import calibrate_judge
from engine.datasets.importing import import_path
from engine.store import Store
from mirage_tui.app import MirageApp
from testkit.arena import ScriptedJudge
from testkit.tui import RecordingApp, open_screen, settle, text_of


def first_wins(s):
    return "1"      # always the answer shown first: a pure position bias


@pytest.fixture
def calibrated(tmp_path, monkeypatch):
    # a fixed date: the screen's header shows it (and the snapshot with it)
    monkeypatch.setattr("engine.arena.trust.calibrate.now", lambda: "2026-01-02 03:04:05")
    path = tmp_path / "w.db"
    store = Store(path)
    rows = [{"query": f"Question {i}?", "answer_a": f"first answer {i}",
             "answer_b": f"second answer {i}", "label": (-1, 1, 2, 0, -2, 1)[i],
             "annotator": who, "domain": "even" if i % 2 == 0 else "odd"}
            for i in range(6) for who in ("ann", "bob")]
    labels = tmp_path / "mine.jsonl"
    labels.write_text("\n".join(json.dumps(r) for r in rows))
    import_path(store, labels)
    result = calibrate_judge(store, "mine", ScriptedJudge(first_wins, name="lazy-judge"),
                             both_orders=True, n_boot=50)
    assert result.status == "done"
    store.close()
    return path


@pytest.mark.asyncio
async def test_calibration_screen_shows_figures_matrix_and_disagreements(calibrated):
    from mirage_tui.screens.calibration import CalibrationScreen

    app = RecordingApp(calibrated)
    async with app.run_test(size=(110, 40)) as pilot:
        await open_screen(pilot, CalibrationScreen("lazy-judge"))
        screen = app.screen
        assert "judge lazy-judge" in text_of(screen.query_one("#cal-status", Static))
        figures = text_of(screen.query_one("#cal-figures", Static))
        # a judge that always picks the first-shown answer: every pair flips, all ties
        assert "position flip rate (both orders)  100.0%" in figures
        assert "(published 88.6%)" in figures and "by domain" in figures
        matrix = screen.query_one("#cal-confusion", DataTable)
        assert matrix.row_count == 4
        tie_row = [str(c) for c in matrix.get_row_at(1)]
        assert tie_row == ["tie", "2", "1", "3"]    # people: A 2, tie 1, B 3
        table = screen.query_one("#cal-disagreements", DataTable)
        assert table.row_count == 5                  # every pair but the human tie
        table.focus()
        await pilot.press("enter")
        await settle(pilot)
        pair = text_of(screen.query_one("#cal-pair", Static))
        assert "Question 0?" in pair and "first answer 0" in pair
        assert "ann -1, bob -1" in pair                 # the orders in words (issue 27)
        assert "Judge, A shown first, B second: A better" in pair
        assert "Judge, B shown first, A second: B better" in pair
        assert "shown ab" not in pair and "shown ba" not in pair
        await pilot.press("escape")
        assert app.screen is not screen
        assert not app.errors()


@pytest.mark.asyncio
async def test_no_calibration_says_how_to_get_one(tmp_path):
    from mirage_tui.screens.calibration import CalibrationScreen

    app = RecordingApp(tmp_path / "w.db")
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, CalibrationScreen("nobody"))
        status = text_of(app.screen.query_one("#cal-status", Static))
        assert "No calibration of judge 'nobody' yet" in status
        assert "mirage-tui judge calibrate" in status


class ScreensApp(MirageApp, inherit_bindings=False):
    BINDINGS = [Binding("question_mark", "toggle_help", "Keys", key_display="?")]


def test_snapshot_calibration(calibrated, snap_compare):
    from mirage_tui.screens.calibration import CalibrationScreen

    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.app.push_screen(CalibrationScreen("lazy-judge"))
        await settle(pilot)
        pilot.app.clear_notifications()     # the first-start welcome toasts
        await pilot.pause()

    assert snap_compare(ScreensApp(calibrated), terminal_size=(110, 40), run_before=run_before)


def scripted_catalog(monkeypatch, judge, name):
    """The catalog lists one installed generator ``name`` that loads as ``judge``."""
    import models.catalog
    from models.catalog import CatalogEntry

    entry = CatalogEntry(name=name, kind="generator", path="/nowhere.gguf", installed=True,
                         install=None, size_bytes=None, quantization=None, context_length=8192,
                         license=None, chat=True, source="packaged")
    monkeypatch.setattr(models.catalog, "list_models", lambda *a, **k: [entry])
    monkeypatch.setattr(models.catalog, "endpoint_entries", lambda *a, **k: [])
    monkeypatch.setattr(models.catalog, "load_generator", lambda *a, **k: judge)


async def calibrate_with_defaults(pilot) -> None:
    """Open the Calibration screen, press j, accept the dialog's choices, wait for the job."""
    from mirage_tui.screens.calibration import CalibrationScreen

    await open_screen(pilot, CalibrationScreen())
    await pilot.press("j")
    await settle(pilot)
    await pilot.click("#calib-go")
    await settle(pilot)


def labelled_workspace(tmp_path, n=4):
    """A workspace holding one small labels dataset, ``small`` (n pairs, two annotators)."""
    rows = [{"query": f"Q{i}?", "answer_a": f"a{i}", "answer_b": f"b{i}",
             "label": (2, -1, 1, 0)[i % 4], "annotator": who}
            for i in range(n) for who in ("ann", "bob")]
    labels = tmp_path / "small.jsonl"
    labels.write_text("\n".join(json.dumps(r) for r in rows))
    path = tmp_path / "w.db"
    store = Store(path)
    import_path(store, labels)
    store.close()
    return path


@pytest.mark.asyncio
async def test_new_calibration_from_the_screen(tmp_path, monkeypatch):
    from engine.arena.trust.calibrate import list_calibrations
    from mirage_tui.dialogs.calibrate import CalibrateScreen
    from mirage_tui.screens.calibration import CalibrationScreen
    from textual.widgets import Input, Select

    path = labelled_workspace(tmp_path)
    judge = ScriptedJudge(first_wins, name="lazy-judge")
    scripted_catalog(monkeypatch, judge, "lazy-judge")

    app = RecordingApp(path)
    async with app.run_test(size=(110, 40)) as pilot:
        await open_screen(pilot, CalibrationScreen())
        screen = app.screen
        assert "press j" in text_of(screen.query_one("#cal-status", Static))
        await pilot.press("j")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, CalibrateScreen)
        assert modal.query_one("#calib-judge", Select).value == "lazy-judge"
        assert modal.query_one("#calib-labels", Select).value == "small@1"
        assert modal.query_one("#calib-aspect", Select).value == "overall"
        judges = [str(v) for _, v in modal.query_one("#calib-judge", Select)._options]
        assert "reference:f1" in judges and "reference:minilm-l6-v2" in judges
        modal.query_one("#calib-order", Select).value = "both"
        modal.query_one("#calib-sample", Input).value = "1e9"     # the range, said in place
        modal.query_one("#calib-sample", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is modal and any(
            m == "Sample: '1e9' is not a whole number from 1 to 10,000,000 (items sampled) "
                 "(blank: all pairs)." for m, _ in app.notes), app.notes
        modal.query_one("#calib-sample", Input).value = "3"
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        assert len(judge.calls) == 6                     # 3 pairs × both orders
        assert any("Calibration of lazy-judge on small@1: done, 3 pairs" in m
                   for m, _ in app.notes), app.notes
        status = text_of(screen.query_one("#cal-status", Static))
        assert "judge lazy-judge" in status and "both order(s)\n3 pairs judged" in status
        figures = text_of(screen.query_one("#cal-figures", Static))
        assert "position flip rate (both orders)  100.0%" in figures
        assert not app.errors()
    store = Store(path)
    try:
        [stored] = list_calibrations(store)
        assert (stored.judge, stored.labels, stored.orders, stored.pairs) == \
            ("lazy-judge", "small@1", "both", 3)
    finally:
        store.close()


@pytest.mark.asyncio
async def test_new_calibration_without_labels_says_how_to_import(tmp_path, monkeypatch):
    from mirage_tui.dialogs.calibrate import CalibrateScreen
    from mirage_tui.screens.calibration import CalibrationScreen

    scripted_catalog(monkeypatch, ScriptedJudge(first_wins), "fake-judge")
    app = RecordingApp(tmp_path / "w.db")
    async with app.run_test(size=(110, 40)) as pilot:
        await open_screen(pilot, CalibrationScreen())
        await pilot.press("j")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, CalibrateScreen)
        hint = text_of(modal.query_one("#calib-hint", Static))
        assert "No labels dataset" in hint
        assert "mirage-tui data import ../shared/data/ragchecker-meta/" in hint
        # the lists' "finding …" prompts went the moment the worker found nothing (issue 36)
        shown = {w: text_of(modal.query_one(f"#calib-{w} SelectCurrent #label", Static))
                 for w in ("judge", "labels", "aspect")}
        assert shown == {"judge": "fake-judge", "labels": "none: import labels first",
                         "aspect": "no labels"}, shown
        await pilot.click("#calib-go")
        await settle(pilot)
        assert app.screen is modal                  # nothing to calibrate against
        assert any("No labels dataset" in m for m, _ in app.notes)
        await pilot.press("escape")
        assert not app.errors()


@pytest.mark.asyncio
async def test_a_failing_judge_is_one_line_not_a_crash(tmp_path, monkeypatch):
    import models.catalog

    path = labelled_workspace(tmp_path)
    scripted_catalog(monkeypatch, None, "broken")

    def broken(*a, **k):
        raise OSError("no such file")

    monkeypatch.setattr(models.catalog, "load_generator", broken)
    app = RecordingApp(path)
    async with app.run_test(size=(110, 40)) as pilot:
        await calibrate_with_defaults(pilot)
        assert any("cannot load judge model 'broken'" in m for m in app.errors())
        assert "Calibration failed" in text_of(app.screen.query_one("#cal-job", Static))


@pytest.mark.asyncio
async def test_stepping_between_stored_calibrations(calibrated):
    from mirage_tui.screens.calibration import CalibrationScreen

    store = Store(calibrated)
    calibrate_judge(store, "mine", ScriptedJudge(first_wins, name="lazy-judge"),
                    sample=3, n_boot=50)          # a second calibration: one order, 3 pairs
    store.close()
    app = RecordingApp(calibrated)
    async with app.run_test(size=(110, 40)) as pilot:
        await open_screen(pilot, CalibrationScreen("lazy-judge"))
        status = lambda: text_of(app.screen.query_one("#cal-status", Static))  # noqa: E731
        assert "calibration #2" in status() and "seeded order(s)\n3 pairs" in status()
        assert "2 of 2 stored" in status()
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert "calibration #1" in status() and "both order(s)\n6 pairs" in status()
        assert "1 of 2 stored" in status()
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert any("oldest" in m for m, _ in app.notes)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert "calibration #2" in status()
        assert not app.errors()


@pytest.mark.asyncio
async def test_a_judge_crashing_mid_calibration_is_one_line(tmp_path, monkeypatch):
    path = labelled_workspace(tmp_path)
    judge = ScriptedJudge(first_wins, name="crashy", fail_on=range(1, 100))
    scripted_catalog(monkeypatch, judge, "crashy")
    app = RecordingApp(path)
    async with app.run_test(size=(110, 40)) as pilot:
        await calibrate_with_defaults(pilot)
        assert app.screen.query_one("#cal-progress").display is False
        errors = app.errors()
        assert len(errors) == 1 and "\n" not in errors[0] and "crashy" in errors[0], app.notes


@pytest.mark.asyncio
async def test_ranking_of_every_calibrated_judge_with_the_mark(tmp_path):
    from engine.arena.judges.fitted import fit_judge
    from engine.arena.trust.rankings import WORSE_THAN_REFERENCE
    from mirage_tui.screens.calibration import CalibrationScreen
    from testkit.labels import write_labels

    path = tmp_path / "w.db"
    store = Store(path)
    write_labels(store, tmp_path, "contrary", n=24, flip=range(24), queries=lambda i: f"c{i}")
    write_labels(store, tmp_path, "held", n=20, flip=(0, 7), queries=lambda i: f"h{i}")
    fit_judge(store, "bad", "contrary", features=["f1", "length"])
    calibrate_judge(store, "held", "reference:f1", n_boot=50)
    calibrate_judge(store, "held", "fitted:bad", n_boot=50)
    calibrate_judge(store, "contrary", "fitted:bad", n_boot=50)
    store.close()
    app = RecordingApp(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await open_screen(pilot, CalibrationScreen())
        screen = app.screen
        table = screen.query_one("#cal-ranking", DataTable)
        assert not table.display
        await pilot.press("r")
        await settle(pilot)
        assert table.display and table.row_count == 3
        first, second, third = ([str(c) for c in table.get_row_at(i)] for i in (0, 1, 2))
        assert third[:3] == ["fitted:bad", "random", "held@1"]
        # on its own labels a fitted judge is near perfect: the mark says why
        assert first[:3] == ["fitted:bad", "random", "contrary@1"]
        assert first[-1].strip() == "(in-sample: fitted on these labels)"
        first, second = second, third
        assert first[:3] == ["reference:f1", "random", "held@1"] and first[3].startswith("90.0%")
        # every rate with its CI and n (issue 27): the flip rate and the people's ceiling too
        rates = [first[3], first[4], first[6]]       # sign accuracy, flip, people
        assert all(c == "–" or ("[" in c and " n=" in c) for c in rates), first
        assert first[6] != "–", first                 # the people's ceiling: a rate shown
        assert first[-1] == ""
        assert second[0] == "fitted:bad" and WORSE_THAN_REFERENCE in second[-1]
        await pilot.press("r")
        assert not table.display
        assert not app.errors()


@pytest.mark.asyncio
async def test_a_calibration_whose_process_died_reads_interrupted(calibrated):
    """Issue 35: a calibration is stored only when it ends; one whose process was killed
    is named as interrupted (its claim's pid is gone) until it is run again."""
    import socket
    import subprocess
    import sys

    from engine.store.claims import set_claim
    from mirage_tui.screens.calibration import CalibrationScreen

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    store = Store(calibrated)
    with store.write() as db:
        set_claim(db, "calibration", "big-judge on mine (overall, both order, pairwise)",
                  gone.pid, socket.gethostname(), None, "2026-01-02T03:04:05+00:00")
    store.close()
    app = RecordingApp(calibrated)
    async with app.run_test(size=(110, 40)) as pilot:
        await open_screen(pilot, CalibrationScreen("lazy-judge"))
        status = text_of(app.screen.query_one("#cal-status", Static))
        assert (f"Not stored yet: big-judge on mine (overall, both order, pairwise): "
                f"interrupted (pid {gone.pid}); press j to start it again") in status
        assert not app.errors()
