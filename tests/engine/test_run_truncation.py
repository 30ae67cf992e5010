"""Prompts that do not fit a model's context: context chunks dropped from the end, then a clear
error; truncated and impossible items recorded as such in a run."""

from __future__ import annotations

import json

import pytest
from testkit.runs import FakeGenerator, config, run

from engine.runs.prompting import PromptTooLong, fit_prompt, load_queries


def test_truncation_drops_chunks_from_the_end_then_errors(demo):
    from engine.prompts import get_template
    from engine.runs.prompting import load_chunks

    facts = next(iter(load_queries(demo, [demo.query("SELECT MIN(id) FROM queries")[0][0]])
                      .values()))
    chunks = load_chunks(demo, facts.pool)
    template = get_template("mirage")
    full = fit_prompt(FakeGenerator(n_ctx=100_000), template, facts, "mixed", facts.pool,
                      chunks, 64)
    assert not full.truncated and full.context == facts.pool
    per_chunk = full.tokens // 5
    small = FakeGenerator(n_ctx=full.tokens - per_chunk // 2 + 64)
    cut = fit_prompt(small, template, facts, "mixed", facts.pool, chunks, 64)
    assert cut.truncated and cut.context == facts.pool[:4]
    assert cut.tokens + 64 <= small.n_ctx
    with pytest.raises(PromptTooLong, match="even the first context chunk"):
        fit_prompt(FakeGenerator(n_ctx=80), template, facts, "mixed", facts.pool, chunks, 64)
    with pytest.raises(PromptTooLong, match="the question alone"):
        fit_prompt(FakeGenerator(n_ctx=40), template, facts, "base", None, chunks, 64)


def test_truncated_and_impossible_items_are_recorded(demo):
    gen = FakeGenerator(n_ctx=420)      # fits base and oracle, part of mixed
    plan, summary = run(demo, config(sample=3, max_tokens=16), {"fake-gen": gen})
    assert summary.status == "done" and summary.truncated == 3
    items = demo.query("SELECT setting, truncated, context, error FROM run_items")
    mixed = [r for r in items if r["setting"] == "mixed"]
    assert all(r["truncated"] == 1 and 0 < len(json.loads(r["context"])) < 5 for r in mixed)
    assert all(r["truncated"] == 0 for r in items if r["setting"] != "mixed")
    tiny = FakeGenerator(n_ctx=60)
    _, summary = run(demo, config(sample=3, max_tokens=16, name="tiny"), {"fake-gen": tiny})
    assert summary.status == "done" and summary.errors > 0
    errors = demo.query("SELECT error FROM run_items ri JOIN runs r ON r.id = ri.run_id "
                        "WHERE r.name = 'tiny' AND error IS NOT NULL")
    assert all("does not fit" in e[0] or "exceeds the context" in e[0] for e in errors)
