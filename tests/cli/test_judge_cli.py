"""``mirage-tui judge calibrate`` / ``judge calibration`` through ``cli.main``: the packaged
SmolLM2-135M judges three short labelled pairs (both orders), for real (the real RAGChecker
file's long answers would take minutes on a CPU; its import is tested in
tests/engine/test_import_labels.py)."""

from __future__ import annotations

import json

from engine.arena.trust.calibrate import latest_calibration
from engine.datasets.importing import import_path
from engine.store import Store
from mirage_tui import cli

SMOL = "smollm2-135m-instruct"


def test_calibrate_the_packaged_judge_for_real(tmp_path, capsys):
    db = tmp_path / "w.db"
    store = Store(db)
    rows = [("What is the capital of France?", "Paris.", "Berlin.", -2, -1),
            ("How many legs has a spider?", "Six.", "Eight.", 2, 2),
            ("What colour is the sky on a clear day?", "Blue.", "Blue, usually.", 0, 1)]
    path = tmp_path / "meta.jsonl"
    path.write_text("\n".join(json.dumps({"query": q, "answer_a": a, "answer_b": b,
                                          "label": label, "annotator": who, "domain": "quiz"})
                              for q, a, b, *labels in rows
                              for who, label in zip(("ann", "bob"), labels)))
    import_path(store, path)
    store.close()
    args = ["judge", "calibrate", "--db", str(db), "--judge", SMOL, "--labels", "meta",
            "--sample", "3", "--both-orders", "--boot", "100", "--in-process"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert f"judge {SMOL}" in out and "template ragqa_arena_pairwise@1" in out
    assert "sign accuracy (human non-ties)" in out and "(RAGChecker GPT-4 76%)" in out
    assert "human-human sign agreement" in out and "(published 88.6%)" in out
    assert "pairs 3 · verdicts asked 6" in out and "6 new judge call(s)" in out
    # (resuming from the judgments cache: tests/engine/test_calibrate.py, without a model)
    store = Store(db)
    stored = latest_calibration(store, SMOL)
    assert stored.config["orders"] == "both" and stored.figures["counts"]["pairs"] == 3
    assert len(stored.verdicts) == 3 and all(len(v["orders"]) == 2 for v in stored.verdicts)
    assert stored.figures["overall"]["flip_rate"]["n"] + stored.figures["counts"]["unparsed"] \
        >= 1
    store.close()
    assert cli.main(["judge", "calibration", "--db", str(db), "--judge", SMOL]) == 0
    assert f"calibration #{stored.id}" in capsys.readouterr().out


def test_calibrate_refuses_a_dataset_that_holds_no_labels(tmp_path, capsys):
    db = tmp_path / "w.db"
    Store(db).close()
    assert cli.main(["judge", "calibrate", "--db", str(db), "--judge", SMOL, "--labels",
                     "demo", "--in-process"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mirage-tui: error:") and "demo" in err and len(err.splitlines()) == 1
    assert cli.main(["judge", "calibration", "--db", str(db)]) == 1
    assert "no calibration stored" in capsys.readouterr().err
