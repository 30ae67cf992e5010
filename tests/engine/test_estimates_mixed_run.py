"""Estimates on a mixed run of two models of different speeds: items the generation cache
holds cost nothing (a plan of stored items is ~0 s), and Live's remaining time, driven item by
item with a fake clock through a run that goes from a fast model to a slow one, lands near
the time really left after 5% of the items and then moves smoothly: no halving or doubling
within seconds as the run reaches the slow model. Models report their times; nothing sleeps."""

from __future__ import annotations

import pytest

from engine.runs import execute, plan_named
from engine.runs.estimates import estimate_remaining, likely_cached
from engine.runs.live_eta import SMOOTH_S, LiveEta
from models.base import Generation
from mirage_tui.widgets.estimates import estimate_line
from testkit.runs import config
from testkit.scripted import ScriptedGenerator
from testkit.timed import Clock

FAST, SLOW = "fast-model", "slow-model"
SPEEDS = {FAST: (2000.0, 200.0), SLOW: (100.0, 10.0)}   # prompt / generated tokens a second
ANSWER = 8
OVERHEAD = 0.4            # seconds an item takes beyond its model's (prompt, scores, store)
SETTINGS = ["oracle", "mixed"]


@pytest.fixture(autouse=True)
def own_host_backend(monkeypatch):
    monkeypatch.setenv("MIRAGE_HOST_BACKEND", "llama.cpp")   # one request at a time


def _reported(name: str):
    prompt_tps, gen_tps = SPEEDS[name]

    def usage(text: str):
        evaluated = len(text) // 4 + 1
        return evaluated, ANSWER, evaluated, evaluated / prompt_tps + ANSWER / gen_tps
    return usage


def _measured_before(store) -> None:
    """Each model's speed measured in this workspace by an earlier run (seed 0)."""
    plan = plan_named(store, config(generators=[FAST, SLOW], settings=SETTINGS, sample=3,
                                    seed=0, max_tokens=ANSWER, name="before"),
                      check_models=False)
    gens = {name: ScriptedGenerator(name, sha=str(i) * 64, usage=_reported(name))
            for i, name in enumerate((FAST, SLOW), start=1)}
    assert execute(store, plan, generators=gens).status == "done"


def test_items_the_generation_cache_holds_cost_no_model_time(demo):
    _measured_before(demo)
    again = plan_named(demo, config(generators=[FAST, SLOW], settings=SETTINGS, sample=3,
                                    seed=0, max_tokens=ANSWER, name="again"),
                       check_models=False)
    assert likely_cached(demo, again) == set(again.items)
    guess = estimate_remaining(demo, again)
    assert guess["seconds"] == 0 and guess["items"] == 0 and guess["cached"] == again.count
    assert "12 more likely in the generation cache (no model time)" in estimate_line(guess)
    # other sampling (more tokens an answer): another generation, not in the cache
    longer = plan_named(demo, config(generators=[FAST, SLOW], settings=SETTINGS, sample=3,
                                     seed=0, max_tokens=ANSWER + 1, name="longer"),
                        check_models=False)
    assert likely_cached(demo, longer) == set()
    assert estimate_remaining(demo, longer)["seconds"] > 0
    # a plan half in the cache: only the other half is timed
    wider = plan_named(demo, config(generators=[FAST, SLOW], settings=SETTINGS, sample=6,
                                    seed=0, max_tokens=ANSWER, name="wider"),
                       check_models=False)
    cached = likely_cached(demo, wider)
    assert 0 < len(cached) < wider.count
    assert estimate_remaining(demo, wider)["items"] == wider.count - len(cached)


def _simulate(store, eta: LiveEta, plan, clock: Clock, slower: dict | None = None
              ) -> tuple[list, float]:
    """Run the plan's items in execute's order (a model's items, then the next model's),
    each taking its model time at the model's true speed (``slower``: that many times below
    its measured one) plus OVERHEAD; the ETA read every half second. Returns ``[(clock,
    eta, items done)]`` and the run's length."""
    readings = []
    done = 0
    for name in plan.config.generators:
        eta.start(name)
        prompt_tps, gen_tps = (tps / (slower or {}).get(name, 1.0) for tps in SPEEDS[name])
        for item in [i for i in plan.items if i.system.generator == name]:
            evaluated = eta.tokens[item]
            prompt_s, gen_s = evaluated / prompt_tps, ANSWER / gen_tps
            wall = prompt_s + gen_s + OVERHEAD
            end = clock.now + wall
            while clock.now + 0.5 < end:
                clock.now += 0.5
                readings.append((clock.now, eta.seconds, done))
            clock.now = end
            eta.done(item, wall, Generation(
                text="x", prompt_tokens=int(evaluated), completion_tokens=ANSWER,
                prompt_tokens_evaluated=int(evaluated), seconds=prompt_s + gen_s,
                finish_reason="stop", device="cpu",
                extra={"prompt_seconds": prompt_s, "generation_seconds": gen_s}))
            done += 1
            readings.append((clock.now, eta.seconds, done))
    return readings, clock.now


