"""Reading a run by pages in SQL (issue 15): the inspector's keyset pages and counts agree with
one big page, and their query plans never scan the item or score tables."""

from __future__ import annotations

import pytest

from engine.results.inspector import (count_items_for, count_query, items_for, page_query)
from engine.runs.lookup import load_run
from testkit.query_plans import assert_no_scans
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
    everything = items_for(toy, load_run(toy, "toy-run"), limit=10**6, **filters)
    paged, after = [], None
    while True:
        page = items_for(toy, load_run(toy, "toy-run"), limit=4, after=after, **filters)
        paged += page
        if len(page) < 4:
            break
        last = page[-1]
        after = (last.system, last.query_rowid, last.setting)
    assert paged == everything
    assert count_items_for(toy, load_run(toy, "toy-run"), **filters) == len(everything)


def test_search_finds_questions_and_responses(toy):
    hits = items_for(toy, load_run(toy, "toy-run"), search="q3", limit=100)
    assert hits and all(r.query_id == "q3" or "q3" in (r.query + (r.response or ""))
                        for r in hits)
    assert items_for(toy, load_run(toy, "toy-run"), search="no such text %_", limit=100) == []


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: ",".join(f) or "none")
def test_page_and_count_queries_never_scan_items_or_scores(toy, filters):
    run = load_run(toy, "toy-run")
    queries = [page_query(toy, run.id, limit=101, **filters),
               page_query(toy, run.id, limit=101, after=(B, 3, "oracle"), **filters),
               count_query(toy, run.id, **filters)]
    for text, params in queries:
        plan = assert_no_scans(toy, text, params, TABLE_ALIASES)
        # ordered by the index: at most the settings of one (system, query) are sorted
        assert not any(line == "USE TEMP B-TREE FOR ORDER BY" for line in plan), plan


# --------------------------------------------------------------------------- run counters


def _counts_both(store, name):
    from engine.results.records import item_counts, load_items, stored_counts

    run = load_run(store, name)
    return stored_counts(store, run), item_counts(run, load_items(store, run, metrics=()))


def test_run_counters_follow_every_write_and_are_back_filled(toy):
    from engine.runs.rows import write_error, write_item
    from engine.store.migrations.first import m006_run_counts
    import sqlite_utils

    stored, counted = _counts_both(toy, "toy-run")
    assert stored == counted and counted.errors == 1 and counted.done > 0
    run = load_run(toy, "toy-run")
    # a failed item, then the same item generated (the error row replaced), then a new one
    q = toy.query("SELECT id FROM queries ORDER BY id")[0][0]
    write_error(toy, run.id, ("gen-c/mirage@1", "base", q), None, "boom")
    assert _counts_both(toy, "toy-run")[0] == _counts_both(toy, "toy-run")[1]
    key = toy.query("SELECT generation_key FROM run_items WHERE generation_key IS NOT NULL "
                    "LIMIT 1")[0][0]

    class Prompt:
        text, context, truncated = "p", [1], True

    write_item(toy, run.id, ("gen-c/mirage@1", "base", q), key, Prompt())
    stored, counted = _counts_both(toy, "toy-run")
    assert stored == counted and stored.truncated == counted.truncated >= 1
    with toy.write() as db:
        db.conn.execute("DELETE FROM run_items WHERE run_id = ? AND system = ?",
                        (run.id, "gen-c/mirage@1"))
    stored, counted = _counts_both(toy, "toy-run")
    assert stored == counted
    # an existing workspace: the migration counts what is stored
    with toy.write() as db:
        db.conn.execute("DROP TABLE run_counts")
        m006_run_counts(sqlite_utils.Database(db.conn))
    assert _counts_both(toy, "toy-run")[0] == counted
    with toy.write() as db:
        db.conn.execute("DELETE FROM runs WHERE id = ?", (run.id,))
    assert toy.query("SELECT COUNT(*) FROM run_counts WHERE run_id = ?", (run.id,))[0][0] == 0
