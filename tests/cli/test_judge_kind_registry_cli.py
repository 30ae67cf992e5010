"""A judge kind is one entry: a throw-away kind registered here, and nowhere else
(:func:`engine.arena.judges.kinds.register`), is spelt, checked and described as its entry says
and shows in ``judge list``, ``models list``, the ``--judge`` help of ``arena judge`` and
``judge calibrate``, the default-judge rule, and the app's judge and calibration dialogs."""

from __future__ import annotations

import json

import pytest

from engine.arena.judges import kinds
from engine.arena.judges.kinds import JudgeKind
from engine.arena.judges.names import judge_name, judge_problem
from engine.arena.trust.calibrate import calibrate_judge
from engine.arena.trust.default_judge import default_judge
from engine.runs.lookup import load_run
from engine.store import Store
from mirage_tui import cli
from testkit.arena import drop_references
from testkit.labels import write_labels
from testkit.scripted import ScriptedJudge

TOY = "toy:shorter"


def _shorter_wins(s):
    one, two = s["Answer 1"], s["Answer 2"].split("\n\n")[0]
    return "1" if len(one) < len(two) else "2"


def _open_toy(spec, template, store, n_threads):
    from engine.arena.types import ArenaError

    if spec.strip().lower() != TOY:
        raise ArenaError(f"no toy judge {spec!r}")
    return kinds.LLM.open(ScriptedJudge(_shorter_wins, name=spec.strip().lower()), template,
                          store, n_threads)


TOY_KIND = JudgeKind("toy", "toy:", True, _open_toy, lambda store: [TOY],
                     lambda store, spec: False, detail="the shorter answer wins",
                     describe="the shorter answer wins", hint=(TOY,))


@pytest.fixture
def toy():
    kinds.register(TOY_KIND)
    try:
        yield TOY_KIND
    finally:
        kinds.unregister(TOY_KIND.name)


@pytest.fixture
def calibrated(toy, workspace, tmp_path):
    """The inspection workspace without references, the toy judge calibrated on 24 labelled
    pairs (it names the side people prefer on every one)."""
    store = Store(workspace["path"])
    try:
        drop_references(store)
        write_labels(store, tmp_path, "people", n=24)
        calibrate_judge(store, "people", TOY, n_boot=50)
    finally:
        store.close()
    return workspace["path"]


def test_the_kind_owns_its_spelling_problem_and_hint(toy):
    assert kinds.kind_of(" TOY:Shorter ") is toy
    assert judge_name(" TOY:Shorter ") == TOY
    assert judge_problem(TOY) is None
    assert judge_problem("toy:shortr") == ("judge 'toy:shortr': no such toy judge; did you mean "
                                           f"'{TOY}'?")
    assert kinds.offline_hint().endswith(f"fitted:NAME, {TOY}")
    assert kinds.offline_judge_names()[-1] == TOY
    assert toy.about(TOY) == f"{TOY}: the shorter answer wins; no LLM."


def test_a_second_kind_without_a_prefix_is_refused():
    from dataclasses import replace

    with pytest.raises(ValueError, match="only one kind"):
        kinds.register(replace(TOY_KIND, prefix=""))
    assert [k.name for k in kinds.KINDS] == ["reference", "fitted", "llm"]


def test_unregistered_the_kind_is_gone(toy):
    kinds.unregister(toy.name)
    assert kinds.kind_of(TOY) is kinds.LLM and TOY not in kinds.offline_judge_names()
    assert [k.name for k in kinds.KINDS] == ["reference", "fitted", "llm"]


def test_cli_help_lists_the_kind(toy, capsys):
    for argv, said in ((["arena", "judge", "--help"],
                        "fitted:NAME, or toy:NAME (the shorter answer wins). Default"),
                       (["judge", "calibrate", "--help"], "fitted:NAME, or toy:NAME (default")):
        with pytest.raises(SystemExit):
            cli.main(argv)
        assert said in " ".join(capsys.readouterr().out.split()), argv


def test_models_list_and_judge_list_show_the_kind(calibrated, capsys):
    assert cli.main(["models", "list", "--db", str(calibrated), "--json"]) == 0
    entries = {e["name"]: e for e in json.loads(capsys.readouterr().out)}
    assert (entries[TOY]["kind"], entries[TOY]["source"]) == ("judge", "toy")
    assert cli.main(["judge", "list", "--db", str(calibrated), "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["calibrated"]
    assert (row["judge"], row["labels"]) == (TOY, "people@1")


def test_arena_judge_names_the_kind_problem(calibrated, capsys):
    assert cli.main(["arena", "judge", "beta", "--db", str(calibrated), "--dry-run",
                     "--judge", "toy:shortr"]) != 0
    err = capsys.readouterr().err
    assert "no such toy judge; did you mean 'toy:shorter'?" in err and "Traceback" not in err


def test_the_default_judge_rule_picks_the_calibrated_kind(calibrated):
    store = Store(calibrated)
    try:
        choice = default_judge(store, load_run(store, "beta"))
    finally:
        store.close()
    assert choice.spec == TOY
    assert choice.why.startswith("no reference to judge against: the best-calibrated judge")


@pytest.mark.asyncio
async def test_the_judge_and_calibration_dialogs_offer_the_kind(calibrated):
    from textual.widgets import Select, Static

    from mirage_tui.dialogs.calibrate import CalibrateScreen
    from mirage_tui.screens.calibration import CalibrationScreen
    from testkit.tui import RecordingApp, open_judge_dialog, open_screen, settle, text_of

    app = RecordingApp(calibrated)
    async with app.run_test(size=(110, 40)) as pilot:
        modal = await open_judge_dialog(pilot, "beta")
        assert modal.query_one("#judge-model", Select).value == TOY
        assert text_of(modal.query_one("#judge-about", Static)) == \
            f"{TOY}: the shorter answer wins; no LLM."
        await pilot.press("escape")
        await settle(pilot)
        await open_screen(pilot, CalibrationScreen())
        await pilot.press("j")
        await settle(pilot)
        assert isinstance(app.screen, CalibrateScreen)
        judges = [str(v) for _, v in app.screen.query_one("#calib-judge", Select)._options]
        assert TOY in judges
        assert not app.errors()
