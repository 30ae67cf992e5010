"""Reading a run by pages in SQL (issue 15): the inspector's keyset pages and counts agree with
one big page, and their query plans never scan the item or score tables."""

from __future__ import annotations

import pytest

from engine.results.inspector import (count_items_for, count_query, items_for, page_query)
from engine.results.records import load_run
from testkit.toy_run import A, B, RET

FILTERS = [
    {},
    {"system": A},
    {"setting": "mixed", "category": "noise_vulnerable"},
    {"system": A, "pattern": "b0o0m0", "mixed_setting": RET},
    {"language": "de", "source": "wiki"},
    {"metric": "em_loose", "min_value": 1.0, "max_value": 1.0},
    {"category": "context_acceptable", "pattern": "b0o1m1"},
    {"category": "context_acceptable", "pattern": "b0o0m0"},
    {"search": "q3"},
]

# the aliases of run_items and scores in the inspector's queries
TABLE_ALIASES = {"ri", "rb", "ro", "rm", "sl", "lb", "lo", "lm", "sm"}


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: ",".join(f) or "none")
def test_keyset_pages_and_counts_agree_with_one_big_page(toy, filters):
    everything = items_for(toy, "toy-run", limit=10**6, **filters)
    paged, after = [], None
    while True:
        page = items_for(toy, "toy-run", limit=4, after=after, **filters)
        paged += page
        if len(page) < 4:
            break
        last = page[-1]
        after = (last.system, last.query_rowid, last.setting)
    assert paged == everything
    assert count_items_for(toy, "toy-run", **filters) == len(everything)


def test_search_finds_questions_and_responses(toy):
    hits = items_for(toy, "toy-run", search="q3", limit=100)
    assert hits and all(r.query_id == "q3" or "q3" in (r.query + (r.response or ""))
                        for r in hits)
    assert items_for(toy, "toy-run", search="no such text %_", limit=100) == []


def _plan(store, text, params) -> list[str]:
    return [r[3] for r in store.query(f"EXPLAIN QUERY PLAN {text}", tuple(params))]


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: ",".join(f) or "none")
def test_page_and_count_queries_never_scan_items_or_scores(toy, filters):
    run = load_run(toy, "toy-run")
    queries = [page_query(toy, run.id, limit=101, **filters),
               page_query(toy, run.id, limit=101, after=(B, 3, "oracle"), **filters),
               count_query(toy, run.id, **filters)]
    for text, params in queries:
        plan = _plan(toy, text, params)
        assert any(line.startswith("SEARCH ri USING") for line in plan), plan
        scans = [line for line in plan if line.startswith("SCAN")
                 and line.split()[1] in TABLE_ALIASES]
        assert not scans, plan
        # ordered by the index: at most the settings of one (system, query) are sorted
        assert not any(line == "USE TEMP B-TREE FOR ORDER BY" for line in plan), plan
