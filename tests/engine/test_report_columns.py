"""The report reads a run as columns (issue 15): every number equals what the item-by-item
path (:func:`engine.results.records.load_items`, one object per item) gives."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest

from engine.metrics.adaptability import adaptability
from engine.results.records import LOOSE_METRIC, load_columns, load_items
from engine.runs.lookup import load_run
from engine.results.report import build_report
from engine.stats import RATE, interval, intervals
from testkit.toy_run import A, B, RET


def test_columns_hold_every_item_and_its_scores(toy):
    run = load_run(toy, "toy-run")
    cols = load_columns(toy, run)
    items = load_items(toy, run)
    assert len(cols) == len(items) == 61
    by_key = {(i.system, i.setting, i.query_rowid): i for i in items}
    seen = set()
    for (system, setting), span in cols.spans.items():
        rows = cols.query_rowid[span]
        assert list(rows) == sorted(rows)                       # query order inside a span
        for pos, q in zip(range(span.start, span.stop), rows):
            item = by_key[(system, setting, int(q))]
            seen.add((system, setting, int(q)))
            assert cols.failed[pos] == (item.generation_key is None and bool(item.error))
            assert cols.truncated[pos] == item.truncated
            for metric in ("em_loose", "f1_mirage", "correct_language"):
                value = cols.values[metric][pos]
                assert cols.present[metric][pos] == (metric in item.scores)
                expected = item.scores.get(metric)
                assert (math.isnan(value) if expected is None else value == expected)
    assert seen == set(by_key)
    assert "_scorer" not in cols.values                          # a marker, not a metric
    only = load_columns(toy, run, metrics=[LOOSE_METRIC])
    assert set(only.values) == {LOOSE_METRIC}


def _by_items(toy):
    """system -> setting -> query rowid -> item, from the item-by-item path."""
    out = defaultdict(lambda: defaultdict(dict))
    for item in load_items(toy, load_run(toy, "toy-run")):
        out[item.system][item.setting][item.query_rowid] = item
    return out


@pytest.mark.parametrize("attr", ["language", "source"])
def test_breakdowns_equal_the_adaptability_of_each_group(toy, attr):
    report = build_report(toy, load_run(toy, "toy-run"), n_boot=200, seed=3)
    items = _by_items(toy)
    checked = 0
    for entry in report.systems:
        settings = items[entry.run_system]
        mixed = entry.mixed_setting
        trio = ("base", "oracle", mixed)
        triples, labels = defaultdict(list), defaultdict(lambda: defaultdict(list))
        for q in sorted({q for s in trio for q in settings[s]}):
            found = [settings[s].get(q) for s in trio]
            if all(i is not None and i.loose is not None for i in found):
                triples[getattr(found[0], attr) or "?"].append(tuple(i.loose for i in found))
        for s in trio:
            for item in settings[s].values():
                labels[getattr(item, attr) or "?"][s].append(item.loose)
        groups = {g: group.as_json() for g, group in entry.by(attr).items()}
        assert set(groups) == set(labels)
        for group, got in groups.items():
            want = adaptability(triples[group], mixed_setting=mixed).as_json()
            for key in ("n", "patterns", "nv", "ca", "ci", "cm", "overall", "acc_mixed"):
                assert got[key] == pytest.approx(want[key], abs=1e-12), (group, key)
            for key in ("nv_lo", "overall_hi"):
                assert got[key] == pytest.approx(want[key], abs=1e-9)
            for s in trio:
                acc = interval(RATE, labels[group][s]).as_json()
                assert got["accuracy"][s] == pytest.approx(acc, abs=1e-9)
            checked += 1
    assert checked >= 6


def test_metrics_per_setting_equal_the_item_columns(toy):
    report = build_report(toy, load_run(toy, "toy-run"), n_boot=300, seed=5)
    items = _by_items(toy)
    for system in (A, B):
        for setting, by_query in items[system].items():
            columns = {m: [i.scores.get(m) for i in by_query.values()]
                       for m in ("em_loose", "f1_mirage", "no_answer", "correct_language")}
            want = intervals(columns, n_boot=300, seed=5)
            got = report.metrics[system][setting]
            for m, est in want.items():
                assert got[m].as_json() == pytest.approx(est.as_json(), abs=1e-9), \
                    (system, setting, m)
    assert RET in report.metrics[A]


def test_a_metric_of_another_name_is_read_and_reported(toy):
    run = load_run(toy, "toy-run")
    with toy.write() as db:
        keys = [r[0] for r in db.conn.execute(
            "SELECT generation_key FROM run_items WHERE run_id = ? AND system = ? "
            "AND setting = 'oracle' AND generation_key IS NOT NULL", (run.id, A))]
        for n, key in enumerate(keys):
            db.conn.execute("INSERT INTO scores SELECT generation_key, query_rowid, "
                            "'my_metric', ?, NULL FROM run_items WHERE generation_key = ?",
                            (n % 2, key))
    cols = load_columns(toy, run)
    assert int(cols.present["my_metric"].sum()) == len(keys)
    assert np.nansum(cols.values["my_metric"]) == sum(n % 2 for n in range(len(keys)))
    assert cols.values["em_loose"].shape == (61,)
    est = build_report(toy, load_run(toy, "toy-run")).metrics[A]["oracle"]["my_metric"]
    assert est.n == len(keys) and est.value == pytest.approx(
        sum(n % 2 for n in range(len(keys))) / len(keys))


def test_the_reports_reads_use_the_key_and_the_covering_index(toy):
    """A report's two reads: the items in key order (no sort), the scores from the covering
    index ``scores_values`` (never the table rows, never a scan)."""
    run = load_run(toy, "toy-run")
    statements: list[str] = []
    toy.conn.set_trace_callback(statements.append)
    try:
        load_columns(toy, run)
    finally:
        toy.conn.set_trace_callback(None)
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 2, selects
    # the traced statements have their parameters filled in (sqlite3_expanded_sql)
    items_plan, scores_plan = ([row[3] for row in toy.conn.execute("EXPLAIN QUERY PLAN " + sql)]
                               for sql in selects)
    plans = items_plan + scores_plan
    assert not any("TEMP B-TREE" in line for line in items_plan), items_plan
    assert not any(line.startswith("SCAN") for line in plans), plans
    assert any("COVERING INDEX scores_values" in line for line in scores_plan), scores_plan
