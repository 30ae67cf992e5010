"""Judging for the arena: pairwise (MIRAGE-Bench) and against a reference (RAG-QA Arena).

Fakes only at the edge: the run's answers come from scripted generators through the real run
engine, and the judge is a scripted Generator (``supports_label_probs=False``, so every verdict
is a parsed reply) that counts its calls. The store, the judgments cache, the arena rows and
the reports are real.

The demo run: 3 queries of the demo pool, generators gen-a and gen-b, settings base and
oracle: 4 contestants, 6 pairs a query, 18 battles. An answer names its generator and, with a
context, quotes it; without one it says "I don't know". The default judge prefers gen-b over
gen-a and an answer over "I don't know", whatever the order it sees them in.
"""

from __future__ import annotations

import threading

import pytest
from testkit.arena import (  # noqa: F401
    A_BASE,
    A_ORACLE,
    B_BASE,
    B_ORACLE,
    CONTESTANTS,
    Answerer,
    ScriptedJudge,
    against_reference,
    answered_run,
    prefer_stronger,
    sections,
    strength,
    write_lfrqa,
)

from engine.arena.ratings.battles import (
    ArenaNotFound,
    battle_rows,
    list_arenas,
    load_battles,
    resolve_arena,
)
from engine.arena.judging.job import judge_arena
from engine.arena.judges.orders import combine_orders
from engine.arena.judging.plan import shown_order
from engine.arena.types import ArenaError
from engine.arena.judging.recording import ArenaConfigMismatch
from engine.arena.ratings.reference_report import format_reference_report, reference_report
from engine.arena.types import arena_system
from engine.runs.lookup import RunNotFound, load_run
from engine.stats import wilson_interval
from models.base import ContextOverflow




def answers_of(store) -> dict[tuple[int, str], str]:
    return {(r[0], arena_system(r[1], r[2])): r[3] for r in store.query(
        "SELECT ri.query_rowid, ri.system, ri.setting, g.text FROM run_items ri "
        "JOIN generations g ON g.key = ri.generation_key")}


def expected_winner(a: str, b: str) -> str:
    return "tie" if strength(a) == strength(b) else ("a" if strength(a) > strength(b) else "b")


# --------------------------------------------------------------------------- pairwise

def test_every_pair_is_judged_and_verdicts_map_back_to_the_contestants(demo_run):
    run = load_run(demo_run, "r")
    judge = ScriptedJudge()
    summary = judge_arena(demo_run, run, judge)
    assert summary.status == "done" and summary.arena == "pairwise:fake-judge"
    assert (summary.total, summary.done, summary.judged, summary.queries) == (18, 18, 18, 3)
    assert summary.judge_calls == 18 and summary.cached_calls == 0 and len(judge.calls) == 18
    assert summary.contestants == CONTESTANTS and summary.parse_failures == 0
    battles = load_battles(demo_run, run)
    assert len(battles) == 18
    assert len({(b.query, b.a, b.b) for b in battles}) == 18
    assert all(b.a < b.b for b in battles)            # canonical: sorted
    answers = answers_of(demo_run)
    for b in battles:       # the judge prefers the stronger answer whatever the order shown
        assert b.winner == expected_winner(answers[(b.query, b.a)], answers[(b.query, b.b)])
    shown = {r["shown"] for r in demo_run.query("SELECT shown FROM battles")}
    assert shown == {"ab", "ba"}
    # the judge saw the query's supporting chunks, the oracle first
    first = judge.calls[0].prompt
    docs = sections(first)["Reference documents"]
    assert docs.startswith("[") and "(no documents)" not in docs
    # the arena row: config, header, status
    info = resolve_arena(demo_run, run)
    assert info.status == "done" and info.mode == "pairwise" and info.battles == 18
    assert info.config["template"] == "mirage_bench_pairwise@1"
    assert info.config["order"] == "random" and info.config["seed"] == 0
    header = info.header
    assert header.judge.sha256 == "j" * 64 and header.judge.name == "fake-judge"
    assert header.counts.planned == 18 and header.counts.parse_failures == 0
    assert header.packages["python"] and header.sessions[0].judge_calls == 18
    assert header.run.dataset.startswith("demo@")
    # refusals: the base answers say "I don't know"
    rows = battle_rows(demo_run, run)
    by_pair = {(r["system_a"], r["system_b"]) for r in rows if r["refusal_a"]}
    assert all(a in (A_BASE, B_BASE) for a, _ in by_pair)
    assert all(r["raw_ab"] or r["raw_ba"] for r in rows)
    assert all(len(r["judgment_keys"]) == 1 for r in rows)


