"""Settings are checked where they are read (issue 35, item 5): an empty ``judge fit
--features`` is refused (``""`` fitted the defaults, ``,`` showed scikit-learn's raw "Found
array with 0 feature(s) ... StandardScaler"), and scikit-learn's refusals read as one line
in the terms of a fit."""

from __future__ import annotations

import numpy as np
import pytest
from testkit.labels import write_labels

from engine.arena.judges.fit_features import FitError, sklearn_checked
from engine.arena.judges.fit_methods import fit_logistic
from engine.store import Store
from mirage_tui import cli


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "w.db"
    store = Store(path)
    write_labels(store, tmp_path, "train", n=24, queries=lambda i: f"t{i}")
    # every pair but one prefers answer B: some training fold holds one side only
    write_labels(store, tmp_path, "lopsided", n=24, one_side=True, flip=(0,),
                 queries=lambda i: f"l{i}")
    store.close()
    return str(path)


@pytest.mark.parametrize("features", ["", ",", "  ", " , ,"])
def test_empty_features_are_refused(db, capsys, features):
    assert cli.main(["judge", "fit", "x", "--db", db, "--labels", "train", "--features",
                     features]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "names no feature" in err, err
    assert "StandardScaler" not in err and "Found array" not in err
    assert cli.main(["judge", "list", "--db", db, "--json"]) == 0
    assert '"fitted": []' in capsys.readouterr().out


def test_a_fold_with_one_side_is_one_line(db, capsys):
    assert cli.main(["judge", "fit", "x", "--db", db, "--labels", "lopsided", "--features",
                     "f1,length"]) == 1
    err = capsys.readouterr().err
    # the fit's progress lines (judge fit reports its pairs), then the refusal: one line
    said = [line for line in err.splitlines() if not line.startswith("fit x ")]
    assert len(said) == 1 and said[0].startswith("mirage-tui: error: "), err
    assert "cannot fit the judge: a cross-validation fold's training pairs all prefer one " \
           "side" in said[0], err


def test_any_other_refusal_is_one_line_too():
    with pytest.raises(FitError, match=r"^cannot fit the judge: no feature to fit on$"):
        sklearn_checked(fit_logistic)(np.zeros((4, 0)), np.array([1, -1, 1, -1]))
    with pytest.raises(FitError, match=r"^cannot fit the judge: [^\n]+$"):
        sklearn_checked(fit_logistic)(np.ones((4, 1)), np.array([0.5, 1.0, 1.5, 2.0]))


@pytest.fixture
def configured(answered_path, tmp_path, monkeypatch):
    """A workspace with the run ``r``, and a config.toml to write."""
    folder = tmp_path / "cfg"
    folder.mkdir()
    monkeypatch.setenv("MIRAGE_CONFIG_DIR", str(folder))
    monkeypatch.delenv("MIRAGE_DB", raising=False)
    return answered_path, folder / "config.toml"


@pytest.mark.parametrize("judge, words", [
    ("fitted:NOPE", "no fitted judge 'NOPE'"),
    ("smolm2", "did you mean 'smollm2-135m-instruct'?"),
    ("nope-model", "no such model"),
    ("reference:f2", "no such reference judge; did you mean 'reference:f1'?"),
])
def test_a_configured_judge_that_does_not_exist(configured, capsys, judge, words):
    db, config = configured
    config.write_text(f'judge = "{judge}"\ngenerators = ["smolm2"]\n')
    assert cli.main(["config", "--db", str(db)]) == 1
    err = capsys.readouterr().err
    assert f"warning: {config}: judge: judge {judge!r}: " in err and words in err, err
    assert f"warning: {config}: generators: generator 'smolm2': no such model; did you mean " \
           "'smollm2-135m-instruct'?" in err
    # arena judge --dry-run refuses it instead of printing a plan
    assert cli.main(["arena", "judge", "r", "--dry-run", "--db", str(db)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and words in err, err


def test_a_judge_that_exists_is_planned(configured, capsys):
    db, config = configured
    config.write_text('judge = "reference:f1"\n')
    assert cli.main(["config", "--db", str(db)]) == 0, capsys.readouterr().err
    assert cli.main(["arena", "judge", "r", "--dry-run", "--db", str(db)]) == 0
    assert capsys.readouterr().out
