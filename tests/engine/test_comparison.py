"""engine.results.comparison: the run history's rows, a run's summary and two runs compared,
on real runs made by the engine (scripted generators at the edge) and on reports built by
hand where an exact number matters."""

from __future__ import annotations

import pytest

from engine.datasets.demo_pool import ensure_demo
from engine.results import build_report
from engine.results.adaptability_rows import AdaptabilityRow
from engine.results.report import ItemCounts, ReportConfig, RunReport, SampleNote
from engine.runs.header import RunHeader
from engine.runs.lookup import load_run
from engine.stats import Estimate
from engine.results.comparison import (RunRow, compare_reports, comparison_segments, plain,
                                       run_row, run_rows, summary_segments)
from testkit.arena import answered_run
from testkit.report_rows import adaptability_row

ROLES = {"title", "heading", "header", "strong", "note", ""}


def est(value, lo=None, hi=None, n=6) -> Estimate:
    return Estimate(value, lo, hi, n)


system = adaptability_row


def report(run: str, accuracy: dict, systems: list[AdaptabilityRow], dataset: str = "demo@1",
           **extra) -> RunReport:
    fields = {"items": ItemCounts(12, 12, 12, 0, 0, 0), "partial": False,
              "sample": None, "notes": [], **extra}
    return RunReport(run=run, status="done", dataset=dataset, header=RunHeader.from_json({}),
                     config=ReportConfig.of({}), systems=systems, accuracy=accuracy, metrics={}, retrieval=[],
                     n_boot=200, seed=0, **fields)


LEFT = report("alpha", {"a/mirage@1": {"base": est(0.5, 0.2, 0.8), "mixed": est(1 / 3, 0.0, 2 / 3)},
                        "b/mirage@1": {"base": est(0.1, 0.0, 0.3)}},
              [system("a/mirage@1", nv=(0.5, 0.2, 0.8), overall=(-0.2, -0.5, 0.1))])
RIGHT = report("beta", {"a/mirage@1": {"mixed": est(2 / 3, 1 / 3, 1.0), "oracle": est(1.0)},
                        "c/mirage@1": {"base": est(0.0)}},
               [system("a/mirage@1", nv=(0.9, 0.85, 1.0), overall=(0.3, 0.1, 0.5))])


def test_compare_reports_pairs_what_both_runs_have():
    c = compare_reports(LEFT, RIGHT)
    assert (c.left, c.right, c.left_dataset, c.right_dataset) == ("alpha", "beta", "demo@1",
                                                                  "demo@1")
    assert [(e.system, e.what) for e in c.accuracy] == [("a/mirage@1", "mixed")]
    mixed = c.accuracy[0]
    assert mixed.delta == pytest.approx(100 / 3) and mixed.overlap is True
    assert c.only_left == ["b/mirage@1"] and c.only_right == ["c/mirage@1"]
    # every adaptability share of the one system both runs have, in the report's order
    assert [e.what for e in c.adaptability] == ["nv", "ca", "ci", "cm", "overall"]
    nv = c.adaptability[0]
    assert nv.a == est(0.5, 0.2, 0.8) and nv.delta == pytest.approx(40.0)
    assert nv.overlap is False                    # [0.2, 0.8] and [0.85, 1.0]
    ca = c.adaptability[1]
    assert ca.delta is None and ca.overlap is None  # no value, no CI: nothing to say


def test_comparison_text_has_delta_overlap_and_one_sided_systems():
    segments = comparison_segments(compare_reports(LEFT, RIGHT))
    assert segments[0] == ("Comparing alpha (A) with beta (B)", "title")
    assert all(role in ROLES for _, role in segments)
    text = plain(segments)
    assert text.startswith("Comparing alpha (A) with beta (B) on demo@1\n")
    row = next(line for line in text.splitlines() if line.startswith("a/mirage@1  mixed"))
    assert "33.3 [0.0, 66.7] n=6" in row and "66.7 [33.3, 100.0] n=6" in row
    assert "+33.3" in row and row.endswith("CIs overlap")
    nv = next(line for line in text.splitlines() if " NV↓ " in line)
    assert "+40.0" in nv and nv.endswith("CIs apart")
    assert ("only in alpha: b/mirage@1\n", "note") in segments
    assert ("only in beta: c/mirage@1\n", "note") in segments
    headers = [t for t, role in segments if role == "header"]
    assert headers[0].split() == ["system", "setting", "A", "alpha", "B", "beta", "Δ"]


def test_comparison_of_different_datasets_and_nothing_in_common():
    other = report("gamma", {"z/mirage@1": {"base": est(0.5)}}, [], dataset="xquad.de@1")
    segments = comparison_segments(compare_reports(LEFT, other))
    assert ("\nDifferent datasets: demo@1 vs xquad.de@1.", "strong") in segments
    text = plain(segments)
    assert "(no system × setting in common)" in text
    assert "(no system with adaptability in both runs)" in text


def test_summary_of_a_partial_run_with_a_sample():
    partial = report("alpha", LEFT.accuracy, LEFT.systems, partial=True,
                     sample=SampleNote("sample", 6, 60, 0),
                     items=ItemCounts(10, 12, 10, 0, 0, 2), notes=["a note"])
    segments = summary_segments(partial)
    assert segments[0] == ("alpha · demo@1 · done · 10/12 items", "title")
    assert ("\nPARTIAL: 2 items pending; numbers cover the items stored so far.",
            "strong") in segments
    text = plain(segments)
    assert "A sample of 6 of 60 queries (seed 0)." in text
    assert "200 resamples" in text
    assert "50.0 [20.0, 80.0] n=6" in text
    # the overall score says what it means where it is shown (issue 36)
    assert ("Overall↑ = CA − NV − CI − CM = 2·CA − 100: +100 when every query is right both "
            "with the oracle chunk and with the mixed context, −100 when none is") in text
    assert "-20.0 [-50.0, 10.0]" in text
    assert ("note: a note\n", "note") in segments


def test_summary_without_scores_says_so():
    text = plain(summary_segments(report("empty", {}, [])))
    assert "(no scored items yet)" in text
    assert "(no system has base, oracle and a mixed-like setting yet)" in text


def test_run_rows_and_a_real_summary_and_comparison(store):
    ensure_demo(store)
    answered_run(store, "one", settings=("base", "oracle", "mixed"))
    answered_run(store, "two", generators=("gen-a",), settings=("base", "oracle", "mixed"))
    rows = run_rows(store)
    assert [r.name for r in rows] == ["one", "two"]
    one = rows[0]
    assert isinstance(one, RunRow) and one == run_row(store, load_run(store, "one"))
    assert (one.dataset, one.status, one.done, one.total) == ("demo@1", "done", 18, 18)
    assert one.generators == ["gen-a", "gen-b"] and one.settings == ["base", "oracle", "mixed"]
    assert one.devices == ["cpu"] and len(one.created) == 16

    left, right = (build_report(store, load_run(store, n), n_boot=50, seed=0) for n in ("one", "two"))
    summary = plain(summary_segments(left, one))
    assert summary.startswith("one · demo@1 · done · 18/18 items\ncreated ")
    assert "generators gen-a, gen-b · settings base, oracle, mixed" in summary
    c = compare_reports(left, right)
    assert {e.system for e in c.accuracy} == {"gen-a/mirage@1"}
    assert c.only_left == ["gen-b/mirage@1"]
    # the same scripted generator on the same sample: no difference anywhere
    assert all(e.delta == 0 for e in c.accuracy if e.delta is not None)
    assert "only in one: gen-b/mirage@1" in plain(comparison_segments(c))
