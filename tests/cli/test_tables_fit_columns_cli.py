"""Every table the CLI prints fits ``COLUMNS``: ``arena ratings``, ``arena list``, ``judge list``,
``judge calibration``, ``judge verdicts``, ``models list``, ``runs list`` and ``data list`` at 80
and at 120 columns, every line within the width and every row still named (cells wrap at
spaces, then the columns go into panels under the row's name)."""

from __future__ import annotations

import json

import pytest

from testkit.runs import cli_main

COMMANDS = (("arena", "ratings", "alpha", "--arena", "duel", "--boot", "50"),
            ("arena", "list", "alpha"), ("judge", "list"), ("judge", "calibration"),
            ("runs", "list"), ("data", "list"), ("models", "list"))


def cli(capsys, monkeypatch, db, *args, columns: int) -> tuple[int, str, str]:
    """The command in process (:func:`testkit.runs.cli_main`) with ``$COLUMNS`` at
    ``columns``, which the tables read when they print."""
    monkeypatch.setenv("COLUMNS", str(columns))
    return cli_main(capsys, *args, "--db", db)


@pytest.fixture
def calibrated(workspace, tmp_path, capsys, monkeypatch):
    """The inspection workspace with a labels dataset of long names and a calibration on it."""
    db, labels = workspace["path"], tmp_path / "people-with-a-rather-long-labels-name.jsonl"
    rows = [{"query": f"question {i}", "answer_a": "right", "answer_b": f"wrong {i}",
             "reference": "right", "label": -1 if i % 3 else 1, "annotator": who}
            for i in range(12) for who in ("alice", "bob")]
    labels.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    for argv in (("data", "import", str(labels)),
                 ("judge", "calibrate", "--judge", "reference:f1", "--labels",
                  "people-with-a-rather-long-labels-name", "--boot", "50")):
        code, _, err = cli(capsys, monkeypatch, db, *argv, columns=120)
        assert code == 0, err
    return db


def test_every_cli_table_fits_columns(calibrated, capsys, monkeypatch):
    for columns in (80, 120):
        said = {}
        for argv in COMMANDS:
            code, out, err = cli(capsys, monkeypatch, calibrated, *argv, columns=columns)
            assert code == 0, (argv, err)
            lines = out.splitlines()
            assert lines, argv
            long = [line for line in lines if len(line) > columns]
            assert not long, (argv, columns, long)
            said[argv[:2]] = out
        ratings = said[("arena", "ratings")]
        assert "fake-a" in ratings and "fake-b" in ratings and "win rate" in ratings
        assert "duel" in said[("arena", "list")]
        assert "reference:f1" in said[("judge", "list")] and "SIGN" in said[("judge", "list")]
        assert "alpha" in said[("runs", "list")] and "beta" in said[("runs", "list")]
        assert "people-with-a-rather-long-labels-name" in said[("data", "list")].replace(
            "\n", "")
