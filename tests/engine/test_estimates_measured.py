"""Run time estimates from speeds measured on this machine. The estimate
for a run is checked against a run of a model with a known speed (one that sleeps for every
token and reports those seconds, as llama.cpp reports its timings), a model check's speed is
kept in the store and used after a relaunch, and the Live ETA follows the run's own pace. How
close an estimate comes to the wall-clock time of a real run is measured by
``benchmarks/bench_estimates.py``."""

from __future__ import annotations

import pytest

from engine.datasets.demo_pool import ensure_demo
from engine.runs import execute, plan_named
from engine.model_speeds import latest_model_check, measured_speeds
from engine.runs.estimates import estimate, estimate_remaining, record_model_check
from engine.runs.live_eta import LiveEta
from engine.store import Store
from testkit.runs import SMOL, config
from testkit.timed import TimedGenerator

TIMED = "timed-model"


@pytest.fixture
def demo(tmp_path) -> Store:
    store = Store(tmp_path / "w.db")
    ensure_demo(store)
    return store


def _timed(sha: str) -> TimedGenerator:
    # ~0.08 s an item, as the model reports it
    return TimedGenerator(TIMED, prompt_tps=5000.0, gen_tps=250.0, answer_tokens=6, sha=sha)


@pytest.mark.timeout(240)
def test_the_estimate_matches_a_measured_run_of_a_model_with_known_speed(demo):
    first = plan_named(demo, config(generators=[TIMED], sample=3, name="first"),
                     check_models=False)
    assert execute(demo, first, generators={TIMED: _timed("1" * 64)}).status == "done"
    speed = measured_speeds(demo, [TIMED])[TIMED]
    assert speed.source == "measured (9 generations in the store)"
    assert speed.prompt_tps == pytest.approx(5000.0, rel=0.05)
    assert speed.gen_tps == pytest.approx(250.0, rel=0.05)
    assert speed.answer_tokens == 6 and set(speed.prompt_tokens) == {"base", "oracle", "mixed"}

    # another run of the same model (another build: nothing comes from the cache)
    second = plan_named(demo, config(generators=[TIMED], sample=3, seed=1, name="second"),
                      check_models=False)
    guess = estimate_remaining(demo, second)
    assert guess["items"] == 9
    summary = execute(demo, second, generators={TIMED: _timed("2" * 64)})
    assert summary.status == "done" and summary.generated == 9
    # the seconds the model spent on the second run's items, as it reported them
    (took,) = demo.query_tuples(
        "SELECT SUM(g.seconds) FROM run_items ri JOIN runs r ON r.id = ri.run_id "
        "JOIN generations g ON g.key = ri.generation_key WHERE r.name = 'second'")[0]
    print(f"estimate {guess['seconds']:.3f}s, the model's own {took:.3f}s")
    assert abs(guess["seconds"] - took) <= 0.10 * took, (guess["seconds"], took)


def test_a_model_check_is_kept_and_wins_when_newer_than_the_stored_runs(demo, tmp_path):
    record_model_check(demo, {"name": "smollm2-135m-instruct", "kind": "generator",
                              "ok": True, "device": "cpu", "tokens_per_s": 3.0,
                              "prompt_tokens_per_s": 40.0}, TIMED)
    relaunched = Store(tmp_path / "w.db")            # another process, later
    speed = measured_speeds(relaunched, [TIMED])[TIMED]
    assert speed.source.startswith("model check ") and speed.source.endswith("· cpu")
    assert (speed.prompt_tps, speed.gen_tps) == (40.0, 3.0)
    assert latest_model_check(relaunched, TIMED)["tokens_per_s"] == 3.0

    # a run after the check: its own measured rates are the newer measurement
    with relaunched.write() as db:
        db.conn.execute("UPDATE model_checks SET checked_at = '2020-01-01 00:00:00'")
    plan = plan_named(relaunched, config(generators=[TIMED], sample=2, name="later"),
                    check_models=False)
    execute(relaunched, plan, generators={TIMED: TimedGenerator(TIMED, prompt_tps=2000.0,
                                                                gen_tps=200.0)})
    assert measured_speeds(relaunched, [TIMED])[TIMED].source.startswith("measured")
    # and the estimate of a plan uses whichever is newest
    with relaunched.write() as db:
        db.conn.execute("UPDATE model_checks SET checked_at = '2999-01-01 00:00:00'")
    again = plan_named(relaunched, config(generators=[TIMED], sample=2, seed=3, name="again"),
                     check_models=False)
    guess = estimate_remaining(relaunched, again)
    assert guess["generators"][TIMED]["gen_tps"] == 3.0
    # six answers of ~7 measured tokens at 3 tok/s is at least 12 s
    assert guess["seconds"] > 6 * 6 / 3.0


