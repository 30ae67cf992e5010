"""Adaptive sampling: batches until the confidence intervals are narrow enough (or the budget is
spent), reusing the same order, and ``adaptive_until="difference"``: until the paired 95% CI of
two systems' EM difference excludes 0."""

from __future__ import annotations

import json

import pytest
from testkit.runs import FakeGenerator, config, run

from engine.runs import ConfigError
from engine.runs.sampling import ci_half_widths


def test_adaptive_sampling_stops_at_the_target_and_reuses_batches(demo):
    labels = {"s": {"base": {q: q % 2 for q in range(400)},
                    "oracle": {q: 1 for q in range(400)},
                    "mixed": {q: int(q % 3 > 0) for q in range(400)}}}
    widths = ci_half_widths(labels)
    assert set(widths) == {f"s | mixed | {m}" for m in ("nv", "ca", "ci", "cm")}
    assert all(w < 0.06 for w in widths.values())
    # all agree (every item context insensitive): the bootstrap collapses, Wilson does not
    flat = ci_half_widths({"s": {"base": {0: 0, 1: 0}, "oracle": {0: 0, 1: 0},
                                 "mixed": {0: 0, 1: 0}}})
    assert flat["s | mixed | ci"] > 0.3

    cfg = config(sample=None, adaptive_target=0.25, adaptive_batch=10, budget=40, name="ad")
    gen = FakeGenerator()
    plan, summary = run(demo, cfg, {"fake-gen": gen})
    assert plan.batches()[0] == plan.queries[:10] and len(plan.queries) == 40
    assert summary.status == "done" and summary.queries in (10, 20, 30, 40)
    header = json.loads(demo.query("SELECT header FROM runs WHERE name = 'ad'")[0][0])
    assert header["adaptive"]["stop_reason"] in ("target reached", "budget spent")
    assert header["total_items"] == summary.total == 3 * summary.queries
    if summary.stop_reason == "target reached":
        assert max(summary.half_widths.values()) < 0.25
    again = FakeGenerator()
    _, rerun = run(demo, cfg, {"fake-gen": again})
    assert again.calls == [] and rerun.queries == summary.queries
    # an unreachable target spends the budget, extending the same order
    tight = config(sample=None, adaptive_target=0.001, adaptive_batch=10, budget=25,
                   name="tight")
    plan2, spent = run(demo, tight)
    assert spent.stop_reason == "budget spent" and spent.queries == 25
    assert plan2.queries[:10] == plan.queries[:10]


def test_adaptive_until_the_paired_difference_is_decided(demo):
    """``adaptive_until="difference"`` (issue 16): sample batches until the paired 95% CI of
    the second system's EM minus the first's excludes 0, or the budget is spent."""
    answers = [a for (text,) in demo.query("SELECT answers FROM queries")
               for a in json.loads(text)]

    class Knows(FakeGenerator):           # every gold answer of the pool: always right
        def generate(self, messages, params):
            generation = super().generate(messages, params)
            generation.text = " ".join(answers)
            return generation

    class Dunno(FakeGenerator):           # never right
        def generate(self, messages, params):
            generation = super().generate(messages, params)
            generation.text = "I don't know"
            return generation

    cfg = config(generators=["dunno", "knows"], sample=None, adaptive_until="difference",
                 adaptive_batch=10, budget=40, name="diff")
    _, decided = run(demo, cfg, {"dunno": Dunno("dunno"), "knows": Knows("knows")})
    assert decided.status == "done" and decided.stop_reason == "difference decided"
    assert decided.queries == 10                                 # the first batch decides it
    header = json.loads(demo.query("SELECT header FROM runs WHERE name = 'diff'")[0][0])
    found = header["adaptive_difference"]
    assert (found["a"], found["b"], found["n"]) == ("dunno/mirage@1", "knows/mirage@1", 10)
    assert found["difference"] == 1.0 and found["lo"] > 0
    assert header["adaptive"]["stop_reason"] == "difference decided"

    # two systems that answer alike never decide: the budget is spent
    same = config(generators=["fake-a", "fake-b"], sample=None, adaptive_until="difference",
                  adaptive_batch=10, budget=30, name="same")
    _, spent = run(demo, same, {"fake-a": FakeGenerator("fake-a"),
                                "fake-b": FakeGenerator("fake-b")})
    assert spent.stop_reason == "budget spent" and spent.queries == 30

    with pytest.raises(ConfigError, match="needs two generators"):
        config(sample=None, adaptive_until="difference")
