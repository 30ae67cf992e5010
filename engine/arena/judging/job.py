"""Judging a run's answers: every battle stored as it is judged, resumable after anything.

:mod:`engine.arena.judging.plan` decides what to judge (contestants, sampled queries, matchups,
the seeded A/B order); this module runs the plan (docs/METRICS.md §2, §4):

- ``pairs="all"`` (MIRAGE-Bench arena): every pair of contestants that both answered a query,
  judged with the ``mirage_bench_pairwise`` template, which shows the query's reference
  documents written ``[chunk_id] title text``. When a prompt overflows the judge's context,
  documents are dropped from the end until it fits.
- ``pairs="reference"`` (RAG-QA Arena): each contestant's answer against the query's
  long-form ``reference_answer`` (``system_b = 'reference'``), or against a chosen reference
  contestant (``reference="<arena system>"``; the dataset's reference answer, when there is
  one, is then shown to the judge as the template's reference section). Template
  ``ragqa_arena_pairwise``; queries without a reference answer are skipped and counted.

Position bias: ``order`` is ``random``, ``both`` or ``debiased``; see :mod:`engine.arena.judges.orders`.

Verdicts are mapped back to 'a' / 'b' / 'tie' in the canonical order (sorted contestants;
against a reference, the contestant is a). A reply that cannot be parsed gives winner NULL
and is counted in ``parse_failures``, never hidden.

Work runs by query, then pairs, so consecutive prompts share their prefix (the template puts
the query and the documents before the answers; llama.cpp reuses the evaluated prefix).
Every judge call goes through :func:`engine.arena.judges.cache.cached_verdict` (one transaction
each); every battle is one more transaction (:mod:`engine.arena.judging.recording` keeps the
arena's rows). Re-running skips stored battles, and a battle
interrupted between its two orders is finished from the judgments cache: no judge call is
ever made twice. Battles go through :mod:`engine.inflight` (up to ``concurrency`` out, a
query's battles one after another; judge calls and their cache on the workers, battle rows
on the job's thread in plan order). A battle whose judge request failed after its retries
is counted in ``errors`` and left for the next session. Status: ``planned`` → ``running`` →
``done`` | ``cancelled`` (cooperative: no new battle is sent) | ``failed`` (the judge raised,
or failures went beyond the error budget; running again resumes). Judging is a
:class:`~engine.jobs.Job`: cancel, the end and the errors follow that policy, and progress is a
:class:`~engine.jobs.JobEvent` (:func:`~engine.arena.judging.events.arena_event`).
"""
from __future__ import annotations

import threading
import time
from functools import partial
from typing import Callable

from engine.arena.header import ArenaHeader
from engine.arena.judging.events import ArenaSummary, arena_event
from engine.arena.judges.specs import open_judge
from engine.arena.judging.estimate import judging_pace
from engine.arena.judges.cache import cached_verdict
from engine.arena.judges.orders import DEBIAS_TIE_MARGIN, ORDERS
from engine.arena.judging.plan import (
    MAX_DOCUMENTS,
    Matchup,
    QueryJob,
    choose_contestants,
    reference_contestant,
    plan_jobs,
    shown_order,
)
from engine.arena.judging.recording import close_session, open_arena, record_battle
from engine.arena.judges.reference import (NeedsReference, needs_reference_message,
                                           reference_texts)
from engine.arena.types import ArenaError
from engine.inflight import (ErrorBudget, Outcome, Policy, Request, default_concurrency,
                             in_flight, parse_max_errors, watchdog_for)
from engine.jobs import Job, JobEvent, Stop, model_failed, per_second
from engine.runs.lookup import RunInfo
from engine.runs.live_eta import Pace
from engine.store import Store
from models.base import ContextOverflow, Generator

PAIRWISE_TEMPLATE = "mirage_bench_pairwise"
REFERENCE_TEMPLATE = "ragqa_arena_pairwise"
PAIRS = ("all", "reference")

# --------------------------------------------------------------------------- the entry point

