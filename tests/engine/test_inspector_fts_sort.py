"""The inspector's text search (FTS5 trigram indexes kept by triggers) and its sorts by any
column (issue 18 item 13, issue 15): keyset pages in every order concatenate to the whole
filtered set, a search finds what a substring test finds whatever the user types, and the
query plans never scan the item or score tables."""

from __future__ import annotations

import pytest
import sqlite_utils

from engine.results.inspector import (SORT_KEYS, count_items_for, count_query, item_cursor,
                                      items_for, items_sql, page_query, sort_value)
from engine.results.records import setting_rank_sql
from engine.runs.lookup import load_run
from testkit.query_plans import assert_no_scans, plan
from testkit.toy_run import A, B

# the aliases of run_items and scores in the inspector's queries (m: the search's matches)
TABLE_ALIASES = {"ri", "rb", "ro", "rm", "sl", "lb", "lo", "lm", "sm", "m"}

# what users type: query syntax, quotes, operators, wildcards, columns, SQL
NASTY = ['"', '""', "AND", "a OR b", "*", "ans*", "NEAR(ans", "text:ans", "'; DROP TABLE x; --",
         'It is "ans', "^It", "(ans1)", "-ans", "%", "_", "\\"]


def _everything(store, **filters):
    return items_for(store, load_run(store, "toy-run"), limit=10**6, **filters)


def _all_pages(store, size, **args):
    """Every page of ``size`` items, each asked for after the last row of the one before."""
    rows, after = [], None
    while len(page := items_for(store, load_run(store, "toy-run"), limit=size, after=after, **args)) == size:
        rows += page
        after = item_cursor(page[-1], args.get("sort"))
    return rows + page


def _contains(rows, text):
    low = text.lower()
    return [r for r in rows if low in r.query.lower() or low in (r.response or "").lower()
            or r.query_id == text]


@pytest.mark.parametrize("text", ["ans3", "ANS3", "do not", "What is q", "It is ans", "q3",
                                  "know.", "zzz-nothing"])
def test_search_finds_what_a_substring_test_finds(toy, text):
    expected = _contains(_everything(toy), text)
    assert _everything(toy, search=text) == expected
    assert count_items_for(toy, load_run(toy, "toy-run"), search=text) == len(expected)
    # both plans (from the matches, or the ordered walk checking each item) agree
    run = load_run(toy, "toy-run")
    for first in (True, False):
        sql, params = page_query(toy, run.id, limit=10**6, search=text)
        if len(text) >= 3:
            body = items_sql(toy, run.id, search=text, search_first=first)
            sql, params = (f"SELECT {body.columns} {body.body} ORDER BY ri.system, "
                           f"ri.query_rowid, {body.rank}", body.params)
        rows = toy.query(sql, tuple(params))
        assert [(r["system"], r["query_rowid"], r["setting"]) for r in rows] == \
            [(r.system, r.query_rowid, r.setting) for r in expected]


def test_search_finds_a_query_id(toy):
    rows = _everything(toy, search="q8")
    assert rows and {r.query_id for r in rows} == {"q8"}


@pytest.mark.parametrize("text", NASTY)
def test_search_quotes_whatever_the_user_types(toy, text):
    # never an FTS5 syntax error; the text is searched for as it is
    assert _everything(toy, search=text) == _contains(_everything(toy), text)
    count_items_for(toy, load_run(toy, "toy-run"), search=text)


def test_search_combines_with_filters_and_pages_by_key(toy):
    filters = {"system": A, "language": "en", "search": "ans"}
    everything = _everything(toy, **filters)
    assert everything == [r for r in _contains(_everything(toy), "ans")
                          if r.system == A and r.language == "en"]
    assert _all_pages(toy, 3, **filters) == everything


def test_the_indexes_follow_writes_and_are_back_filled(toy):
    from engine.store.migrations.later import m011_text_search

    assert _everything(toy, search="platypus") == []
    run = load_run(toy, "toy-run")
    key = toy.query("SELECT generation_key FROM run_items WHERE run_id = ? AND system = ? "
                    "AND setting = 'base' AND query_rowid = 102", (run.id, A))[0][0]
    with toy.write() as db:
        db.conn.execute("UPDATE generations SET text = 'A Platypus, surely.' WHERE key = ?",
                        (key,))
    hits = _everything(toy, search="platypus")
    assert [(r.system, r.setting, r.query_id) for r in hits] == [(A, "base", "q2")]
    assert _everything(toy, search="I do not know") != [] and \
        all(r.generation_key != key for r in _everything(toy, search="I do not know"))
    with toy.write() as db:  # a question edited, then a new generation written
        db.conn.execute("UPDATE queries SET text = 'Which wombat?' WHERE id = 105")
    assert {r.query_id for r in _everything(toy, search="wombat")} == {"q5"}
    assert _everything(toy, search="What is q5") == []
    # an existing workspace: the migration builds the indexes from what is stored
    _drop_text_indexes(toy)
    with toy.write() as db:
        m011_text_search(sqlite_utils.Database(db.conn))
    assert {r.query_id for r in _everything(toy, search="wombat")} == {"q5"}
    assert [(r.system, r.query_id) for r in _everything(toy, search="platypus")] == [(A, "q2")]
    # a deleted generation leaves the index (its item keeps no response)
    with toy.write() as db:
        db.conn.execute("UPDATE run_items SET generation_key = NULL WHERE generation_key = ?",
                        (key,))
        db.conn.execute("DELETE FROM scores WHERE generation_key = ?", (key,))
        db.conn.execute("DELETE FROM generations WHERE key = ?", (key,))
    assert _everything(toy, search="platypus") == []
    assert toy.query("SELECT COUNT(*) FROM generations_fts WHERE generations_fts MATCH "
                     "'\"platypus\"'")[0][0] == 0


