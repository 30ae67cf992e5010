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
from engine.arena.judging.estimate import judging_estimate
from engine.machine_load import MachineLoad
from engine.runs import execute, plan_named
from engine.model_speeds import (CHARS_PER_TOKEN, DEFAULT_GEN_TPS, DEFAULT_PROMPT_TPS,
                                 JUDGE_TAIL_TOKENS, JUDGE_TEMPLATE_TOKENS, measured_speeds)
from engine.runs.estimates import estimate_remaining, record_model_check
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
    plan = plan_named(store, config(generators=[ALIAS], sample=2, seed=seed, name=name),
                    check_models=False)
    summary = execute(store, plan, generators={ALIAS: ScriptedGenerator(SMOL, usage=timed)})
    assert summary.status == "done" and summary.generated == 6
    return plan


def next_plan(store: Store, name: str = "next"):
    return plan_named(store, config(generators=[ALIAS], sample=2, seed=5, name=name),
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


# four calls on one query, two seconds each: the first evaluates its text's tokens and the
# template's, the three after it only their answers and the template's tail (the query and
# its documents are in the prompt cache); each a verdict token at the defaults' ratio
VERDICT = DEFAULT_PROMPT_TPS / DEFAULT_GEN_TPS
JUDGED_TPS = (2000 / CHARS_PER_TOKEN + JUDGE_TEMPLATE_TOKENS + VERDICT
              + 3 * (400 / CHARS_PER_TOKEN + JUDGE_TAIL_TOKENS + VERDICT)) / (4 * 2.0)


def test_judge_calls_are_a_measurement_of_the_judge(demo):
    judge_calls(demo)
    speed = measured_speeds(demo, [ALIAS])[ALIAS]
    assert speed.source == "measured judging (4 judge calls in the store)"
    assert speed.prompt_tps == pytest.approx(JUDGED_TPS)
    # a run after the judging is the newer measurement
    run_alias(demo, "later")
    assert measured_speeds(demo, [ALIAS])[ALIAS].source.startswith("measured (6 generations")
    judge_calls(demo, when=datetime.now(timezone.utc) + timedelta(hours=1))
    speed = measured_speeds(demo, [ALIAS])[ALIAS]
    assert speed.source.startswith("measured judging")
    # judge calls time prompts: the run's generation rate, at the judging's pace
    assert speed.gen_tps == pytest.approx(GEN_TPS * speed.prompt_tps / PROMPT_TPS, rel=0.01)


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
    assert found.how in ("quick probe", "load average")      # under a second: a quick one


def test_a_loaded_local_model_is_warmed_up_before_the_first_item(demo, monkeypatch):
    """The first call after a load runs several times slower than the next: a run warms the
    model it loads (one token), so its first item's pace is its own, not the load's."""
    import models.catalog

    model = ScriptedGenerator(SMOL, usage=timed, backend="llama.cpp")   # as a local model
    monkeypatch.setattr(models.catalog, "load_generator", lambda name, **kw: model)
    plan = plan_named(demo, config(generators=[ALIAS], sample=1, name="warm"),
                    check_models=False)
    assert execute(demo, plan).status == "done"
    assert len(model.calls) == 1 + plan.count
    assert model.calls[0] == "<user>Hello." and "Hello." not in model.calls[1]


def test_items_that_stalled_barely_move_the_measured_speed():
    """Six items of a run at 30 prompt / 20 generated tokens a second, and two that stalled
    (a burst of other work, 15× and 4× slower): the robust fit times a query's three items
    (base, oracle, mixed) within 10% of the six's rates; plain least squares made it 2.2×."""
    from engine.model_speeds import _fitted
    from engine.runs.estimates import call_seconds

    def row(evaluated, generated, slower=1.0):
        return evaluated, generated, slower * (evaluated / 30 + generated / 20)

    clean = [row(45, 17), row(820, 32), row(200, 32), row(55, 9), row(915, 32), row(240, 14)]
    exact = _fitted(clean, "x")
    assert (exact.prompt_tps, exact.gen_tps) == (pytest.approx(30.0), pytest.approx(20.0))
    speed = _fitted(clean + [row(50, 20, slower=15.0), row(840, 32, slower=4.0)], "x")
    query = [(50, 20), (200, 25), (850, 32)]
    took = sum(call_seconds(p, a, exact) for p, a in query)
    assert sum(call_seconds(p, a, speed) for p, a in query) == pytest.approx(took, rel=0.10)


def test_judging_counts_the_prompt_cache_of_a_querys_next_battles(demo):
    """A battle on the query of the battle before it evaluates only its answers (the query and
    its documents are in the judge's prompt cache); a new query, the whole prompt again."""
    from engine.arena.judging.estimate import judge_call_costs

    sizes = {"first": (2000, 1600, "q1"), "next": (2000, 1600, "q1"),
             "other query": (2000, 1600, "q2")}
    costs, _ = judge_call_costs(demo, ALIAS, sizes, 1, None)
    assert costs["next"] < costs["first"] / 2 and costs["other query"] == costs["first"]
    both, _ = judge_call_costs(demo, ALIAS, {"first": (2000, 1600, "q1")}, 2, None)
    assert both["first"] == pytest.approx(costs["first"] + costs["next"])   # the other order


def test_the_first_items_pace_is_weighed_against_a_measured_speed(demo):
    """From the first item on the ETA follows the run's own speeds; where the estimate before
    the run came from a measurement here (not an assumption), one item is weighed against it
    as against PRIOR_ITEMS items."""
    from engine.runs.estimates import call_seconds
    from engine.runs.live_eta import PRIOR_ITEMS, LiveEta
    from models.base import Generation

    record_model_check(demo, {"name": SMOL, "kind": "generator", "ok": True, "device": "cpu",
                              "tokens_per_s": 20.0, "prompt_tokens_per_s": 400.0}, ALIAS)
    plan = next_plan(demo)
    eta = LiveEta(demo, plan, clock=lambda: 100.0)   # a clock that stands still
    eta.add(plan.queries)
    eta.start(ALIAS)                                 # loaded: its requests go out
    first, rest = plan.items[0], plan.items[1:]
    prior = {i: eta.left[i] for i in rest}
    guessed = eta.tokens[first]
    prompt_s, gen_s = guessed / 50, 10 / 5          # at 50 / 5 tok/s, no overhead
    eta.done(first, prompt_s + gen_s, Generation(
        text="x", prompt_tokens=int(guessed), completion_tokens=10,
        prompt_tokens_evaluated=guessed, seconds=prompt_s + gen_s, finish_reason="stop",
        device="cpu", extra={"prompt_seconds": prompt_s, "generation_seconds": gen_s}))
    for item in rest:
        own = eta.tokens[item] / 50 + 10 / 5
        assert eta.left[item] == pytest.approx((PRIOR_ITEMS * prior[item] + own)
                                               / (PRIOR_ITEMS + 1))
    assert eta.seconds == pytest.approx(sum(eta.left.values()))
    assert call_seconds(guessed, 10, eta.speeds[ALIAS]) < prompt_s + gen_s   # it was slower


def test_judgings_first_battles_are_weighed_against_a_measured_speed(workspace):
    """Judging's pace weighs its first battles against the estimate as the runs' does: with
    the judge's speed measured here, one battle three times slower than estimated makes the
    rest (2 + 3) / 3 times slower; with an assumed speed, three times."""
    from engine.arena.judging.estimate import judging_pace
    from engine.arena.judging.plan import plan_jobs, run_contestants
    from engine.runs.live_eta import PRIOR_ITEMS

    store = Store(workspace["path"])
    run = load_run(store, "beta")
    jobs = plan_jobs(store, run.id, mode="pairwise", contestants=run_contestants(store, run.id),
                     reference=None, queries=2, seed=0)[0]

    def slowed(pace) -> float:
        left = dict(pace.left)
        first = next(iter(left))
        pace.done(first, 3 * left.pop(first))
        return pace.seconds() / sum(left.values())

    assert slowed(judging_pace(store, ALIAS, jobs, "random", None)) == pytest.approx(3.0)
    judge_calls(store)
    assert slowed(judging_pace(store, ALIAS, jobs, "random", None)) == pytest.approx(
        (PRIOR_ITEMS + 3) / (PRIOR_ITEMS + 1))