@pytest.mark.parametrize("slow_is", [1.0, 2.0], ids=["as-measured", "twice-slower"])
def test_lives_remaining_time_lands_near_and_moves_smoothly_across_two_models(demo, slow_is):
    """The fast model's items spend most of their time beyond the model (prompt, scores,
    store): that time is the same for the slow model's items, not a multiple of them. With
    the slow model running twice below its measured speed, the ETA rises when its first
    items show it, over seconds."""
    _measured_before(demo)
    plan = plan_named(demo, config(generators=[FAST, SLOW], settings=SETTINGS, sample=10,
                                   seed=7, max_tokens=ANSWER, name="mixed"),
                      check_models=False)
    clock = Clock()
    eta = LiveEta(demo, plan, clock=clock, smooth_s=SMOOTH_S)
    eta.loads = {name: 0.0 for name in eta.loads}
    eta.add(plan.queries)
    assert not likely_cached(demo, plan)          # other queries: every item is timed
    readings, took = _simulate(demo, eta, plan, clock, {SLOW: slow_is})
    five = max(1, round(0.05 * plan.count))
    after = [r for r in readings if r[2] >= five]
    for (t0, eta0, _), (t1, eta1, _) in zip(after, after[1:]):
        counted_down = max(0.0, eta0 - (t1 - t0))
        # within half a second to a few seconds, never halved nor doubled
        assert 0.75 * counted_down - 0.5 <= eta1 <= 1.25 * counted_down + 0.5, (t0, eta0, eta1)
    switch = sum(1 for i in plan.items if i.system.generator == FAST)
    if slow_is == 1.0:
        at, first, _ = after[0]
        assert first == pytest.approx(took - at, rel=0.25)
        # when the slow model starts, the time left is still about right
        at, when, _ = next(r for r in readings if r[2] >= switch)
        assert when == pytest.approx(took - at, rel=0.25)
    # halfway through the slow model's items the ETA has caught up with its pace
    half = switch + (plan.count - switch) // 2
    at, when, _ = next(r for r in readings if r[2] >= half)
    assert when == pytest.approx(took - at, rel=0.25)


def test_each_settings_prompts_are_sized_by_its_own_timed_items(demo):
    """An oracle prompt came out as guessed, a mixed one three times longer: the items left
    of each setting are costed at their own setting's size."""
    plan = plan_named(demo, config(generators=[FAST], settings=SETTINGS, sample=4, seed=3,
                                   max_tokens=ANSWER, name="sized"), check_models=False)
    eta = LiveEta(demo, plan, clock=Clock())
    eta.add(plan.queries)
    oracle = [i for i in plan.items if i.kind == "oracle"]
    mixed = [i for i in plan.items if i.kind == "mixed"]

    def finish(item, times: float) -> None:
        evaluated = eta.tokens[item] * times
        prompt_s, gen_s = evaluated / 100.0, ANSWER / 10.0
        eta.done(item, prompt_s + gen_s, Generation(
            text="x", prompt_tokens=int(evaluated), completion_tokens=ANSWER,
            prompt_tokens_evaluated=evaluated, seconds=prompt_s + gen_s,
            finish_reason="stop", device="cpu",
            extra={"prompt_seconds": prompt_s, "generation_seconds": gen_s}))

    finish(oracle[0], 1.0)
    finish(mixed[0], 3.0)
    assert eta.left[oracle[1]] == pytest.approx(eta.tokens[oracle[1]] / 100.0 + ANSWER / 10.0)
    assert eta.left[mixed[1]] == pytest.approx(3 * eta.tokens[mixed[1]] / 100.0 + ANSWER / 10.0)
