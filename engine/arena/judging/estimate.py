"""How long judging a run will take, before it starts, from the runs' one estimator
(:mod:`engine.runs.estimates`): the judge model's newest measured speed on this machine (its
own judge calls in this workspace, its latest model check or its stored generations, else an
assumption, said as such), corrected for the machine's load now, its load, each battle's prompt
tokens (the query, the reference documents and the two answers at the model's measured bytes a
token, plus the template, ~:data:`TEMPLATE_TOKENS`) and the requests in flight
(:func:`~engine.runs.estimates.parallel_factor`: our own host answers one at a time). A
local judge reads its verdict from the label probabilities of one forward pass
(``models.judges``: no token generated, counted as one); an endpoint may generate up to
:data:`JUDGE_MAX_TOKENS`. ``both``/``debiased`` orders judge each battle twice. An offline judge (reference, fitted) calls no LLM: ``offline`` and
no seconds. Used by the Leaderboard's judge dialog and ``arena judge --dry-run``."""

from __future__ import annotations

from typing import Hashable, Iterable, Mapping

from engine.arena.judges.kinds import is_offline_judge
from engine.arena.judges.orders import ORDERS
from engine.arena.judging.plan import (choose_contestants, plan_jobs, reference_contestant,
                                       run_contestants)
from engine.runs.lookup import RunInfo
from engine.model_speeds import (JUDGE_TEMPLATE_TOKENS, judge_call_tokens, judge_prefix_bytes,
                                 planned_backend, prompt_cache, speeds_now)
from engine.runs.estimates import call_seconds, load_seconds, parallel_factor
from engine.runs.live_eta import PRIOR_ITEMS, Pace
from engine.store import Store

TEMPLATE_TOKENS = JUDGE_TEMPLATE_TOKENS   # the pairwise template's own words, roughly
JUDGE_MAX_TOKENS = 32      # models.judges.PairwiseJudge's default
LABEL_PROBS_TOKENS = 1     # a verdict read from one forward pass's label probabilities
OFFLINE_BATTLE_SECONDS = 0.01   # a reference or fitted judge: no model call


def judgeable_queries(store: Store, run: RunInfo) -> int:
    """The run's queries that two contestants both answered: what a pairwise arena can
    judge (the most queries the judge dialog offers)."""
    contestants = run_contestants(store, run.id)
    if len(contestants) < 2:
        return 0
    return plan_jobs(store, run.id, mode="pairwise", contestants=contestants, reference=None,
                     queries=1, seed=0)[1]


def judge_call_costs(store: Store, judge: str, prompt_bytes: Mapping[Hashable, int | tuple],
                     calls_each: int, concurrency: int | None, wait: bool = True
                     ) -> tuple[dict[Hashable, float], dict]:
    """Each step's wall seconds (``calls_each`` judge calls on a prompt of ``prompt_bytes``
    plus the template, divided by the in-flight speed-up), and the figures behind them
    (speed and its source, the load correction, load, requests in flight, verdict tokens).
    A step's size may be ``(bytes, shared bytes, query)``: where the judge's backend keeps its
    previous prompt (:func:`~engine.model_speeds.prompt_cache`), a call on the query of the
    call before it evaluates only what it does not share (:func:`~engine.runs.estimates.
    judge_call_tokens`); steps are taken in the order given, as judging sends them.
    ``wait``: probe the machine's load for a second unless a probe was made just now."""
    speed = speeds_now(store, [judge], wait)[judge]
    backend, slots = planned_backend(judge)
    in_flight, parallel = parallel_factor(backend, slots, concurrency)
    verdict = JUDGE_MAX_TOKENS if backend == "http" else LABEL_PROBS_TOKENS
    cached, before = prompt_cache(judge), None
    per_token = speed.text_bytes_per_token
    costs = {}
    for key, size in prompt_bytes.items():
        total, shared, query = size if isinstance(size, tuple) else (size, 0, None)
        calls = []
        for _ in range(calls_each):
            again = cached and query is not None and query == before
            calls.append(judge_call_tokens(total, per_token, shared if again else 0))
            before = query
        costs[key] = sum(call_seconds(tokens, verdict, speed) for tokens in calls) / parallel
    return costs, {"speed": speed.source, "gen_tps": speed.gen_tps,
                   "prompt_tps": speed.prompt_tps,
                   "load_seconds": load_seconds(store, judge)[0] * speed.factor,
                   "load_factor": speed.factor, "load_note": speed.load_note,
                   "in_flight": in_flight, "parallel": parallel, "verdict_tokens": verdict,
                   "backend": backend}