def test_random_order_is_seeded_stable_and_varies_with_the_seed(demo_run):
    run = load_run(demo_run, "r")
    judge_arena(demo_run, run, ScriptedJudge())
    judge_arena(demo_run, run, ScriptedJudge(), seed=7)
    names = [i.name for i in list_arenas(demo_run, run)]
    assert names == ["pairwise:fake-judge", "pairwise:fake-judge:seed7"]
    orders = {}
    for name, seed in zip(names, (0, 7)):
        for r in battle_rows(demo_run, run, name):
            assert r["shown"] == shown_order(seed, r["query_rowid"], r["system_a"], r["system_b"])
            orders.setdefault(name, []).append(r["shown"])
    assert orders[names[0]] != orders[names[1]]
    # the same inputs and seed give the same order
    assert shown_order(0, 5, "x", "y") == shown_order(0, 5, "x", "y")
    assert {shown_order(0, q, "x", "y") for q in range(20)} == {"ab", "ba"}


def test_both_orders_and_a_disagreement_is_a_tie(demo_run):
    # always the first answer shown (another model file: the cache keys on the judge's identity)
    run = load_run(demo_run, "r")
    judge = ScriptedJudge(script=lambda s: "A", sha="b" * 64)
    summary = judge_arena(demo_run, run, judge, order="both")
    assert summary.arena == "pairwise:fake-judge:both"
    assert summary.judge_calls == 36 and summary.disagreements == 18
    battles = load_battles(demo_run, run, summary.arena)
    assert {b.winner for b in battles} == {"tie"}
    row = battle_rows(demo_run, run, summary.arena)[0]
    assert row["shown"] == "both" and row["label_ab"] == "A" and row["label_ba"] == "A"
    assert row["disagreement"] and len(row["judgment_keys"]) == 2
    # an unbiased judge agrees with itself: no ties but the real ones
    fair = judge_arena(demo_run, run, ScriptedJudge(), order="both", name="fair")
    assert fair.disagreements == 0
    answers = answers_of(demo_run)
    for b in load_battles(demo_run, run, "fair"):
        assert b.winner == expected_winner(answers[(b.query, b.a)], answers[(b.query, b.b)])


def test_combine_orders():
    assert combine_orders("a", "a") == ("a", 0, False)
    assert combine_orders("a", "b") == ("tie", 0, True)
    assert combine_orders(None, "b") == ("b", 1, False)
    assert combine_orders("tie", None) == ("tie", 1, False)
    assert combine_orders(None, None) == (None, 2, False)


def garble_gen_a_first(s: dict[str, str]) -> str:
    """Unparseable whenever gen-a's oracle answer is shown first."""
    if "gen-a" in s["Answer A"] and "I don't know" not in s["Answer A"]:
        return "Hmm, hard to say."
    return prefer_stronger(s)


def test_parse_failures_are_counted_not_hidden(demo_run):
    run = load_run(demo_run, "r")
    summary = judge_arena(demo_run, run, ScriptedJudge(script=garble_gen_a_first))
    rows = battle_rows(demo_run, run)
    failed = [r for r in rows if r["winner"] is None]
    assert failed and summary.parse_failures == len(failed) == summary.unparsed_battles
    assert all(r["parse_failures"] == 1 for r in failed)
    assert all(r["raw_ab"] == "Hmm, hard to say." or r["raw_ba"] == "Hmm, hard to say."
               for r in failed)
    info = resolve_arena(demo_run, run)
    assert info.parse_failures == len(failed) and info.unparsed_battles == len(failed)
    stored = demo_run.query("SELECT COUNT(*) FROM judgments WHERE parse_failed = 1")[0][0]
    assert stored == len(failed)
    # with both orders, the parsed order decides and the failure is still counted
    both = judge_arena(demo_run, run, ScriptedJudge(script=garble_gen_a_first), order="both")
    rows = battle_rows(demo_run, run, both.arena)
    one_failed = [r for r in rows if r["parse_failures"] == 1]
    assert len(one_failed) == 9             # gen-a oracle vs each of the 3 others, 3 queries
    assert all(r["winner"] is not None for r in one_failed)
    assert both.parse_failures == 9 and both.unparsed_battles == 0


