"""A run's progress events (throttled, with the accuracy so far) and its scores (citations for a
cited template; stale scores redone without generating again)."""

from __future__ import annotations

from testkit.runs import FakeGenerator, config, run

from engine.runs import SCORER_MARK


def test_progress_is_throttled_and_reports_accuracy(demo):
    events = []
    run(demo, config(), progress=events.append, min_interval=60)
    assert len(events) <= 3 and events[-1].status == "done"
    last = events[-1]
    assert (last.done, last.total, last.new) == (18, 18, 18)
    assert set(last.detail.accuracy["fake-gen/mirage@1"]) == {"base", "oracle", "mixed"}
    assert all(n == 6 for _, n in last.detail.accuracy["fake-gen/mirage@1"].values())
    every = []
    run(demo, config(name="again"), progress=every.append, min_interval=0)
    assert len(every) >= 18 and every[-1].cached == 18


def test_cited_template_scores_citations_and_stale_scores_are_redone(demo):
    _, summary = run(demo, config(template="mirage-bench", sample=2))
    metrics = {r[0] for r in demo.query("SELECT DISTINCT metric FROM scores")}
    assert "citations" in metrics and SCORER_MARK in metrics
    with demo.write() as db:
        db.conn.execute("UPDATE scores SET detail = 'answer-0' WHERE metric = ?", (SCORER_MARK,))
        db.conn.execute("DELETE FROM scores WHERE metric = 'em_strict'")
    again = FakeGenerator()
    _, second = run(demo, config(template="mirage-bench", sample=2), {"fake-gen": again})
    assert again.calls == []
    assert demo.query("SELECT COUNT(*) FROM scores WHERE metric = 'em_strict'")[0][0] == 6
    assert demo.query("SELECT COUNT(DISTINCT detail) FROM scores WHERE metric = ?",
                      (SCORER_MARK,))[0][0] == 1
