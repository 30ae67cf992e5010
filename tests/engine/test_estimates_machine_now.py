"""Estimates from the machine as it is now (issue 36, item 1): before the first item, the speed
last measured in this workspace for the model under any of its names (a run, a model check, a
judging), the newest winning; corrected for the machine's load at the start against the load
it was measured under, and saying so; judging at the judge's own measured prompt speed. The
models report their times (no sleeping) and the load is set by the test: no wall clock."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from engine import machine_load
from engine.arena.judging_time import judging_estimate
from engine.machine_load import MachineLoad
from engine.runs import execute, plan_run
from engine.runs.estimates import (CHARS_PER_TOKEN, DEFAULT_GEN_TPS, DEFAULT_PROMPT_TPS,
                                   JUDGE_TEMPLATE_TOKENS, estimate_remaining,
                                   measured_speeds, record_model_check)
from engine.runs.lookup import load_run
from engine.store import Store
from engine.store.arenas import save_judgment
from mirage_tui.widgets.estimates import estimate_line, judging_line
from testkit.runs import SMOL, config
from testkit.scripted import ScriptedGenerator

ALIAS = "smollm2"                     # what a user types; the store keeps SMOL
PROMPT_TPS, GEN_TPS = 50.0, 5.0
BUSY = MachineLoad(1.0, 2, "1-second probe")


def timed(text: str):
    """Usage as a model of PROMPT_TPS / GEN_TPS reports it (seconds, no sleeping)."""
    evaluated = len(text) // 8 + 1
    return len(text) // 4 + 1, 10, evaluated, evaluated / PROMPT_TPS + 10 / GEN_TPS


def run_alias(store: Store, name: str, seed: int = 0):
    plan = plan_run(store, config(generators=[ALIAS], sample=2, seed=seed, name=name),
                    check_models=False)
    summary = execute(store, plan, generators={ALIAS: ScriptedGenerator(SMOL, usage=timed)})
    assert summary.status == "done" and summary.generated == 6
    return plan


def next_plan(store: Store, name: str = "next"):
    return plan_run(store, config(generators=[ALIAS], sample=2, seed=5, name=name),
                    check_models=False)


def load_is(monkeypatch, load: MachineLoad) -> None:
    monkeypatch.setattr(machine_load, "load_now", lambda wait=True: load)


def test_a_run_under_the_catalog_name_is_the_measured_speed_of_the_name_typed(demo):
    before = measured_speeds(demo, [ALIAS])[ALIAS]
    assert before.source.startswith("assumed 600/70 tok/s")
    run_alias(demo, "first")
    speed = measured_speeds(demo, [ALIAS])[ALIAS]
    assert speed.source == "measured (6 generations in the store)"
    assert speed.prompt_tps == pytest.approx(PROMPT_TPS, rel=0.01)
    assert speed.gen_tps == pytest.approx(GEN_TPS, rel=0.01)
    guess = estimate_remaining(demo, next_plan(demo))["generators"][ALIAS]
    assert guess["prompt_tps"] == pytest.approx(PROMPT_TPS, rel=0.01)
    assert "assumed" not in estimate_line({"seconds": 1, "items": 6, "generators": {ALIAS: guess}})


def test_the_estimate_is_corrected_for_the_load_now_and_says_so(demo, monkeypatch, idle_machine):
    run_alias(demo, "first")                        # measured on an idle machine
    plan = next_plan(demo)
    idle = estimate_remaining(demo, plan)
    note = idle["generators"][ALIAS]["load_note"]
    assert note == ("machine load now 0.0 other busy cores of 2 (idle in tests), as when "
                    "measured: no correction")
    load_is(monkeypatch, BUSY)                      # one of the two cores busy now
    busy = estimate_remaining(demo, plan)
    g = busy["generators"][ALIAS]
    assert g["load_factor"] == pytest.approx(1.5)
    assert g["prompt_tps"] == pytest.approx(PROMPT_TPS / 1.5, rel=0.01)
    assert busy["seconds"] == pytest.approx(1.5 * idle["seconds"])
    assert g["load_note"] == ("machine load now 1.0 other busy core of 2 (1-second probe): "
                              "×1.50 against 0.0 when measured")
    assert g["load_note"] in estimate_line(busy)


def test_a_speed_measured_under_load_is_not_corrected_again_under_the_same_load(demo,
                                                                               monkeypatch):
    load_is(monkeypatch, BUSY)
    plan = run_alias(demo, "busy-run")
    header = json.loads(demo.query("SELECT header FROM runs WHERE name = 'busy-run'")[0][0])
    assert header["sessions"][-1]["load"] == {"others": 1.0, "cpus": 2, "how": "1-second probe"}
    assert measured_speeds(demo, [ALIAS])[ALIAS].load == BUSY
    g = estimate_remaining(demo, next_plan(demo))["generators"][ALIAS]
    assert g["load_factor"] == pytest.approx(1.0) and "as when measured" in g["load_note"]
    # the machine is quiet now: the measured speed was slowed by the load, now it is not
    load_is(monkeypatch, MachineLoad(0.0, 2, "1-second probe"))
    g = estimate_remaining(demo, next_plan(demo))["generators"][ALIAS]
    assert g["load_factor"] == pytest.approx(1 / 1.5)
    assert g["prompt_tps"] == pytest.approx(1.5 * PROMPT_TPS, rel=0.01)
    assert plan.count == 6


def test_a_model_check_keeps_its_load_and_the_newest_measurement_wins(demo, monkeypatch):
    run_alias(demo, "first")
    load_is(monkeypatch, BUSY)
    record_model_check(demo, {"name": SMOL, "kind": "generator", "ok": True, "device": "cpu",
                              "tokens_per_s": 4.0, "prompt_tokens_per_s": 30.0}, ALIAS)
    speed = measured_speeds(demo, [ALIAS])[ALIAS]       # the check is the newest
    assert speed.source.startswith("model check ") and speed.load == BUSY
    assert (speed.prompt_tps, speed.gen_tps) == (30.0, 4.0)
    with demo.write() as db:                            # the run came after the check
        db.conn.execute("UPDATE model_checks SET checked_at = '2020-01-01 00:00:00'")
    assert measured_speeds(demo, [ALIAS])[ALIAS].source.startswith("measured (")


def judge_calls(store: Store, n: int = 4, seconds: float = 2.0, when: datetime | None = None):
    """``n`` judge calls of SMOL, each on 2,000 bytes of text, read from label probabilities
    in ``seconds``."""
    fields = {"query": "q" * 400, "documents": "d" * 1200, "answer_a": "a" * 200,
              "answer_b": "b" * 200}
    stamp = (when or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    for i in range(n):
        save_judgment(store, f"judgment-{i}-{stamp}", "j" * 64, SMOL, "pairwise@1", fields,
                      "A", {"A": 0.9, "B": 0.1}, "logits", None, False, None, seconds, stamp)


# one call: its text's tokens and the template's, and a verdict token at the defaults' ratio
JUDGED_TPS = (2000 / CHARS_PER_TOKEN + JUDGE_TEMPLATE_TOKENS
              + DEFAULT_PROMPT_TPS / DEFAULT_GEN_TPS) / 2.0


def test_judge_calls_are_a_measurement_of_the_judge(demo):
    judge_calls(demo)
    speed = measured_speeds(demo, [ALIAS])[ALIAS]
    assert speed.source == "measured judging (4 judge calls in the store)"
    assert speed.prompt_tps == pytest.approx(JUDGED_TPS)
    # a run after the judging is the newer measurement
    run_alias(demo, "later")
    assert measured_speeds(demo, [ALIAS])[ALIAS].source.startswith("measured (6 generations")
    judge_calls(demo, when=datetime.now(timezone.utc) + timedelta(hours=1))
    assert measured_speeds(demo, [ALIAS])[ALIAS].source.startswith("measured judging")


def test_judging_is_estimated_at_the_judges_own_measured_speed(workspace):
    store = Store(workspace["path"])
    run = load_run(store, "beta")
    assumed = judging_estimate(store, run, ALIAS, 2)
    assert assumed["speed"].startswith("assumed 600/70")
    judge_calls(store)
    guess = judging_estimate(store, run, ALIAS, 2)
    assert guess["speed"] == "measured judging (4 judge calls in the store)"
    assert guess["prompt_tps"] == pytest.approx(JUDGED_TPS)
    line = judging_line(guess)
    assert "assumed" not in line and "no check" not in line
    assert "machine load now" in line


def test_judging_after_a_run_of_the_judge_model_uses_that_run(workspace):
    """The issue's case: the workspace ran smollm2 as a generator; judging with it is timed
    at that run's speed, its prompts sized at the model's measured bytes a token."""
    store = Store(workspace["path"])
    run_alias(store, "smol-run")
    guess = judging_estimate(store, load_run(store, "beta"), ALIAS, 2)
    assert guess["speed"] == "measured (6 generations in the store)"
    assert guess["prompt_tps"] == pytest.approx(PROMPT_TPS, rel=0.01)
    speed = measured_speeds(store, [ALIAS])[ALIAS]
    assert speed.bytes_per_token == pytest.approx(4.0, rel=0.05)   # timed(): len // 4 + 1


def test_the_load_model_and_the_probe():
    assert MachineLoad(0.0, 2, "x").slowdown() == 1.0
    assert MachineLoad(2.0, 2, "x").slowdown() == 2.0
    assert machine_load.correction(None, BUSY) == 1.5             # unknown then: idle
    assert machine_load.correction(BUSY, None) == 1.0             # unknown now: as measured
    assert MachineLoad.from_json(BUSY.as_json()) == BUSY
    assert MachineLoad.from_json({"cpus": 2}) is None
    found = machine_load.probe(0.1)
    assert found is not None and found.others >= 0 and found.cpus >= 1
    assert found.how in ("1-second probe", "load average")