def judge_arena(store: Store, run: RunInfo, judge: str | Generator, *, pairs: str = "all",
                queries: int | None = None, seed: int = 0, order: str = "random",
                systems: list[str] | None = None, name: str | None = None,
                reference: str | None = None, n_threads: int | None = None,
                progress: Callable[[JobEvent], None] | None = None,
                cancel: threading.Event | Callable[[], bool] | None = None,
                min_interval: float = 0.1, concurrency: int | None = None,
                max_errors: int | float | str | None = None) -> ArenaSummary:
    """Judge the run's answers (module docstring) into the arena ``name`` (default
    ``pairwise:<judge>`` or ``reference:<judge>``, with ``:both`` / ``:seed<S>`` when not the
    defaults) and say how it ended. ``judge`` is a catalog name or path (loaded with
    ``n_threads``) or a ready Generator. ``concurrency`` judge requests are kept in flight
    (default: the judge's own, :func:`engine.inflight.default_concurrency`), with the error
    budget ``max_errors`` (:class:`engine.inflight.ErrorBudget`). Raises :class:`ArenaError`
    (bad options, too few contestants, a judge that cannot load, another arena config:
    :class:`engine.arena.judging.recording.ArenaConfigMismatch`) before writing anything."""
    if pairs not in PAIRS:
        raise ArenaError(f"pairs must be one of {', '.join(PAIRS)}, not {pairs!r}")
    if order not in ORDERS:
        raise ArenaError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    if queries is not None and queries < 1:
        raise ArenaError("queries must be at least 1")
    if reference is not None and pairs != "reference":
        raise ArenaError("a reference contestant needs pairs='reference'")
    if concurrency is not None and (isinstance(concurrency, bool) or concurrency < 1):
        raise ArenaError("concurrency must be at least 1")
    try:
        budget = ErrorBudget(parse_max_errors(max_errors))
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    reference = reference_contestant(store, run, reference)     # one spelling from here on
    contestants = choose_contestants(store, run, pairs, systems, reference)
    mode = "pairwise" if pairs == "all" else "reference"
    plan = plan_jobs(store, run.id, mode=mode, contestants=contestants, reference=reference,
                     queries=queries, seed=seed)
    if not plan[0]:
        raise ArenaError(_nothing_to_judge(run.name, mode, reference, plan[2]))
    pairwise = open_judge(judge, _template(mode), store=store, n_threads=n_threads)
    if getattr(pairwise, "needs_reference", False):
        attach_references(store, run.name, mode, reference, plan[0], pairwise.judge_name)
        pairwise.prepare(texts_of(plan[0]))
    generator = pairwise.generator
    judge_name = pairwise.judge_name
    config = {"mode": mode, "pairs": pairs, "judge": judge_name,
              "template": pairwise.template.id,
              "order": order, "seed": seed, "queries": queries, "reference": reference,
              "systems": sorted(systems) if systems else None,
              "documents": (f"supporting pool chunks, oracle first, at most {MAX_DOCUMENTS}"
                            if mode == "pairwise" else None),
              "ties": ("order='both': the two orders disagree -> tie" if order != "debiased"
                       else f"order='debiased': mean probability lead < {DEBIAS_TIE_MARGIN} "
                            "-> tie"),
              "parse_failures": "winner NULL, counted; with 'both' the parsed order decides"}
    name = name or _default_name(mode, judge_name, order, seed, reference)
    judging = _Judging(store, run, name, config, pairwise, contestants, plan, progress, cancel,
                       min_interval, n_threads)
    judging.budget = budget
    judging.policy = Policy(concurrency=concurrency or default_concurrency(generator),
                            watchdog=watchdog_for(generator), seed=seed)
    # opened before the job's error policy applies: another config, or a database error
    # here, raises as it is, with nothing written
    judging.open()
    judging.pace = judging_pace(store, judge if isinstance(judge, str) else judge_name, plan[0],
                                order, judging.policy.concurrency, skip=judging.stored)
    return judging.run()


def _nothing_to_judge(run_name: str, mode: str, reference: str | None, skipped: int) -> str:
    if mode == "pairwise":
        return (f"run {run_name!r} has no query that two contestants both answered: "
                "nothing to judge")
    if reference is not None:
        return (f"run {run_name!r}: the reference contestant {reference!r} answered no query "
                "that another contestant answered")
    return (f"run {run_name!r}: none of its queries has a reference answer ({skipped} "
            "without one); judge against a contestant instead (--reference SYSTEM)")


def _template(mode: str) -> str:
    return PAIRWISE_TEMPLATE if mode == "pairwise" else REFERENCE_TEMPLATE


def _default_name(mode, judge_name, order, seed, reference) -> str:
    name = f"{mode}:{judge_name}"
    if reference is not None:
        name += f" vs {reference}"
    if order != "random":
        name += f":{order}"
    if seed:
        name += f":seed{seed}"
    return name


def attach_references(store: Store, run_name: str, mode: str, reference: str | None,
                      jobs: list[QueryJob], judge_name: str) -> None:
    """Give every battle of an offline judge its reference text (the query's long-form
    reference answer, else its gold answers); NeedsReference, in one line, where there is none
    or where the reference is itself a contestant."""
    if mode == "reference" and reference is None:
        raise NeedsReference(needs_reference_message(
            judge_name, "with --pairs reference each answer is battled against the reference "
                        "answer itself (it cannot be judged against itself); use --pairs all, "
                        "or --reference SYSTEM"))
    texts = reference_texts(store, [job.rowid for job in jobs])
    missing = [job.query_id for job in jobs if not texts.get(job.rowid)]
    if missing:
        raise NeedsReference(needs_reference_message(
            judge_name, f"{len(missing)} of the {len(jobs)} queries to judge in run "
                        f"{run_name!r} have no reference answer or gold answer (e.g. "
                        f"{missing[0]!r})"))
    for job in jobs:
        job.reference = texts[job.rowid]


