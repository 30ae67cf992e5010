"""A run's sample of queries: a seeded stratified order whose every prefix is proportional to
the strata, and a longer sample extending a shorter one. Adaptive sampling is in
test_run_adaptive.py. Real store and engine; the demo pool."""

from __future__ import annotations

from testkit.runs import config

from engine.runs import plan_named, stratified_order
from engine.runs.sampling import allocation


def test_stratified_order_is_seeded_and_every_prefix_is_proportional():
    strata = [("s1", "en")] * 50 + [("s2", "en")] * 30 + [("s1", "de")] * 15 + [("s3", "es")] * 5
    order = stratified_order(strata, seed=3)
    assert sorted(order) == list(range(100))
    assert order == stratified_order(strata, seed=3)
    assert order != stratified_order(strata, seed=4)
    sizes = {("s1", "en"): 50, ("s2", "en"): 30, ("s1", "de"): 15, ("s3", "es"): 5}
    for n in range(1, 101):
        counts = allocation(strata, order, n)
        for key, size in sizes.items():
            assert abs(counts.get(key, 0) - n * size / 100) < 1.0 + 1e-9, (n, key)
    assert allocation(strata, order, 20) == {("s1", "en"): 10, ("s2", "en"): 6,
                                             ("s1", "de"): 3, ("s3", "es"): 1}


def test_a_sample_is_stratified_and_a_longer_one_extends_it(demo):
    small = plan_named(demo, config(sample=9), check_models=False)
    large = plan_named(demo, config(sample=30, name="t2"), check_models=False)
    assert large.queries[:9] == small.queries
    langs = [r[0] for r in demo.query(
        f"SELECT language FROM queries WHERE id IN ({','.join(map(str, small.queries))})")]
    assert sorted(langs) == ["de"] * 3 + ["en"] * 3 + ["es"] * 3
    every = plan_named(demo, config(sample=None, name="all"), check_models=False)
    assert every.queries == sorted(every.queries) and len(every.queries) == 60
