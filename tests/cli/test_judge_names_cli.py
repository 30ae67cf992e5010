"""One resolver for judge names (issue 35, item 6): what ``judge calibrate --judge smollm2``
stored, ``judge calibration --judge smollm2`` finds (it said "no calibration stored for judge
'smollm2'"), and ``judge compare`` takes the same names; a typo gets a did-you-mean."""

from __future__ import annotations

import json

import pytest

from engine.arena.trust.calibrate import calibrate_judge
from engine.arena.judges.names import judge_name
from mirage_tui import cli
from testkit.arena import ScriptedJudge
from testkit.labels import write_labels

SMOL = "smollm2-135m-instruct"


def _longer_wins(s):
    one, two = s["Answer 1"], s["Answer 2"].split("\n\n")[0]
    return "1" if len(one) > len(two) else "2"


@pytest.fixture
def db(store, tmp_path):
    write_labels(store, tmp_path, "people", n=6)
    # what `judge calibrate --judge smollm2` stores: the judge under its catalog name
    calibrate_judge(store, "people", ScriptedJudge(_longer_wins, name=SMOL), n_boot=20)
    calibrate_judge(store, "people", ScriptedJudge(_longer_wins, name="reference:f1"),
                    n_boot=20)
    return str(store.path)


def test_the_spellings_of_one_judge(db):
    assert judge_name("smollm2") == judge_name(" SmolLM2-135M-Instruct ") == SMOL
    assert judge_name("reference:F1") == "reference:f1"
    assert judge_name("fitted: mine") == "fitted:mine"


@pytest.mark.parametrize("typed", ["smollm2", SMOL, "SMOLLM2", "smollm2-135m"])
def test_calibration_finds_what_calibrate_stored(db, capsys, typed):
    assert cli.main(["judge", "calibration", "--db", db, "--judge", typed, "--json"]) == 0, \
        capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["judge"] == SMOL


def test_a_typo_gets_a_did_you_mean(db, capsys):
    assert cli.main(["judge", "calibration", "--db", db, "--judge", "smolm2"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no calibration stored for judge 'smolm2'" in err
    assert f"did you mean {SMOL!r}" in err


def test_compare_takes_judge_names_as_well_as_ids(db, capsys):
    assert cli.main(["judge", "compare", "smollm2", "reference:F1", "--db", db, "--json",
                     "--boot", "20"]) == 0, capsys.readouterr().err
    data = json.loads(capsys.readouterr().out)
    assert (data["a"], data["b"]) == (1, 2)
    assert cli.main(["judge", "compare", "smollm2", "#1", "--db", db]) == 1
    assert "#1 is the same calibration twice" in capsys.readouterr().err


def test_the_app_takes_the_same_spellings(db, store):
    """The Calibration screen shows the calibration of a judge named by another spelling,
    and the new-calibration dialog preselects the offered judge it names."""
    from engine.arena.judges.names import calibrated_judge
    from mirage_tui.dialogs.calibrate import _offered_as

    assert calibrated_judge(store, "smollm2") == SMOL
    assert calibrated_judge(store, "reference:F1") == "reference:f1"
    assert calibrated_judge(store, "never-calibrated") == "never-calibrated"
    offered = [SMOL, "gemma3-270m", "reference:f1", "fitted:mine"]
    assert _offered_as("smollm2", offered) == SMOL
    assert _offered_as("Reference:F1", offered) == "reference:f1"
    assert _offered_as("fitted: mine", offered) == "fitted:mine"
    assert _offered_as(None, offered) is None
