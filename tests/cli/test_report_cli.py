"""``mirage-tui report`` and ``mirage-tui export`` on the hand-made run of :mod:`testkit.toy_run`."""

from __future__ import annotations

import argparse
import json

import pytest


def _cli(store, argv):
    from mirage_tui.cli.report import add_parsers, run

    parser = argparse.ArgumentParser()
    add_parsers(parser.add_subparsers(dest="command"))
    return run(parser.parse_args(argv), store)


def test_cli_report_json_and_text(toy, capsys):
    assert _cli(toy, ["report", "toy-run", "--json", "--n-boot", "50", "--seed", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["run"] == "toy-run" and data["n_boot"] == 50 and data["seed"] == 1
    for row in data["systems"]:
        for key in ("system", "n", "nv", "ca", "ci", "cm", "overall", "patterns"):
            assert key in row
        for key in ("nv", "ca", "ci", "cm", "overall"):
            assert f"{key}_lo" in row and f"{key}_hi" in row
    assert _cli(toy, ["report", "toy-run", "--by", "source", "--n-boot", "50"]) == 0
    out = capsys.readouterr().out
    assert "Table 1." in out and "wiki" in out


def test_cli_export_default_path_and_unknown_run(toy, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _cli(toy, ["export", "toy-run", "--format", "jsonl"]) == 0
    assert (tmp_path / "toy-run.jsonl").exists()
    assert "61 items" in capsys.readouterr().out
    assert _cli(toy, ["export", "toy-run", "-o", str(tmp_path / "x" / "r.csv")]) == 0
    assert (tmp_path / "x" / "r.header.json").exists()
    with pytest.raises(LookupError, match="known: toy-run"):
        _cli(toy, ["report", "missing"])