def test_cancel_then_resume_makes_no_judge_call_twice(demo_run):
    run = load_run(demo_run, "r")
    cancel = threading.Event()
    events = []

    def progress(e):
        events.append(e)
        if e.done >= 5:
            cancel.set()

    first = ScriptedJudge()
    summary = judge_arena(demo_run, run, first, progress=progress, cancel=cancel,
                          min_interval=0)
    assert summary.status == "cancelled" and summary.done == 5
    assert resolve_arena(demo_run, run).status == "cancelled"
    assert events[-1].status == "cancelled"
    second = ScriptedJudge()
    resumed = judge_arena(demo_run, run, second)
    assert resumed.status == "done" and resumed.done == 18
    assert resumed.cached == 5 and resumed.judged == 13
    assert len(first.calls) == 5 and len(second.calls) == 13
    assert not set(first.prompts()) & set(second.prompts())
    assert demo_run.query("SELECT COUNT(*) FROM battles")[0][0] == 18
    header = resolve_arena(demo_run, run).header
    assert [s.status for s in header.sessions] == ["cancelled", "done"]
    assert header.timings.judge_calls == 18
    # nothing left: a third session calls nothing
    third = ScriptedJudge()
    again = judge_arena(demo_run, run, third)
    assert again.done == 18 and again.judged == 0 and third.calls == []


def test_a_failing_judge_fails_the_arena_and_resume_completes_it(demo_run):
    run = load_run(demo_run, "r")
    summary = judge_arena(demo_run, run, ScriptedJudge(fail_on={4}))
    assert summary.status == "failed" and "scripted crash" in summary.message
    assert "fake-judge" in summary.message and summary.done == 3
    assert resolve_arena(demo_run, run).status == "failed"
    resumed = judge_arena(demo_run, run, ScriptedJudge())
    assert resumed.status == "done" and resumed.judge_calls == 15


def test_a_second_arena_with_the_same_judge_reuses_the_judgments(demo_run):
    run = load_run(demo_run, "r")
    judge_arena(demo_run, run, ScriptedJudge())
    again = ScriptedJudge()
    copy = judge_arena(demo_run, run, again, name="copy")
    assert copy.judge_calls == 0 and copy.cached_calls == 18 and again.calls == []
    assert copy.cached == 18
    both = ScriptedJudge()
    summary = judge_arena(demo_run, run, both, order="both")
    assert summary.cached_calls == 18 and summary.judge_calls == 18 and len(both.calls) == 18
    # another judge model (another file) judges afresh
    other = ScriptedJudge(sha="k" * 64)
    fresh = judge_arena(demo_run, run, other, name="other-file")
    assert fresh.judge_calls == 18


def test_progress_events_are_throttled_and_complete(demo_run):
    run = load_run(demo_run, "r")
    events = []
    judge_arena(demo_run, run, ScriptedJudge(), progress=events.append, min_interval=3600)
    assert events[0].done == 0 and events[0].total == 18
    assert events[-1].status == "done" and events[-1].done == 18
    assert len(events) <= 3
    last = events[-1]
    assert last.new == 18 and last.cached == 0 and last.rate > 0
    assert last.eta_seconds == 0 and last.fraction == 1.0


def test_documents_are_dropped_when_the_prompt_overflows(demo_run):
    run = load_run(demo_run, "r")
    class Tight(ScriptedJudge):
        def generate(self, prompt, params):
            docs = sections(prompt)["Reference documents"]
            if docs != "(no documents)":
                raise ContextOverflow("too long", 5000, 4096)
            return super().generate(prompt, params)

    summary = judge_arena(demo_run, run, Tight())
    assert summary.status == "done" and summary.done == 18 and summary.errors == 0
    assert {r["documents"] for r in battle_rows(demo_run, run)} == {0}