def test_live_eta_scales_the_estimate_by_the_runs_own_pace(demo):
    plan = plan_named(demo, config(generators=[TIMED], sample=2, name="eta"),
                    check_models=False)
    eta = LiveEta(demo, plan, min_items=2)
    eta.add(plan.queries)
    full = eta.seconds
    assert full == pytest.approx(estimate_remaining(demo, plan, eta.speeds)["seconds"])
    items = plan.items
    eta.done(items[0])                                 # from the store: no model call
    assert eta.seconds == pytest.approx(sum(eta.left.values())) and eta.seconds < full
    first, second = (eta.left[i] for i in items[1:3])
    eta.done(items[1], 2 * first)                      # the run goes at half the speed
    eta.done(items[2], 2 * second)
    assert eta.seconds == pytest.approx(2 * sum(eta.left.values()))


def test_live_eta_keeps_a_pace_per_generator(demo):
    plan = plan_named(demo, config(generators=[TIMED, "other"], sample=2, name="two"),
                    check_models=False)
    eta = LiveEta(demo, plan, min_items=1)
    eta.add(plan.queries)
    mine = [i for i in plan.items if i.system.generator == TIMED]
    other = [i for i in plan.items if i.system.generator == "other"]
    left_other = sum(eta.left[i] for i in other)
    eta.done(mine[0], 3 * eta.left[mine[0]])           # TIMED goes three times slower
    left_mine = sum(eta.left[i] for i in mine[1:])
    # "other" has not started: it takes the pace seen so far
    assert eta.seconds == pytest.approx(3 * left_mine + 3 * left_other)
    eta.done(other[0], 0.5 * eta.left[other[0]])       # "other" goes twice as fast
    left_other = sum(eta.left[i] for i in other[1:])
    assert eta.seconds == pytest.approx(3 * left_mine + 0.5 * left_other)


def test_estimates_use_defaults_then_measured_speeds(demo):
    plan = plan_named(demo, config(generators=[SMOL], sample=4))
    speeds = measured_speeds(demo, [SMOL])
    assert speeds[SMOL].source.startswith("assumed 600/70")
    guess = estimate(demo, plan, speeds)
    assert guess["generators"][SMOL]["items"] == 12 and guess["seconds"] > 12 * 64 / 70
    with demo.write() as db:
        db.conn.executemany(
            "INSERT INTO generations (key, model_key, model_name, prompt, params, text, "
            "prompt_tokens, completion_tokens, prompt_tokens_evaluated, seconds, created_at) "
            "VALUES (?, 'm', ?, 'p', '{}', 't', 100, 10, 100, 1.0, 'now')",
            [(str(i), SMOL) for i in range(3)])
    measured = measured_speeds(demo, [SMOL])[SMOL]
    assert measured.source == "measured (3 generations in the store)"
    assert measured.prompt_tps == pytest.approx(100 + 600 / 70 * 10)
    # with enough rows both rates are fitted: here 200 prompt and 50 generated tokens/s
    with demo.write() as db:
        db.conn.execute("DELETE FROM generations")
        db.conn.executemany(
            "INSERT INTO generations (key, model_key, model_name, prompt, params, text, "
            "prompt_tokens, completion_tokens, prompt_tokens_evaluated, seconds, created_at) "
            "VALUES (?, 'm', ?, 'p', '{}', 't', ?, ?, ?, ?, 'later')",
            [(f"f{i}", SMOL, 50 * i, 5 + i, 50 * i, 50 * i / 200 + (5 + i) / 50)
             for i in range(1, 13)])
    fitted = measured_speeds(demo, [SMOL])[SMOL]
    assert (fitted.prompt_tps, fitted.gen_tps) == (pytest.approx(200), pytest.approx(50))