def battle_bytes(jobs) -> dict[tuple, tuple[int, int, str]]:
    """Each battle's prompt parts, by ``(query, a, b)``, in the order judging sends them:
    ``(UTF-8 bytes of the query, its documents and the two answers, bytes of the query and
    documents alone, the query)``."""
    out = {}
    for job in jobs:
        shared = judge_prefix_bytes(job.text, job.documents)
        for m in job.matchups:
            out[(m.query, m.a, m.b)] = (shared + len(m.answer_a.encode("utf-8"))
                                        + len(m.answer_b.encode("utf-8")), shared, job.text)
    return out


def judging_pace(store: Store, judge: str, jobs, order: str, concurrency: int | None,
                 skip: Iterable[tuple] = ()) -> Pace:
    """The live ETA of judging ``jobs`` (:class:`engine.runs.live_eta.Pace`, one step a
    battle by ``(query, a, b)``; those in ``skip`` are judged already), from the same costs as
    :func:`judging_estimate` (an offline judge: :data:`OFFLINE_BATTLE_SECONDS` a battle, its
    own pace from the first)."""
    sizes = battle_bytes(jobs)
    return _pace(store, judge, sizes, calls_each(order), concurrency, skip)


def labelled_pace(store: Store, judge: str, pairs, order: str | None,
                  concurrency: int | None) -> Pace:
    """The live ETA of a judge calibration (:mod:`engine.arena.trust.calibrate`): one step a
    labelled pair (by ``pair_id``: its query and two answers), at the judge's costs."""
    sizes = {p.pair_id: sum(len((t or "").encode("utf-8"))
                            for t in (p.query, p.answer_a, p.answer_b)) for p in pairs}
    return _pace(store, judge, sizes, calls_each(order or "random"), concurrency)


def _pace(store: Store, judge: str, sizes: dict, calls: int, concurrency: int | None,
          skip: Iterable = ()) -> Pace:
    if is_offline_judge(judge):
        costs, measured = dict.fromkeys(sizes, OFFLINE_BATTLE_SECONDS), False
    else:
        costs, figures = judge_call_costs(store, judge, sizes, calls, concurrency, wait=False)
        measured = not figures["speed"].startswith("assumed")
    # the first battles are weighed against a speed measured here (runs' PRIOR_ITEMS)
    pace, done = Pace(prior_steps=PRIOR_ITEMS if measured else 0.0), set(skip)
    for key, cost in costs.items():
        if key not in done:
            pace.add(key, cost)
    return pace


def calls_each(order: str) -> int:
    """Judge calls a battle (or a labelled pair) takes in ``order``."""
    return 2 if order in ("both", "debiased") else 1


def judging_estimate(store: Store, run: RunInfo, judge: str, queries: int | None,
                     order: str = "random", seed: int = 0, *, pairs: str = "all",
                     systems: list[str] | None = None, reference: str | None = None,
                     concurrency: int | None = None) -> dict:
    """``{"battles", "calls", "queries", "seconds", "speed", "gen_tps", "prompt_tps",
    "load_seconds", "load_factor", "load_note", "in_flight", "parallel", "verdict_tokens",
    "backend"}`` for judging the
    battles :func:`engine.arena.judging.job.judge_arena` would plan with the same arguments."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    reference = reference_contestant(store, run, reference)
    contestants = choose_contestants(store, run, pairs, systems, reference)
    jobs, _, _ = plan_jobs(store, run.id, mode="pairwise" if pairs == "all" else "reference",
                           contestants=contestants, reference=reference, queries=queries,
                           seed=seed)
    battles = sum(len(job.matchups) for job in jobs)
    if is_offline_judge(judge):
        return {"battles": battles, "calls": battles, "queries": len(jobs), "seconds": None,
                "speed": "offline judge", "offline": True}
    costs, figures = judge_call_costs(store, judge, battle_bytes(jobs), calls_each(order),
                                      concurrency)
    load = figures["load_seconds"] if battles else 0.0
    return {"battles": battles, "calls": battles * calls_each(order), "queries": len(jobs),
            **figures, "load_seconds": load, "seconds": load + sum(costs.values())}
