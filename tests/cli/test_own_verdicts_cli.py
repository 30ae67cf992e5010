"""Your own verdicts, found again from the CLI: ``judge verdicts`` lists every verdict entered in
the app with its pair (run, query, answer A and B, setting), the verdict in words, who and
when, as text within ``COLUMNS`` and as JSON; ``data show verdicts:RUN`` prints the pairs.
Through the command's ``main`` in process."""

from __future__ import annotations

import json
import subprocess

import pytest

from engine.arena.trust.human_verdicts import record_human_verdict
from engine.arena.types import arena_system
from engine.runs.lookup import load_run
from testkit.runs import cli_done


@pytest.fixture
def cli(capsys, monkeypatch):
    """``mirage-tui ARGS --db DB`` through the command's ``main`` in process, ``$COLUMNS`` at
    ``columns`` (read when the text is printed)."""
    def command(db, *args, columns: int = 120) -> subprocess.CompletedProcess:
        monkeypatch.setenv("COLUMNS", str(columns))
        return cli_done(capsys, *args, "--db", db)
    return command


def _two_verdicts(store) -> list[str]:
    run = load_run(store, "r")
    rowid = store.query("SELECT query_rowid FROM run_items WHERE run_id = ? LIMIT 1",
                        (run.id,))[0][0]
    systems = sorted({arena_system(r["system"], r["setting"]) for r in store.query(
        "SELECT system, setting FROM run_items WHERE run_id = ?", (run.id,))})
    record_human_verdict(store, run, rowid, systems[0], systems[1], "a", annotator="alice",
                         note="clearer")
    record_human_verdict(store, run, rowid, systems[0], systems[-1], "tie", annotator="bob")
    return systems


def test_judge_verdicts_lists_each_verdict_with_its_pair_in_words(demo_run, answered_path,
                                                                  cli):
    systems = _two_verdicts(demo_run)
    done = cli(answered_path, "judge", "verdicts", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["annotator"], r["label"], r["label_words"]) for r in rows] == [
        ("alice", -1, "A better"), ("bob", 0, "tie")]
    first = rows[0]
    assert first["run"] == "r" and first["query_id"] and first["note"] == "clearer"
    assert arena_system(first["system_a"], first["setting_a"]) == systems[0]
    assert arena_system(first["system_b"], first["setting_b"]) == systems[1]
    assert first["created_at"]

    for columns in (80, 120):
        text = cli(answered_path, "judge", "verdicts", columns=columns)
        assert text.returncode == 0, text.stderr
        lines = text.stdout.splitlines()
        assert max(len(line) for line in lines) <= columns, text.stdout
        assert "A better" in text.stdout and "alice" in text.stdout and "bob" in text.stdout
        assert "2 verdicts by 2 people" in text.stdout
    one_run = cli(answered_path, "judge", "verdicts", "--run", "r", "--json")
    assert len(json.loads(one_run.stdout)) == 2


def test_judge_verdicts_with_none_and_with_a_misspelt_run(answered_path, cli):
    empty = cli(answered_path, "judge", "verdicts")
    assert empty.returncode == 0 and "no verdict entered" in empty.stdout, empty.stderr
    assert json.loads(cli(answered_path, "judge", "verdicts", "--json").stdout) == []
    wrong = cli(answered_path, "judge", "verdicts", "--run", "rr")
    assert wrong.returncode != 0 and len(wrong.stderr.strip().splitlines()) == 1
    assert "did you mean 'r'" in wrong.stderr and "Traceback" not in wrong.stderr


def test_data_show_prints_the_verdicts_dataset_rows(demo_run, answered_path, cli):
    _two_verdicts(demo_run)
    shown = cli(answered_path, "data", "show", "verdicts:r", "--limit", "50")
    assert shown.returncode == 0, shown.stderr
    assert "more (--limit N)" not in shown.stdout
    assert "alice -1" in shown.stdout and "bob 0" in shown.stdout, shown.stdout
    short = cli(answered_path, "data", "show", "verdicts:r", "--limit", "1")
    assert "… 1 more (--limit N)" in short.stdout and "alice -1" in short.stdout
