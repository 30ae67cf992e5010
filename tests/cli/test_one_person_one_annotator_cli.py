"""One person is one annotator however the name is spelled: ``alice``, ``Alice``, `` alice ``,
``ALICE`` and ``ＡＬＩＣＥ`` (full width) labelling one pair are one annotator, stored under the
first spelling, and make no human ceiling (which needs two people); your own verdicts typed
under another spelling replace your earlier one. Driven through the CLI as a user would (its
``main``, in process)."""

from __future__ import annotations

import json

import pytest

from engine.arena.types import arena_system
from engine.arena.trust.human_verdicts import human_verdicts_for, record_human_verdict
from engine.datasets.labels import load_label_pairs
from engine.runs.lookup import load_run
from engine.store import Store
from testkit.runs import cli_done

SPELLINGS = ("alice", "Alice", " alice ", "ALICE", "ＡＬＩＣＥ", "a\u200blice", "alice\u3000")


@pytest.fixture
def cli(capsys, monkeypatch):
    """``mirage-tui ARGS --db DB`` through the command's ``main`` in process, 100 columns wide
    (what a piped command gets, whatever terminal pytest runs in)."""
    monkeypatch.setenv("COLUMNS", "100")
    return lambda db, *args: cli_done(capsys, *args, "--db", db)


def _rows(path, rows) -> None:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
                    encoding="utf-8")


def test_one_person_under_many_spellings_is_one_annotator_and_no_ceiling(tmp_path, cli):
    db, labels = tmp_path / "w.db", tmp_path / "people.jsonl"
    one = {"query": "Where was Bach born?", "answer_a": "Eisenach", "answer_b": "Leipzig",
           "reference": "Eisenach", "label": -1}
    others = [{"query": f"q{i}", "answer_a": "x", "answer_b": f"y{i}", "reference": "x",
               "label": 1} for i in range(25)]
    _rows(labels, [{**one, "annotator": who} for who in SPELLINGS] + others)
    done = cli(db, "data", "import", str(labels), "--json")
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)["counts"]
    assert counts["annotators"] == 1 and counts["repeats_dropped"] == len(SPELLINGS) - 1
    shown = cli(db, "data", "show", "people", "--json")
    assert shown.returncode == 0, shown.stderr
    first = json.loads(shown.stdout)["first_pairs"][0]
    assert first["labels"] == {"overall": {"alice": -1}}           # the first spelling kept

    calibrated = cli(db, "judge", "calibrate", "--judge", "reference:f1", "--labels", "people",
                     "--boot", "50", "--json")
    assert calibrated.returncode == 0, calibrated.stderr
    listed = cli(db, "judge", "list")
    assert listed.returncode == 0, listed.stderr
    assert "- n=0" in listed.stdout and "100.0% n=" not in listed.stdout, listed.stdout


def test_another_spelling_with_another_label_is_the_same_person_changing_their_mind(tmp_path,
                                                                                   cli):
    db, labels = tmp_path / "w.db", tmp_path / "changed.jsonl"
    row = {"query": "q", "answer_a": "a", "answer_b": "b", "label": -1, "annotator": "alice"}
    _rows(labels, [row, {**row, "annotator": "ALICE ", "label": 2}])
    done = cli(db, "data", "import", str(labels))
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "'alice' already labelled pair" in done.stderr and "another label" in done.stderr


def test_two_people_still_make_a_ceiling(tmp_path, cli):
    db, labels = tmp_path / "w.db", tmp_path / "two.jsonl"
    rows = [{"query": f"q{i}", "answer_a": "x", "answer_b": f"y{i}", "reference": "x",
             "label": 1, "annotator": who} for i in range(3) for who in ("alice", "Bob")]
    _rows(labels, rows)
    assert cli(db, "data", "import", str(labels)).returncode == 0
    store = Store(db)
    try:
        pairs = load_label_pairs(store, "two")
        assert all(len(p.annotator_labels("overall")) == 2 for p in pairs)
    finally:
        store.close()


def test_your_own_verdict_under_another_spelling_replaces_the_earlier_one(demo_run):
    store = demo_run
    run = load_run(store, "r")
    rowid = store.query("SELECT query_rowid FROM run_items WHERE run_id = ? LIMIT 1",
                        (run.id,))[0][0]
    systems = sorted({arena_system(r["system"], r["setting"]) for r in store.query(
        "SELECT system, setting FROM run_items WHERE run_id = ?", (run.id,))})
    a, b = systems[:2]
    record_human_verdict(store, run, rowid, a, b, "a", annotator="alice")
    record_human_verdict(store, run, rowid, a, b, "b", annotator=" ALICE ")
    [(pair, verdicts)] = human_verdicts_for(store, run, rowid).items()
    assert [(v.annotator, v.label) for v in verdicts] == [("alice", 1 if pair == (a, b) else -1)]
