"""Messages that leave nothing out. Exporting a run that has not finished
says "partial: N of M items"; ``export`` will not overwrite a file unless ``--force``; a JSON
dataset file cut short names its line and column when its format is detected, not "cannot
tell this file's format"."""

from __future__ import annotations

import json

from engine.datasets.demo_pool import ensure_demo
from engine.store import Store
from mirage_tui.cli import main as cli_main
from testkit.runs import FakeGenerator, config, run


def _cancelled_run(db) -> int:
    """A run of 18 items cancelled after its third generation; returns the items it stored."""
    store = Store(db)
    ensure_demo(store)
    gen = FakeGenerator()
    _, summary = run(store, config(name="half"), {"fake-gen": gen},
                     cancel=lambda: len(gen.calls) >= 3)
    assert summary.status == "cancelled" and 0 < summary.done < summary.total == 18
    return summary.done


def test_export_of_an_unfinished_run_says_partial_and_refuses_to_overwrite(tmp_path, capsys):
    db = tmp_path / "w.db"
    done = _cancelled_run(db)
    out = tmp_path / "half.jsonl"
    args = ["export", "--db", str(db), "half", "--format", "jsonl", "-o", str(out)]
    assert cli_main(args) == 0
    printed = capsys.readouterr().out
    assert f"partial: {done} of 18 items (run cancelled)" in printed
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert header["partial"] == f"partial: {done} of 18 items (run cancelled)"

    out.write_text("mine\n", encoding="utf-8")
    assert cli_main(args) == 1                            # refused: the file is left alone
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out} exists; add --force to overwrite it" in err[0]
    assert out.read_text(encoding="utf-8") == "mine\n"
    assert cli_main([*args, "--force"]) == 0
    assert out.read_text(encoding="utf-8").startswith('{"type": "header"')

    # csv: the header sidecar counts as the output too
    csv_out = tmp_path / "half.csv"
    (tmp_path / "half.header.json").write_text("{}", encoding="utf-8")
    assert cli_main(["export", "--db", str(db), "half", "-o", str(csv_out)]) == 1
    assert "half.header.json exists" in capsys.readouterr().err
    assert not csv_out.exists()


def test_a_truncated_json_dataset_names_line_and_column_at_detection(tmp_path, capsys):
    squad = {"version": "1.1", "data": [{"title": "T", "paragraphs": [
        {"context": "Paris is in France.", "qas": [
            {"id": "q1", "question": "Where is Paris?",
             "answers": [{"text": "France", "answer_start": 12}]}]}]}]}
    text = json.dumps(squad, indent=2)
    cut = tmp_path / "xquad.en.json"
    cut.write_text(text[:20], encoding="utf-8")       # cut before "data" shows
    code = cli_main(["data", "import", "--db", str(tmp_path / "w.db"), str(cut)])
    err = capsys.readouterr().err
    assert code == 1
    assert "cannot tell this file's format" not in err
    assert "truncated JSON (the file ends early) at line" in err and "column" in err
    assert "--format" in err and len(err.strip().splitlines()) == 1