def texts_of(jobs: list[QueryJob]) -> list[str]:
    """Every answer and reference text of the plan (to embed them in one batch)."""
    out: list[str] = []
    for job in jobs:
        refs = job.reference
        out.extend([refs] if isinstance(refs, str) else list(refs or []))
        for m in job.matchups:
            out.extend((m.answer_a, m.answer_b))
    return out


def judge_verdicts(store: Store, judge, job: QueryJob, matchup: Matchup,
                   shown: list[str]) -> tuple[list[tuple[str, object]], int | None]:
    """The stored verdicts of one battle, one per order in ``shown``, and the number of
    documents they saw: documents are dropped from the end while a prompt overflows the
    judge's context (ContextOverflow propagates when even none fit)."""
    docs = job.documents
    while True:
        try:
            out = []
            for order in shown:
                a, b = ((matchup.answer_a, matchup.answer_b) if order == "ab"
                        else (matchup.answer_b, matchup.answer_a))
                fields = judge.fields(job.text, a, b, documents=docs, reference=job.reference)
                out.append((order, cached_verdict(store, judge, fields)))
            return out, None if docs is None else len(docs)
        except ContextOverflow:
            if not docs:
                raise
            docs = docs[:-1]


# --------------------------------------------------------------------------- the runner

DISK_FULL = ("the disk is full (database or disk is full): judging stopped; every stored "
             "battle is complete. Free some space and run it again to resume.")
JUDGE_FAILED = "judge {model!r} failed on query {query}: {type}: {error}"


