"""``mirage-tui arena``: judge, ratings, surrogate, export and list, through ``cli.main``.

The judge model is a scripted Generator handed to the CLI through the catalog's
``load_generator`` (monkeypatched), except in the last test: the packaged SmolLM2-135M judges a
tiny run for real, through ``arena judge`` and ``arena ratings --json``.
"""

from __future__ import annotations

import csv
import json

import pytest

from engine.arena.types import arena_system
from engine.datasets.demo_pool import ensure_demo
from engine.store import Store
from mirage_tui import cli
from models.base import ModelError
from testkit.arena import (ScriptedJudge, against_reference, answered_run,
                           write_lfrqa)

SMOL = "smollm2-135m-instruct"


@pytest.fixture
def db(answered_path):
    return answered_path


@pytest.fixture
def fake_judge(monkeypatch):
    """``--judge fake`` loads a ScriptedJudge; any other name fails to load."""
    import models.catalog

    made = []

    def load(name, **opts):
        if name != "fake":
            raise ModelError(f"{name}: no such model; `mirage-tui models list` shows the names")
        judge = ScriptedJudge()
        judge.opts = opts
        made.append(judge)
        return judge

    monkeypatch.setattr(models.catalog, "load_generator", load)
    return made


def main(capsys, *args) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_judge_then_list_ratings_export(db, fake_judge, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")    # a line each (narrower, they wrap)
    code, out, err = main(capsys, "arena", "judge", "r", "--judge", "fake", "--threads", "2",
                          "--db", str(db))
    assert code == 0, err
    assert "arena pairwise:fake-judge (pairwise) of run r: done — 18/18 battles over 3 " \
           "queries (18 judged now" in out
    assert "parse failures: 0" in out
    assert "18/18 battles" in err and "done" in err          # the last progress line
    assert fake_judge[0].opts == {"n_threads": 2}
    # the same command resumes: nothing left to judge
    code, out, _ = main(capsys, "arena", "judge", "r", "--judge", "fake", "--db", str(db),
                        "--json")
    data = json.loads(out)
    assert code == 0 and data["judged"] == 0 and data["cached"] == 18 and data["done"] == 18
    assert fake_judge[1].calls == []

    code, out, _ = main(capsys, "arena", "list", "r", "--db", str(db))
    assert code == 0 and "pairwise:fake-judge" in out and "done" in out and "18" in out
    code, out, _ = main(capsys, "arena", "list", "r", "--db", str(db), "--json")
    [info] = json.loads(out)
    assert info["battles"] == 18 and info["judge"] == "fake-judge" and "header" not in info

    code, out, err = main(capsys, "arena", "ratings", "r", "--db", str(db), "--boot", "20",
                          "--json")
    assert code == 0, err
    ratings = json.loads(out)
    assert ratings["arena"] == "pairwise:fake-judge" and ratings["n_battles"] == 18
    assert ratings["reference"] is None and ratings["n_boot"] == 20
    assert ratings["judge_trust"]["line"] == (
        "judged by fake-judge, judge not calibrated (mirage-tui judge calibrate --judge "
        "fake-judge --labels DATASET)")
    assert ratings["judge_trust"]["calibrated"] is False
    systems = ratings["systems"]
    assert len(systems) == 4
    for s in systems:
        assert {"system", "rank", "elo", "elo_lo", "elo_hi", "battles", "win_rate"} <= set(s)
        assert s["battles"] == 9 and s["elo_lo"] <= s["elo"] <= s["elo_hi"]
    # the judge prefers gen-b and answers over "I don't know": gen-b oracle is first
    assert systems[0]["system"] == arena_system("gen-b/mirage@1", "oracle")
    code, out, _ = main(capsys, "arena", "ratings", "r", "--db", str(db), "--boot", "20")
    assert code == 0 and "pairwise:fake-judge" in out and "gen-b/mirage@1 | oracle" in out
    head = out.splitlines()
    assert head[1].startswith("judged by fake-judge, judge not calibrated")
    assert head[2].startswith("judge named for this arena; the default for this data would be "
                              "reference:answer-match (short gold answers")
    assert head[3].startswith("cross-check with em_loose")
    assert head[4].split()[:2] == ["rank", "system"]       # the lines head the table

    out_csv = tmp_path / "b.csv"
    code, out, _ = main(capsys, "arena", "export", "r", "--db", str(db), "--format", "csv",
                        "--out", str(out_csv))
    assert code == 0 and "exported 18 battles" in out
    rows = list(csv.DictReader(out_csv.open(encoding="utf-8")))
    assert len(rows) == 18 and rows[0]["shown"] in ("ab", "ba")
    assert {"query_id", "system_a", "system_b", "winner", "judgment_keys", "raw_ab",
            "probs_ab"} <= set(rows[0])
    assert len(json.loads(rows[0]["judgment_keys"])) == 1
    out_jsonl = tmp_path / "r.jsonl"
    code, out, _ = main(capsys, "arena", "export", "r", "--db", str(db), "--format", "jsonl",
                        "--out", str(out_jsonl), "--what", "ratings", "--boot", "10")
    lines = [json.loads(line) for line in out_jsonl.read_text().splitlines()]
    assert code == 0 and len(lines) == 4 and lines[0]["rank"] == 1 and "elo_lo" in lines[0]


def test_cli_errors_exit_1_with_a_message(db, fake_judge, capsys):
    cases = [
        (("arena", "judge", "nope", "--judge", "fake"), "no run named 'nope'"),
        (("arena", "judge", "r", "--judge", "missing-model"),
         "cannot load judge model 'missing-model'"),
        (("arena", "judge", "r", "--judge", "fake", "--pairs", "reference"),
         "none of its queries has a reference answer"),
        (("arena", "ratings", "r"), "has no arenas yet"),
        (("arena", "list", "nope"), "no run named 'nope'"),
        (("arena", "export", "r", "--arena", "x"), "has no arenas yet"),
    ]
    for args, message in cases:
        code, out, err = main(capsys, *args, "--db", str(db))
        assert code == 1, (args, out, err)
        assert message in err and err.startswith("mirage-tui: error:"), (args, err)
    with pytest.raises(SystemExit) as exit_:        # refused as the command line is read
        main(capsys, "arena", "judge", "r", "--judge", "fake", "--queries", "0", "--db", str(db))
    assert exit_.value.code == 2 and capsys.readouterr().err == (
        "mirage-tui arena judge: --queries 0 is out of range: a whole number from 1 to "
        "1,000,000 (queries judged)\n")
    main(capsys, "arena", "judge", "r", "--judge", "fake", "--db", str(db), "--queries", "1")
    code, _, err = main(capsys, "arena", "ratings", "r", "--arena", "x", "--db", str(db))
    assert code == 1 and "no arena named 'x'" in err and "pairwise:fake-judge" in err
    code, _, err = main(capsys, "arena", "judge", "r", "--judge", "fake", "--order", "both",
                        "--name", "pairwise:fake-judge", "--db", str(db))
    assert code == 1 and "another configuration" in err


def test_reference_arena_ratings_print_the_reference_report(tmp_path, fake_judge, capsys,
                                                             monkeypatch):
    from engine.datasets.importing import import_path
    from testkit.arena import Answerer

    path = tmp_path / "w.db"
    store = Store(path)
    import_path(store, write_lfrqa(tmp_path / "lfrqa"), name="lf")
    answered_run(store, name="lf-run", generators=("good", "meh"), settings=("base",),
             dataset="lf", sample=None,
             answerers={"good": Answerer("good"),
                        "meh": Answerer("meh", decline=lambda t: "number 0" in t)})
    import models.catalog

    monkeypatch.setattr(models.catalog, "load_generator",
                        lambda name, **o: ScriptedJudge(script=against_reference))
    code, out, err = main(capsys, "arena", "judge", "lf-run", "--judge", "fake", "--pairs",
                          "reference", "--db", str(path))
    assert code == 0, err
    assert "12/12 battles over 6 queries" in out and "parse failures: 2" in out
    code, out, err = main(capsys, "arena", "ratings", "lf-run", "--boot", "20", "--db",
                          str(path))
    assert code == 0, err
    assert "reference:fake-judge" in out and "win+tie rate" in out and "no-answer" in out
    assert "science" in out and "fiqa" in out
    code, out, _ = main(capsys, "arena", "ratings", "lf-run", "--boot", "20", "--json",
                        "--db", str(path))
    data = json.loads(out)
    assert "reference" in data["order"] and data["reference"]["queries"] == 6
    good = data["reference"]["contestants"][0]
    assert good["system"] == arena_system("good/mirage@1", "base")
    assert (good["wins"], good["ties"], good["n"]) == (5, 1, 6)


def test_surrogate_command_reports_or_fails_cleanly(db, fake_judge, capsys):
    main(capsys, "arena", "judge", "r", "--judge", "fake", "--db", str(db))
    code, out, err = main(capsys, "arena", "surrogate", "r", "--db", str(db), "--boot", "10",
                          "--json")
    # four contestants is a tiny surrogate; it must either report or say why, in one line
    if code == 0:
        assert isinstance(json.loads(out), dict)
    else:
        assert code == 1 and err.startswith("mirage-tui: error:")


@pytest.mark.slow
def test_real_smollm2_judges_a_tiny_run_through_the_cli(tmp_path, capsys):
    """SmolLM2-135M (label probabilities from one forward pass) judges 3 queries × 1 pair."""
    path = tmp_path / "w.db"
    store = Store(path)
    ensure_demo(store)
    answered_run(store, settings=("oracle",))
    code, out, err = main(capsys, "arena", "judge", "r", "--judge", SMOL, "--threads", "2",
                          "--db", str(path), "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["status"] == "done" and summary["total"] == summary["done"] == 3
    assert summary["queries"] == 3 and summary["judge_calls"] == 3
    rows = store.query("SELECT winner, parse_failures, detail FROM battles")
    assert len(rows) == 3
    for r in rows:      # a verdict, or a counted parse failure
        assert r["winner"] in ("a", "b", "tie") or r["parse_failures"] == 1
        order = json.loads(r["detail"])["orders"][0]
        assert order["method"] == "logits" and abs(sum(order["probs"].values()) - 1) < 1e-6
    header = json.loads(store.query("SELECT header FROM arenas")[0][0])
    assert header["judge"]["name"] == SMOL and len(header["judge"]["sha256"]) == 64
    assert header["judge"]["device"] in ("cpu", "gpu")
    code, out, err = main(capsys, "arena", "ratings", "r", "--db", str(path), "--json",
                          "--boot", "50")
    assert code == 0, err
    ratings = json.loads(out)
    assert ratings["n_battles"] + ratings["parse_failures"] == 3
    assert sorted(s["system"] for s in ratings["systems"]) == [
        arena_system("gen-a/mirage@1", "oracle"), arena_system("gen-b/mirage@1", "oracle")]
    assert all(s["battles"] == ratings["n_battles"] for s in ratings["systems"])


def test_judge_only_the_listed_settings(db, fake_judge, capsys):
    code, out, err = main(capsys, "arena", "judge", "r", "--judge", "fake", "--settings",
                          "oracle", "--name", "oracle-only", "--db", str(db), "--json")
    assert code == 0, err
    assert json.loads(out)["done"] == 3                       # 2 contestants: 1 pair × 3 queries
    code, _, err = main(capsys, "arena", "judge", "r", "--judge", "fake", "--settings",
                        "oracle,retrieved@3", "--db", str(db))
    assert code == 1 and "no contestants in retrieved@3" in err


def test_without_judge_the_arena_uses_the_config_then_the_calibrated_default(db, fake_judge,
                                                                             capsys):
    from engine.app_config import config_path

    # nothing named, the demo queries have short gold answers: the run's own scorer judges
    code, out, err = main(capsys, "arena", "judge", "r", "--db", str(db), "--json")
    assert code == 0, err
    assert "judging with reference:answer-match in random order (no --judge, no judge in " \
           "config.toml)" in err
    summary = json.loads(out)
    assert summary["arena"] == "pairwise:reference:answer-match" and summary["done"] == 18
    code, out, _ = main(capsys, "arena", "ratings", "r", "--db", str(db), "--boot", "10")
    assert code == 0 and "judged by reference:answer-match: the run's own EM_loose" in out
    assert "the default judge for this data: short gold answers" in out
    # the judge in config.toml comes before the calibrated default; --order still applies
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('judge = "fake"\n')
    try:
        code, out, err = main(capsys, "arena", "judge", "r", "--db", str(db), "--json",
                              "--order", "both")
    finally:
        path.unlink()
    assert code == 0, err
    assert json.loads(out)["arena"] == "pairwise:fake-judge:both" and "judging with" not in err


def test_each_command_looks_the_run_up_by_name_once(db, fake_judge, capsys, monkeypatch,
                                                    tmp_path):
    """A command loads its run once and hands the ``RunInfo`` down: the arena functions never
    look the same run up again by name (issue 28)."""
    import re

    lookups: list[str] = []
    by_name = re.compile(r"\bFROM runs\b.*\bname = 'r'", re.IGNORECASE | re.DOTALL)
    connect = Store._connect

    def traced(self):
        conn = connect(self)
        conn.set_trace_callback(lambda sql: lookups.append(sql) if by_name.search(sql) else None)
        return conn

    monkeypatch.setattr(Store, "_connect", traced)
    commands = [
        ("judge", "r", "--judge", "fake", "--settings", "base,oracle", "--json"),
        ("ratings", "r", "--boot", "5"),
        ("ratings", "r", "--boot", "5", "--json"),
        ("export", "r", "--what", "ratings", "--boot", "5", "-o", str(tmp_path / "r.csv")),
        ("export", "r", "-o", str(tmp_path / "b.csv")),
        ("list", "r"),
    ]
    for command in commands:
        lookups.clear()
        code, _, err = main(capsys, "arena", *command, "--db", str(db))
        assert code == 0, err
        assert len(lookups) == 1, (command, lookups)
