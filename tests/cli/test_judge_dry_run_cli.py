"""``arena judge --dry-run [--json]`` judges nothing and says how long
judging should take, from the one estimator (the same figures as the judge dialog's)."""

from __future__ import annotations

import json

import pytest

from engine.arena.judging.estimate import judging_estimate
from engine.runs.lookup import load_run
from engine.store import Store
from mirage_tui.cli import main as cli_main

JUDGE = "smollm2-135m-instruct"


def test_judge_dry_run_json_gives_estimate_s_and_writes_nothing(db, capsys):
    before = _arena_rows(db)
    code = cli_main(["arena", "judge", "beta", "--db", str(db), "--judge", JUDGE,
                     "--queries", "2", "--order", "both", "--concurrency", "4",
                     "--dry-run", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(out)
    store = Store(db)
    expected = judging_estimate(store, load_run(store, "beta"), JUDGE, 2, "both", concurrency=4)
    assert data["estimate_s"] == pytest.approx(expected["seconds"]) and data["estimate_s"] > 0
    assert (data["battles"], data["calls"], data["queries"]) == (6, 12, 2)
    # a local judge reads its verdict from one pass's label probabilities; our host (the
    # suite's in-process model) answers one request at a time: 4 in flight only queue
    assert data["verdict_tokens"] == 1
    assert (data["in_flight"], data["parallel"]) == (4, 1.0)
    assert _arena_rows(db) == before                        # no arena, no battle


def _arena_rows(db) -> tuple[int, int]:
    store = Store(db)
    return tuple(store.query(f"SELECT COUNT(*) FROM {t}")[0][0] for t in ("arenas", "battles"))


def test_judge_dry_run_text_names_the_battles_and_the_estimate(db, capsys):
    code = cli_main(["arena", "judge", "beta", "--db", str(db), "--judge", JUDGE,
                     "--queries", "2", "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith(f"arena judge beta with {JUDGE} (random order): 6 battles on "
                          "2 queries")
    assert "Estimate: about " in out and "load " in out and "verdicts of 1 token(s)" in out
