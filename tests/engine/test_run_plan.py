"""A run's plan: its size, its order (one model at a time; a query's settings together, so a
retrieved@3 prompt extends its retrieved@1 prompt) and the names it refuses with what exists.

Fakes only at the edge: a scripted generator that counts its calls and a retriever that ranks a
query's pool backwards; the store, the engine and the metrics are real."""

from __future__ import annotations

import pytest
from testkit.runs import SMOL, BackwardsRetriever, FakeGenerator, config

from engine.runs import execute, plan_named


def test_plan_size_and_order_share_prefixes(demo):
    cfg = config(generators=["g1", "g2"], sample=4,
                 settings=["oracle", "retrieved@3", "mixed", "base", "retrieved@1"],
                 retrievers=["r"])
    plan = plan_named(demo, cfg, check_models=False)
    assert plan.count == 4 * 2 * 5 == len(plan.items)
    assert plan.settings == ["base", "retrieved@1:r", "retrieved@3:r", "mixed", "oracle"]
    order = [(i.system.generator, i.query_rowid, plan.setting_of(i)) for i in plan.items]
    assert [g for g, _, _ in order] == ["g1"] * 20 + ["g2"] * 20      # one model at a time
    assert [q for _, q, _ in order[:20]] == [q for q in plan.queries for _ in range(5)]
    # executed: each retrieved@3 prompt extends its retrieved@1 prompt's first chunk
    gens = {"g1": FakeGenerator("g1"), "g2": FakeGenerator("g2")}
    summary = execute(demo, plan, generators=gens, retrievers={"r": BackwardsRetriever(demo)})
    assert summary.status == "done" and summary.generated == 40
    calls = gens["g1"].calls
    for q in range(4):
        base, r1, r3, mixed, oracle = calls[5 * q:5 * q + 5]
        assert "Answer : \n" in base and "Context : 1. " in r1
        prefix = r1.split("\n\nAnswer :")[0]
        assert r3.startswith(prefix + "\n2. ")
    stored = {r[0] for r in demo.query("SELECT DISTINCT setting FROM run_items")}
    assert stored == {"base", "oracle", "mixed", "retrieved@1:backwards#00000000",
                      "retrieved@3:backwards#00000000"}


def test_unknown_models_and_datasets_are_named_with_what_exists(demo):
    with pytest.raises(LookupError, match="no-such-model.*available generators: .*smollm2"):
        plan_named(demo, config(generators=["no-such-model"]))
    with pytest.raises(LookupError, match="retriever 'nope'.*available embedders: .*minilm"):
        plan_named(demo, config(generators=[SMOL], settings=["retrieved@1"], retrievers=["nope"]))
    with pytest.raises(LookupError, match="no dataset named 'nope' \\(known: demo\\)"):
        plan_named(demo, config(dataset="nope"))
