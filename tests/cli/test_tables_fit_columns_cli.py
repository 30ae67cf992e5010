"""Every table the CLI prints fits ``COLUMNS``: ``arena ratings``, ``arena list``, ``judge list``,
``judge calibration``, ``judge verdicts``, ``models list``, ``runs list`` and ``data list`` at 80
and at 120 columns, every line within the width and every row still named (cells wrap at
spaces, then the columns go into panels under the row's name)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from testkit.runs import mirage_cli

COMMANDS = (("arena", "ratings", "alpha", "--arena", "duel", "--boot", "50"),
            ("arena", "list", "alpha"), ("judge", "list"), ("judge", "calibration"),
            ("runs", "list"), ("data", "list"), ("models", "list"))


def cli(db, *args, columns: int) -> subprocess.CompletedProcess:
    return subprocess.run([*mirage_cli(), *args, "--db", str(db)], capture_output=True,
                          text=True, timeout=180, env={**os.environ, "COLUMNS": str(columns)})


@pytest.fixture
def calibrated(workspace, tmp_path):
    """The inspection workspace with a labels dataset of long names and a calibration on it."""
    db, labels = workspace["path"], tmp_path / "people-with-a-rather-long-labels-name.jsonl"
    rows = [{"query": f"question {i}", "answer_a": "right", "answer_b": f"wrong {i}",
             "reference": "right", "label": -1 if i % 3 else 1, "annotator": who}
            for i in range(12) for who in ("alice", "bob")]
    labels.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    for argv in (("data", "import", str(labels)),
                 ("judge", "calibrate", "--judge", "reference:f1", "--labels",
                  "people-with-a-rather-long-labels-name", "--boot", "50")):
        done = cli(db, *argv, columns=120)
        assert done.returncode == 0, done.stderr
    return db


def test_every_cli_table_fits_columns(calibrated):
    for columns in (80, 120):
        said = {}
        for argv in COMMANDS:
            done = cli(calibrated, *argv, columns=columns)
            assert done.returncode == 0, (argv, done.stderr)
            lines = done.stdout.splitlines()
            assert lines, argv
            long = [line for line in lines if len(line) > columns]
            assert not long, (argv, columns, long)
            said[argv[:2]] = done.stdout
        ratings = said[("arena", "ratings")]
        assert "fake-a" in ratings and "fake-b" in ratings and "win rate" in ratings
        assert "duel" in said[("arena", "list")]
        assert "reference:f1" in said[("judge", "list")] and "SIGN" in said[("judge", "list")]
        assert "alpha" in said[("runs", "list")] and "beta" in said[("runs", "list")]
        assert "people-with-a-rather-long-labels-name" in said[("data", "list")].replace(
            "\n", "")