class _Judging(Job):
    kind = "arena"
    disk_full = DISK_FULL

    def __init__(self, store, run, name, config, judge, contestants, plan, progress,
                 cancel, min_interval, n_threads):
        super().__init__(progress, cancel, min_interval)
        self.store, self.run_info, self.name, self.config = store, run, name, config
        self.generator, self.contestants = judge.generator, contestants
        self.judge = judge
        self.n_threads = n_threads
        self.arena_id: int | None = None
        self.header = ArenaHeader()       # as this session started; as it ended
        self.counts = dict(done=0, total=0, cached=0, judged=0, parse_failures=0, unparsed=0,
                           disagreements=0, errors=0, judge_calls=0, cached_calls=0)
        self.judge_seconds = 0.0          # inside new judge calls (this session)
        self.battle_seconds = 0.0         # wall time of judged battles (this session)
        self.jobs, self.eligible, self.skipped = plan
        self.queries = len(self.jobs)
        self.current: str | None = None
        self.last_error: str | None = None
        self.stored: dict[tuple, tuple] = {}     # battles judged before (open reads them)
        self.budget = ErrorBudget()
        self.policy = Policy()
        self.mark = 0.0                   # when the last battle was stored
        self.pace = Pace()                # the live ETA (judging_time.judging_pace)

    # ----------------------------------------------------------------------- the loop

    def work(self) -> str | None:
        stored = self.stored
        self._count_stored(self.jobs, stored)
        self.emit(force=True)
        requests = (Request((job, m), partial(self._verdicts, job, m), group=job.query_id)
                    for job in self.jobs for m in job.matchups
                    if (m.query, m.a, m.b) not in stored)
        self.check_cancel()
        self.mark = self.pace.start()
        for outcome in in_flight(requests, name=self.judge.judge_name, policy=self.policy,
                                 budget=self.budget, cancel=self.cancel, tick=self.emit,
                                 fatal=self._fatal,
                                 abort=getattr(self.generator, "abort", None)):
            job, m = outcome.key
            self.current = job.query_id
            if outcome.ok and not isinstance(outcome.value, ContextOverflow):
                self._battle(m, *outcome.value)
            else:
                error = outcome.value if outcome.ok else outcome.error
                self.counts["errors"] += 1
                self.last_error = f"query {job.query_id}, {m.a} vs {m.b}: {error}"
                self.pace.done((m.query, m.a, m.b))
            self.emit()
        self.check_cancel()
        if self.counts["errors"]:
            return (f"{self.counts['errors']} battle(s) not judged (the prompt overflows the "
                    f"judge's context, or the judge failed; run it again to retry them); "
                    f"last: {self.last_error}")
        return None

    def _verdicts(self, job: QueryJob, m: Matchup):
        """On a worker thread: the battle's verdicts (from the judgments cache, or judged and
        cached now), or the ContextOverflow when even no documents fit."""
        if self.config["order"] in ("both", "debiased"):
            shown = ["ab", "ba"]
        else:
            shown = [shown_order(self.config["seed"], m.query, m.a, m.b)]
        try:
            verdicts, n_docs = judge_verdicts(self.store, self.judge, job, m, shown)
        except ContextOverflow as exc:
            return exc
        return shown, verdicts, n_docs

    def _fatal(self, outcome: Outcome) -> Stop:
        job, _ = outcome.key
        return model_failed(self.judge.judge_name, outcome.error, JUDGE_FAILED,
                            query=job.query_id)

    def open(self) -> None:
        """Open the arena's row (:func:`engine.arena.judging.recording.open_arena`) and read its
        stored battles ``(query, a, b) -> (winner, parse_failures, disagreement)``."""
        opened = open_arena(self.store, self.run_info, self.name, self.config, self.generator,
                            self.contestants, self.policy.concurrency, self.n_threads)
        self.arena_id, self.header, self.stored = opened.arena_id, opened.header, opened.stored

    def _count_stored(self, jobs: list[QueryJob], stored: dict) -> None:
        c = self.counts
        for job in jobs:
            for m in job.matchups:
                c["total"] += 1
                found = stored.get((m.query, m.a, m.b))
                if found is not None:
                    winner, failures, disagreement = found
                    c["done"] += 1
                    c["cached"] += 1
                    c["parse_failures"] += failures
                    c["unparsed"] += winner is None
                    c["disagreements"] += disagreement

    # ----------------------------------------------------------------------- one battle

    def _battle(self, m: Matchup, shown, verdicts, n_docs) -> None:
        """On the job's thread, in plan order: the battle's row from its verdicts."""
        new_calls = 0
        for _, stored in verdicts:
            if stored.cached:
                self.counts["cached_calls"] += 1
            else:
                new_calls += 1
                self.judge_seconds += stored.seconds or 0.0
        winner, failures, disagreement = record_battle(
            self.store, self.arena_id, m, shown, verdicts, n_docs, self.config["order"])
        c = self.counts
        c["done"] += 1
        c["parse_failures"] += failures
        c["unparsed"] += winner is None
        c["disagreements"] += disagreement
        c["judge_calls"] += new_calls
        moment = time.perf_counter()
        self.pace.done((m.query, m.a, m.b), moment - self.mark if new_calls else None)
        if new_calls:      # wall time since the last battle: N in flight overlap
            c["judged"] += 1
            self.battle_seconds += moment - self.mark
        self.mark = moment
        if not new_calls:
            c["cached"] += 1

    # ----------------------------------------------------------------------- the arena row

    @property
    def opened(self) -> bool:
        return self.arena_id is not None

    def record(self, status: str, message: str | None) -> None:
        c = self.counts
        session = {"judge_calls": c["judge_calls"], "cached_calls": c["cached_calls"],
                   "judged_battles": c["judged"],
                   "seconds": round(time.perf_counter() - self.started, 3),
                   "judge_seconds": round(self.judge_seconds, 3)}
        counts = {
            "planned": c["total"], "stored": c["done"], "parse_failures": c["parse_failures"],
            "unparsed_battles": c["unparsed"], "disagreements": c["disagreements"],
            "errors": c["errors"], "queries": self.queries, "eligible_queries": self.eligible,
            "skipped_queries": self.skipped,
            "contestants": len(self.contestants)}
        self.header = close_session(self.store, self.arena_id, self.header, status, message,
                                    session, self.judge_seconds, c["judge_calls"], counts)

    # ----------------------------------------------------------------------- reporting

    def event(self, status: str, message: str | None) -> JobEvent:
        c = self.counts
        return arena_event(
            arena=self.name, status=status, done=c["done"], total=c["total"],
            cached=c["cached"], judged=c["judged"], parse_failures=c["parse_failures"],
            battles_per_s=per_second(c["judged"], self.battle_seconds),
            eta_seconds=self.pace.seconds(),
            query=self.current, message=message, errors=c["errors"])

    def summary(self, status: str, message: str | None) -> ArenaSummary:
        c = self.counts
        device = getattr(self.generator, "device", None)
        return ArenaSummary(
            arena=self.name, arena_id=self.arena_id, run=self.run_info.name,
            mode=self.config["mode"], status=status, message=message, total=c["total"],
            done=c["done"], judged=c["judged"], cached=c["cached"],
            parse_failures=c["parse_failures"], unparsed_battles=c["unparsed"],
            disagreements=c["disagreements"], errors=c["errors"], judge_calls=c["judge_calls"],
            cached_calls=c["cached_calls"], queries=self.queries, skipped_queries=self.skipped,
            seconds=time.perf_counter() - self.started, contestants=list(self.contestants),
            devices=[device] if device else [])