def _drop_text_indexes(store) -> None:
    with store.write() as db:
        for name in ("queries_fts", "generations_fts"):
            db.conn.execute(f"DROP TABLE {name}")
            for suffix in ("insert", "delete", "update"):
                db.conn.execute(f"DROP TRIGGER {name}_{suffix}")


def test_without_the_indexes_a_search_is_a_like_scan(toy):
    # an SQLite without the trigram tokenizer: the migration made no indexes
    want = {t: _everything(toy, search=t) for t in ("ans3", "DO NOT", '"')}
    _drop_text_indexes(toy)
    for text, rows in want.items():
        assert _everything(toy, search=text) == rows
        assert count_items_for(toy, load_run(toy, "toy-run"), search=text) == len(rows)


# ----------------------------------------------------------------------------- sorting

SORT_FILTERS = [{}, {"system": B}, {"category": "noise_vulnerable"}, {"search": "ans"},
                {"metric": "em_loose", "min_value": 0.0, "max_value": 1.0}]


def _expected_order(store, rows, sort, descending):
    run = load_run(store, "toy-run")
    _, ranks = setting_rank_sql(r[0] for r in store.query(
        "SELECT DISTINCT setting FROM run_items WHERE run_id = ?", (run.id,)))

    def key(r):
        value = ranks[r.setting] if sort == "setting" else sort_value(r, sort)
        return (value, r.system, r.query_rowid, ranks[r.setting])

    return sorted(rows, key=key, reverse=descending)


@pytest.mark.parametrize("filters", SORT_FILTERS, ids=lambda f: ",".join(f) or "none")
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("sort", SORT_KEYS)
def test_pages_in_every_sort_make_the_whole_filtered_set_in_order(toy, sort, descending,
                                                                  filters):
    everything = _everything(toy, **filters)
    expected = _expected_order(toy, everything, sort, descending)
    assert _everything(toy, sort=sort, descending=descending, **filters) == expected
    for size in (1, 4):
        paged = _all_pages(toy, size, sort=sort, descending=descending, **filters)
        keys = [(r.system, r.setting, r.query_rowid) for r in paged]
        assert len(keys) == len(set(keys))
        assert paged == expected


def test_an_unknown_sort_is_named(toy):
    with pytest.raises(ValueError, match=r"unknown sort 'colour' \(one of system, setting"):
        items_for(toy, load_run(toy, "toy-run"), sort="colour")


PLAN_CASES = ([({"search": "ans3"}, None), ({"search": "It is", "system": A}, None),
               ({"search": "ans", "category": "noise_vulnerable"}, "em")]
              + [({}, s) for s in SORT_KEYS] + [({"setting": "mixed", "language": "de"}, s)
                                                for s in SORT_KEYS])


@pytest.mark.parametrize("filters,sort", PLAN_CASES,
                         ids=lambda v: (",".join(v) or "none") if isinstance(v, dict) else str(v))
def test_search_and_sort_plans_never_scan_items_or_scores(toy, filters, sort):
    run = load_run(toy, "toy-run")
    cursor = ("", A, 100, "base") if sort not in (None, "system") else (A, 100, "base")
    if sort == "em":
        cursor = (0.0, A, 100, "base")
    queries = [page_query(toy, run.id, limit=101, sort=sort, **filters),
               page_query(toy, run.id, limit=101, sort=sort, descending=True, after=cursor,
                          **filters),
               count_query(toy, run.id, **filters)]
    for first in (True, False):  # both plans of a search
        sql = items_sql(toy, run.id, search_first=first, **filters)
        queries.append((f"SELECT {sql.columns} {sql.body} ORDER BY ri.system LIMIT 101",
                        sql.params))
    for text, params in queries:
        assert_no_scans(toy, text, params, TABLE_ALIASES)
    if sort in (None, "system") and not filters.get("search"):
        # the index's order: at most the settings of one (system, query) are sorted
        for text, params in queries[:2]:
            assert "USE TEMP B-TREE FOR ORDER BY" not in plan(toy, text, params)
