"""The report reads a run as columns (issue 15): every number equals what the item-by-item
path (:func:`engine.results.records.load_items`, one object per item) gives."""

from __future__ import annotations

import math
from collections import defaultdict

import pytest

from engine.metrics.adaptability import adaptability
from engine.results.records import LOOSE_METRIC, load_columns, load_items, load_run
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
    report = build_report(toy, "toy-run", n_boot=200, seed=3)
    items = _by_items(toy)
    checked = 0
    for entry in report.systems:
        settings = items[entry["run_system"]]
        mixed = entry["mixed_setting"]
        trio = ("base", "oracle", mixed)
        triples, labels = defaultdict(list), defaultdict(lambda: defaultdict(list))
        for q in sorted({q for s in trio for q in settings[s]}):
            found = [settings[s].get(q) for s in trio]
            if all(i is not None and i.loose is not None for i in found):
                triples[getattr(found[0], attr) or "?"].append(tuple(i.loose for i in found))
        for s in trio:
            for item in settings[s].values():
                labels[getattr(item, attr) or "?"][s].append(item.loose)
        groups = entry[f"by_{attr}"]
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
    report = build_report(toy, "toy-run", n_boot=300, seed=5)
    items = _by_items(toy)
    for system in (A, B):
        for setting, by_query in items[system].items():
            columns = {m: [i.scores.get(m) for i in by_query.values()]
                       for m in ("em_loose", "f1_mirage", "no_answer", "correct_language")}
            want = intervals(columns, n_boot=300, seed=5)
            got = report.metrics[system][setting]
            for m, est in want.items():
                assert got[m] == pytest.approx(est.as_json(), abs=1e-9), (system, setting, m)
    assert RET in report.metrics[A]
