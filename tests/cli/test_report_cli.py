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
    (tmp_path / "x").mkdir()                    # a missing folder is refused (issue 35)
    assert _cli(toy, ["export", "toy-run", "-o", str(tmp_path / "x" / "r.csv")]) == 0
    assert (tmp_path / "x" / "r.header.json").exists()
    with pytest.raises(LookupError, match="known: toy-run"):
        _cli(toy, ["report", "missing"])


# ------------------------------------------------------------------ recorded choices

def _widen(store):
    with store.write() as db:
        db.conn.execute("UPDATE pool SET support = 1, support_source = 'answer-match' "
                        "WHERE support = 0")


def test_cli_report_header_names_detector_rule_and_gold(toy, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")      # a line each (at 100 they wrap: test_text_width)
    _widen(toy)
    assert _cli(toy, ["report", "toy-run", "--n-boot", "50"]) == 0
    head = capsys.readouterr().out.split("\n\n")[0].splitlines()   # the header paragraph
    language = next(line for line in head if line.startswith("Correct language: "))
    gold = next(line for line in head if line.startswith("Retrieval gold: "))
    assert language.startswith("Correct language: langid 1.") and "rule: mirage-tui" in language
    assert gold.startswith("Retrieval gold: oracle (") and "9 answer-match rows" in gold

    assert _cli(toy, ["report", "toy-run", "--n-boot", "50", "--parity", "bergen"]) == 0
    out = capsys.readouterr().out
    assert "Parity: bergen (fixes gold oracle, language rule bergen, language detector " \
           "fasttext)" in out
    assert "Correct language: fastText lid.176.ftz" in out and "rule: bergen (raw" in out

    assert _cli(toy, ["report", "toy-run", "--n-boot", "50", "--gold", "oracle+answer-match",
                      "--language-rule", "bergen", "--language-detector", "langid"]) == 0
    out = capsys.readouterr().out
    assert "Retrieval gold: oracle+answer-match (" in out and "includes 9 answer-match" in out
    assert "Correct language: langid" in out and "rule: bergen" in out

    assert _cli(toy, ["report", "toy-run", "--json", "--n-boot", "50", "--gold",
                      "oracle+answer-match"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["definitions"]["gold"] == "oracle+answer-match"
    assert data["definitions"]["language_metric"] == "correct_language"
    assert data["definitions"]["answer_match_rows"] == 9
    assert set(data["retrieval_by_gold"]) == {"oracle", "oracle+answer-match"}
    assert data["retrieval"] == data["retrieval_by_gold"]["oracle+answer-match"]


def test_cli_report_refuses_a_choice_that_contradicts_parity(toy):
    from engine.metrics.definitions import DefinitionError

    with pytest.raises(DefinitionError, match="contradicts parity 'mirage'"):
        _cli(toy, ["report", "toy-run", "--parity", "mirage", "--gold", "oracle+answer-match"])
    with pytest.raises(SystemExit):   # argparse: not a known choice
        _cli(toy, ["report", "toy-run", "--gold", "everything"])


def test_cli_switches_as_a_user_types_them(toy):
    from testkit.runs import cli_run

    import subprocess
    import sys

    from testkit.paths import ROOT

    db = str(toy.path)
    out = subprocess.run([sys.executable, "-m", "mirage_tui.cli", "report", "toy-run", "--db",
                          db, "--parity", "mirage", "--gold", "oracle+answer-match"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1
    assert out.stderr.strip().count("\n") == 0 and "contradicts parity 'mirage'" in out.stderr
    bad = cli_run("--dataset", "toy", "--generator", "x", "--parity", "bergen",
                  "--language-rule", "mirage-tui", db=toy.path)
    assert bad.returncode == 1 and "contradicts parity 'bergen'" in bad.stderr
