"""Estimates a user can plan by. The one estimator
counts requests in flight only where they are batched, counts each model's load, says
"assumed" with its assumption for a model never measured, and the live ETA counts the running
item's elapsed time (it grows while an item overruns instead of freezing), takes the first
item's speed, and says when the machine runs well below the model check's speed. Driven with
a fake clock: no timing assertions."""

from __future__ import annotations

import pytest

from engine.runs import plan_named
from engine.model_speeds import measured_speeds
from engine.runs.estimates import (estimate_remaining, load_seconds, parallel_factor,
                                   record_model_check)
from engine.runs.live_eta import LiveEta, Pace
from testkit.runs import config
from testkit.timed import Clock

TIMED = "timed-model"
ENDPOINT = "http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def own_host_backend(monkeypatch):
    monkeypatch.setenv("MIRAGE_HOST_BACKEND", "llama.cpp")   # whatever binary this machine has


def test_requests_in_flight_speed_up_only_a_batching_backend():
    assert parallel_factor("llama.cpp", 1, 4) == (4, 1.0)          # our host: they queue
    assert parallel_factor("llama-server", 4, 4) == (4, 2.5)
    assert parallel_factor("llama-server", 4, 8) == (8, 2.5)       # no more than its slots
    assert parallel_factor("llama-server", 4, None) == (4, 2.5)    # default: its slots
    assert parallel_factor("http", 8, None) == (8, 4.5)
    assert parallel_factor("http", 8, 1) == (1, 1.0)


def test_the_estimate_divides_by_the_in_flight_factor_where_it_applies(demo):
    def seconds(generator, concurrency):
        plan = plan_named(demo, config(generators=[generator], sample=2, name="f",
                                     concurrency=concurrency), check_models=False)
        return estimate_remaining(demo, plan)["generators"][generator]

    one, four = seconds(ENDPOINT, 1), seconds(ENDPOINT, 4)
    assert (four["in_flight"], four["parallel"], four["backend"]) == (4, 2.5, "http")
    assert four["seconds"] == pytest.approx(one["seconds"] / 2.5)
    local_one, local_four = seconds(TIMED, 1), seconds(TIMED, 4)
    assert local_four["parallel"] == 1.0 and local_four["backend"] == "llama.cpp"
    assert local_four["seconds"] == pytest.approx(local_one["seconds"])


def test_a_models_load_counts_from_its_last_logged_load(demo):
    assert load_seconds(demo, TIMED) == (0.0, "nothing to load")   # no file, no log
    plan = plan_named(demo, config(generators=[TIMED], sample=1, name="loaded"),
                    check_models=False)
    from engine.runs import rows
    from engine.runs.log import log_event

    run_id = rows.save_plan(demo, plan)
    log_event(demo, run_id, "load", f"loaded generator {TIMED} in 7.5s")
    assert load_seconds(demo, TIMED) == (7.5, "its last load here")
    guess = estimate_remaining(demo, plan)["generators"][TIMED]
    assert guess["load_seconds"] == 7.5 and guess["seconds"] > 7.5


def test_the_running_steps_elapsed_time_counts_and_an_overrun_raises_the_eta():
    clock = Clock()
    pace = Pace(clock)
    for step in "abc":
        pace.add(step, 10.0)
    pace.start()
    assert pace.seconds() == 30.0
    clock.now += 4
    assert pace.seconds() == 26.0                    # counts down while "a" runs
    clock.now += 6
    assert pace.seconds() == 20.0                    # "a" reached its estimate
    clock.now += 10                                  # and ran twice as long: the ETA grows
    assert pace.seconds() == pytest.approx(3 * 10 * 2.0 - 20)
    pace.done("a", 20.0)
    assert pace.seconds() == pytest.approx(2 * 10 * 2.0)   # the same figure once it ends
    clock.now += 5
    assert pace.seconds() == pytest.approx(40 - 5)


def test_live_eta_counts_the_running_item_and_the_load_before_it(demo):
    clock = Clock()
    plan = plan_named(demo, config(generators=[TIMED], sample=2, name="run"),
                    check_models=False)
    eta = LiveEta(demo, plan, clock=clock)
    eta.loads[TIMED] = 5.0                           # not loaded yet: its load is still to come
    eta.add(plan.queries)
    items = sum(eta.left.values())
    assert eta.seconds == pytest.approx(items + 5.0)
    eta.start(TIMED)                                 # loaded; the first request goes out
    assert eta.seconds == pytest.approx(items)
    first = eta.left[plan.items[0]]
    clock.now += first / 2
    assert eta.seconds == pytest.approx(items - first / 2)


def test_an_assumed_speed_says_so_and_yields_to_the_first_items_speed(demo):
    speed = measured_speeds(demo, [TIMED])[TIMED]
    assert speed.source.startswith("assumed 600/70 tok/s") and "first item" in speed.source
    plan = plan_named(demo, config(generators=[TIMED], sample=2, name="assumed"),
                    check_models=False)
    eta = LiveEta(demo, plan)
    eta.add(plan.queries)
    eta.done(plan.items[0], 3 * eta.left[plan.items[0]])    # one item, three times slower
    assert eta.seconds == pytest.approx(3 * sum(eta.left.values()))


def test_live_says_the_machine_may_be_busy_when_well_below_the_model_check(demo):
    record_model_check(demo, {"name": TIMED, "kind": "generator", "ok": True, "device": "cpu",
                              "tokens_per_s": 20.0, "prompt_tokens_per_s": 400.0}, TIMED)
    plan = plan_named(demo, config(generators=[TIMED], sample=2, name="busy"),
                    check_models=False)
    eta = LiveEta(demo, plan)
    eta.add(plan.queries)
    first, second = (eta.left[i] for i in plan.items[:2])
    eta.done(plan.items[0], 1.2 * first)
    assert eta.busy_note() is None                   # a little slower: nothing to say
    eta.done(plan.items[1], 9.0 * second)
    ratio = (1.2 * first + 9.0 * second) / (first + second)
    assert ratio > 2.5 and eta.slowdown(TIMED) == pytest.approx(ratio)
    assert eta.busy_note() == (f"running {ratio:.0f}× slower than {TIMED}'s model check: "
                               "machine busy?")


def test_the_first_generations_own_timers_set_the_speed_of_the_items_left(demo):
    from models.base import Generation

    plan = plan_named(demo, config(generators=[TIMED], sample=2, name="respeed"),
                    check_models=False)
    eta = LiveEta(demo, plan)
    eta.add(plan.queries)
    first, rest = plan.items[0], plan.items[1:]
    guessed = eta.tokens[first]
    # the first item evaluated twice the prompt tokens guessed, at 50 tok/s, and generated 10
    # tokens at 5 tok/s; its wall time is its model time (no overhead)
    evaluated, prompt_s, gen_s = 2 * guessed, 2 * guessed / 50, 10 / 5
    generation = Generation(text="x", prompt_tokens=int(evaluated), completion_tokens=10,
                            prompt_tokens_evaluated=evaluated, seconds=prompt_s + gen_s,
                            finish_reason="stop", device="cpu",
                            extra={"prompt_seconds": prompt_s, "generation_seconds": gen_s})
    eta.done(first, prompt_s + gen_s, generation)
    expected = sum(2 * eta.tokens[i] / 50 + 10 / 5 for i in rest)
    assert eta.seconds == pytest.approx(expected)