# --------------------------------------------------------------------------- errors

def test_clear_errors_and_nothing_half_written(demo_run, tmp_path):
    run = load_run(demo_run, "r")
    with pytest.raises(RunNotFound, match="no run named 'nope'.*known: r"):
        judge_arena(demo_run, load_run(demo_run, "nope"), ScriptedJudge())
    answered_run(demo_run, name="solo", generators=("gen-a",), settings=("base",))
    with pytest.raises(ArenaError, match="1 contestant.*at least 2"):
        judge_arena(demo_run, load_run(demo_run, "solo"), ScriptedJudge())
    with pytest.raises(ArenaError, match="cannot load judge model 'no-such-judge-xyz'"):
        judge_arena(demo_run, run, "no-such-judge-xyz")
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file at all")
    with pytest.raises(ArenaError, match="cannot load judge model .*broken.gguf"):
        judge_arena(demo_run, run, str(bad))
    with pytest.raises(ArenaError, match="order must be"):
        judge_arena(demo_run, run, ScriptedJudge(), order="sideways")
    with pytest.raises(ArenaError, match="no contestant 'x'"):
        judge_arena(demo_run, run, ScriptedJudge(), systems=["x"])
    with pytest.raises(ArenaError, match="none of its queries has a reference answer"):
        judge_arena(demo_run, run, ScriptedJudge(), pairs="reference")
    assert demo_run.query("SELECT COUNT(*) FROM arenas")[0][0] == 0
    assert demo_run.query("SELECT COUNT(*) FROM judgments")[0][0] == 0
    # an arena keeps its configuration and its judge model
    judge_arena(demo_run, run, ScriptedJudge(), queries=1, name="fixed")
    with pytest.raises(ArenaConfigMismatch, match="order 'random' \\(now 'both'\\)"):
        judge_arena(demo_run, run, ScriptedJudge(), order="both", name="fixed")
    with pytest.raises(ArenaConfigMismatch, match="another 'fake-judge'"):
        judge_arena(demo_run, run, ScriptedJudge(sha="z" * 64), name="fixed")
    grown = judge_arena(demo_run, run, ScriptedJudge(), queries=2, name="fixed")
    assert grown.queries == 2 and grown.total == 12 and grown.cached == 6


def test_arena_lookup_and_queries_sample(demo_run):
    run = load_run(demo_run, "r")
    with pytest.raises(ArenaNotFound, match="no arenas yet"):
        load_battles(demo_run, run)
    small = judge_arena(demo_run, run, ScriptedJudge(), queries=2, systems=[A_BASE, B_ORACLE])
    assert small.total == 2 and small.contestants == sorted([A_BASE, B_ORACLE])
    judge_arena(demo_run, run, ScriptedJudge(), name="full")
    assert len(load_battles(demo_run, run)) == 18           # the latest pairwise arena
    assert len(load_battles(demo_run, run, "pairwise:fake-judge")) == 2
    with pytest.raises(ArenaNotFound, match="no arena named 'x'.*full \\(pairwise, 18"):
        load_battles(demo_run, run, "x")
    # a sample of 2 is the start of the full order
    q_small = {b.query for b in load_battles(demo_run, run, "pairwise:fake-judge")}
    assert len(q_small) == 2 and q_small < {b.query for b in load_battles(demo_run, run)}


# --------------------------------------------------------------------------- reference

@pytest.fixture
def lfrqa_run(store, tmp_path):
    from engine.datasets.importing import import_path

    import_path(store, write_lfrqa(tmp_path / "lfrqa"), name="lf")
    answerers = {"good": Answerer("good"),
                 "meh": Answerer("meh", decline=lambda text: "number 0" in text)}
    answered_run(store, name="lf-run", generators=("good", "meh"), settings=("base",),
             dataset="lf", sample=None, answerers=answerers)
    return store


