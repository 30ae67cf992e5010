"""How long judging a run pairwise will take, before it starts: the battles the plan holds, and
the seconds they should take at the judge model's measured speed (the runs' estimator,
:func:`engine.runs.estimates.measured_speeds`: its latest model check or its stored
generations, else defaults). The judge's prompt is the query, the reference documents and the
two answers (plus the template, ~:data:`TEMPLATE_TOKENS`); every verdict is taken to use the
judge's whole ``max_tokens`` (an upper bound), and ``both``/``debiased`` orders judge each
battle twice. An offline judge (reference, fitted) calls no LLM: ``offline`` and no seconds.
Used by the Leaderboard's judge dialog."""

from __future__ import annotations

from engine.arena.judge_specs import is_offline_judge
from engine.arena.orders import ORDERS
from engine.arena.planning import plan_jobs, run_contestants
from engine.results.records import load_run
from engine.runs.estimates import CHARS_PER_TOKEN, measured_speeds
from engine.store import Store

TEMPLATE_TOKENS = 150      # the pairwise template's own words, roughly
JUDGE_MAX_TOKENS = 32      # models.judges.PairwiseJudge's default


def judgeable_queries(store: Store, run_name: str) -> int:
    """The run's queries that two contestants both answered: what a pairwise arena can
    judge (the most queries the judge dialog offers)."""
    run = load_run(store, run_name)
    contestants = run_contestants(store, run.id)
    if len(contestants) < 2:
        return 0
    return plan_jobs(store, run.id, mode="pairwise", contestants=contestants, reference=None,
                     queries=1, seed=0)[1]


def judging_estimate(store: Store, run_name: str, judge: str, queries: int | None,
                     order: str = "random", seed: int = 0) -> dict:
    """``{"battles", "calls", "queries", "seconds", "speed"}`` for judging every pair of the
    run's contestants on ``queries`` sampled queries (None: all) with ``judge``."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    run = load_run(store, run_name)
    contestants = run_contestants(store, run.id)
    jobs, _, _ = plan_jobs(store, run.id, mode="pairwise", contestants=contestants,
                           reference=None, queries=queries, seed=seed)
    if is_offline_judge(judge):
        battles = sum(len(job.matchups) for job in jobs)
        return {"battles": battles, "calls": battles, "queries": len(jobs), "seconds": None,
                "speed": "offline judge", "offline": True}
    speed = measured_speeds(store, [judge])[judge]
    per_call = JUDGE_MAX_TOKENS / speed.gen_tps
    twice = 2 if order in ("both", "debiased") else 1
    seconds = 0.0
    battles = 0
    for job in jobs:
        shared = len(job.text.encode("utf-8")) + sum(
            len((d.get("text") or "").encode("utf-8")) for d in job.documents or [])
        for m in job.matchups:
            prompt = (shared + len(m.answer_a.encode("utf-8"))
                      + len(m.answer_b.encode("utf-8"))) / CHARS_PER_TOKEN + TEMPLATE_TOKENS
            seconds += twice * (prompt / speed.prompt_tps + per_call)
            battles += 1
    return {"battles": battles, "calls": battles * twice, "queries": len(jobs),
            "seconds": seconds, "speed": speed.source, "gen_tps": speed.gen_tps,
            "prompt_tps": speed.prompt_tps}