def test_reference_mode_rates_and_no_answer_ratio(lfrqa_run):
    store = lfrqa_run
    # one query loses its reference answer: it is skipped and counted
    store.conn.execute("UPDATE queries SET reference_answer = NULL WHERE query_id = 'fiqa/fiqa-2'")
    judge = ScriptedJudge(script=against_reference)
    run = load_run(store, "lf-run")
    summary = judge_arena(store, run, judge, pairs="reference")
    assert summary.status == "done" and summary.arena == "reference:fake-judge"
    assert summary.skipped_queries == 1 and summary.queries == 5 and summary.total == 10
    assert summary.parse_failures == 2
    assert {(b.b) for b in load_battles(store, run, summary.arena)} == {"reference"}
    assert "Answer 1" in sections(judge.calls[0].prompt)
    report = reference_report(store, run)
    assert report.skipped_queries == 1 and report.queries == 5 and report.parse_failures == 2
    by = {c.system: c for c in report.contestants}
    good, meh = by[arena_system("good/mirage@1", "base")], by[arena_system("meh/mirage@1", "base")]
    # good: wins all but science-2 (unparsed: a tie, counted)
    o = good.overall
    assert (o.n, o.wins, o.ties, o.losses) == (5, 4, 1, 0)
    assert good.overall.unparsed == 1 and good.overall.parse_failures == 1
    assert good.overall.win_rate == wilson_interval(4, 5)
    assert good.overall.win_tie_rate == wilson_interval(5, 5)
    assert good.overall.no_answer == wilson_interval(0, 5)
    # meh: declines on question 0 (science and fiqa: losses), ties science-1, loses fiqa-1,
    # science-2 unparsed (a tie)
    assert (meh.overall.wins, meh.overall.ties, meh.overall.losses) == (0, 2, 3)
    assert meh.overall.win_tie_rate == wilson_interval(2, 5)
    assert meh.overall.no_answer == wilson_interval(2, 5)
    assert meh.by_domain["science"].win_tie_rate == wilson_interval(2, 3)
    assert meh.by_domain["fiqa"].win_tie_rate == wilson_interval(0, 2)
    assert meh.by_domain["fiqa"].no_answer == wilson_interval(1, 2)
    assert report.contestants[0].system == good.system
    text = format_reference_report(report)
    assert "win+tie rate" in text and "n=5" in text and "1 without a reference" in text
    assert "counts as a tie" in text
    data = report.as_json()
    assert data["contestants"][0]["win_rate"] == 0.8 and "win_rate_lo" in data["contestants"][0]


def test_reference_mode_against_a_contestant_and_both_orders(lfrqa_run):
    ref = arena_system("good/mirage@1", "base")
    judge = ScriptedJudge(script=lambda s: "0")
    run = load_run(lfrqa_run, "lf-run")
    summary = judge_arena(lfrqa_run, run, judge, pairs="reference", reference=ref,
                          order="both")
    assert summary.arena == f"reference:fake-judge vs {ref}:both"
    assert summary.total == 6 and summary.judge_calls == 12
    battles = load_battles(lfrqa_run, run, summary.arena)
    assert {(b.a, b.b) for b in battles} == {(arena_system("meh/mirage@1", "base"), ref)}
    # the dataset's reference answer is shown to the judge beside the two answers
    first = sections(judge.calls[0].prompt)
    assert first["Reference answer"].startswith("The reference answer")
    assert first["Answer 1"].startswith(("meh", "good")) and first["Answer 2"]
    report = reference_report(lfrqa_run, run, summary.arena)
    assert report.reference == ref and report.contestants[0].overall.ties == 6
    with pytest.raises(ArenaError, match="no contestant 'nobody'"):
        judge_arena(lfrqa_run, run, judge, pairs="reference", reference="nobody")


def test_debiased_order_cancels_a_constant_position_preference():
    from engine.arena.judges.orders import debiased_winner

    # the judge prefers Answer A by 0.2 whatever it shows; a's answer is a little better
    ab = {"A": 0.65, "B": 0.30, "tie": 0.05}      # a shown first
    ba = {"A": 0.55, "B": 0.40, "tie": 0.05}      # b shown first
    assert debiased_winner(ab, ba) == "a"
    assert debiased_winner(ba, ab) == "b"
    same = {"A": 0.6, "B": 0.35, "tie": 0.05}
    assert debiased_winner(same, same) == "tie"   # only position preference: a tie
    assert debiased_winner(None, same) is None
