"""Executing a plan: every generation stored as it finishes, resumable after anything.

Items run in the plan's order (generator, then query, then settings in prefix-sharing order)
through :mod:`engine.inflight`: up to ``concurrency`` requests out at once (a query's items
one after another), retried when a failure is transient, each outcome stored on this thread in
the plan's order. Each finished item is one transaction (:mod:`engine.runs.rows`). A run
that is cancelled, crashes or is killed with ``kill -9`` has only whole items stored; running
it again skips the items it has, answers every other item whose generation is already stored
(by any run) from the store, and generates only the rest: nothing is generated twice, no row
is lost or duplicated.

Scores come from :func:`engine.metrics.answer.score_generation` against the query's answers
and language, with ``cited=True`` for a template whose responses carry citations
(``mirage-bench``). A stored generation already scored for the query by the current scorer
version is not scored again.

Status: ``planned`` → ``running`` → ``done`` | ``cancelled`` (no new request is sent and the
ones in flight are cut: an HTTP endpoint's connections are shut down; what finished is stored
whole; a run whose every item is stored when the cancel comes is ``done``) | ``failed`` (the
failed items went beyond the error budget, or the model cannot answer anything
(:class:`~models.base.ModelUnusable`: a wrong key), or the disk filled up: the open
transaction is rolled back, nothing is half-written). Every other model fault is the item's
error, with its reason (:mod:`engine.inflight`): retries spent, an unusable reply, an HTTP 4xx,
a prompt over the context; it counts in ``errors`` and against the budget, the run goes on,
and running again asks for it again.

Each item's prompt and generation are found on a worker thread (:mod:`engine.runs.answering`:
the cache, the model, a refusal that teaches the run a server's context, kept for every later
run by :mod:`engine.runs.contexts`); its outcome is stored and counted here, on the job's
thread (:mod:`engine.runs.tally`: what the progress events and the summary say), and the
models are loaded and recorded by :mod:`engine.runs.run_models`.
Running it again resumes. Adaptive runs take the plan's batches one after another and stop
when :func:`engine.runs.sampling.ci_half_widths` are all below the target. Progress goes to
a callback as :class:`~engine.jobs.JobEvent` (:func:`~engine.runs.events.run_event`), at most
one per ``min_interval`` seconds (and always the last one). A run is a
:class:`~engine.jobs.Job`: cancel, the end of a run and its errors follow that policy.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from functools import partial
from typing import Callable, Mapping

from engine.inflight import (ErrorBudget, Outcome, Policy, Request, default_concurrency,
                             in_flight, watchdog_for)
from engine.jobs import Job, JobEvent, eta, model_failed
from engine.metrics.answer import score_generation
from engine.metrics.language import warm_up
from engine.prompts import get_template
from engine.runs import rows
from engine.runs.answering import Answer, ItemAnswers
from engine.runs.contexts import keep_learned_context
from engine.runs.events import RunSummary, run_event
from engine.runs.header import RunHeader, Session
from engine.runs.live_eta import SMOOTH_S, LiveEta
from engine.runs.log import log_event
from engine.runs.plan import Plan, PlanItem
from engine.runs.prompting import load_chunks, load_queries, params_json
from engine.runs.run_models import RunModels
from engine.runs.sampling import ci_half_widths, difference_interval
from engine.runs.tally import RunTally, cut_totals
from engine.store import Store
from engine.units import fmt_delta_interval, fmt_points

DISK_FULL = ("the disk is full (database or disk is full): the run stopped; every stored item "
             "is complete (each is one transaction). Free some space and run it again to "
             "resume.")


def tokens_so_far(generator) -> int | None:
    """The tokens a generator has generated for the request it works on, where its backend
    counts them as they come (an optional ``tokens_so_far()``); None where it cannot say
    (a request answered whole: our model host, an HTTP endpoint)."""
    counter = getattr(generator, "tokens_so_far", None)
    if not callable(counter):
        return None
    try:
        found = counter()
    except Exception:  # noqa: BLE001 - a progress figure never stops a run
        return None
    return int(found) if isinstance(found, (int, float)) else None


def execute(store: Store, plan: Plan, *, progress: Callable[[JobEvent], None] | None = None,
            cancel: threading.Event | Callable[[], bool] | None = None,
            generators: Mapping[str, object] | None = None,
            retrievers: Mapping[str, object] | None = None,
            min_interval: float = 0.1) -> RunSummary:
    """Run the plan (see the module docstring) and say how it ended. ``generators`` and
    ``retrievers`` map configured names to ready objects; others are loaded from the catalog
    (generators: ``models.catalog.load_generator`` with the run's n_ctx and threads) and from
    :class:`engine.retrieval.Retriever` (which indexes the pool on first use).

    A ``MIRAGE_*`` variable out of its range is refused here, before the run's row exists
    (:class:`models.env_settings.EnvSettingError`, one line naming it), when a generator is
    to be loaded: found only as the model loaded, it left a ``failed`` run behind."""
    if any(name not in (generators or {}) for name in plan.config.generators):
        from models.env_settings import EnvSettingError, check_all

        problems = check_all()
        if problems:
            raise EnvSettingError(problems[0])
    return _Runner(store, plan, progress, cancel, dict(generators or {}),
                   dict(retrievers or {}), min_interval).run()


class _Runner(RunModels, Job):
    kind = "run"
    disk_full = DISK_FULL

    def __init__(self, store, plan, progress, cancel, generators, retrievers, min_interval):
        super().__init__(progress, cancel, min_interval)
        self.store, self.plan, self.config = store, plan, plan.config
        self.template = get_template(self.config.template)
        self.generators, self.retrievers = generators, retrievers
        self.run_id: int | None = None
        self.header = RunHeader()
        self.finished: dict[tuple, str | None] = {}   # item key -> generation key (None: todo)
        self.tally = RunTally()
        self.answers = ItemAnswers(store, self.template, plan.params)
        self.queries_used = 0
        self.current: tuple[str | None, str | None] = (None, None)
        self.stop_reason: str | None = None
        self.half_widths: dict[str, float] = {}
        self.recorded: set[str] = set()               # generators whose identity is recorded
        self.budget = ErrorBudget(self.config.max_errors)
        self.mark = 0.0                               # when the last item was stored
        self.live_eta: LiveEta | None = None          # the ETA: estimate × the run's pace
        self.working = None                           # the generator whose requests are out

    # ----------------------------------------------------------------------- the loop

    def work(self) -> None:
        self._open()
        batches = self.plan.batches()
        for number, queries in enumerate(batches, start=1):
            self._run_batch(queries)
            if self.config.adaptive:
                if self._precise_enough():
                    self.stop_reason = ("difference decided"
                                        if self.config.adaptive_until == "difference"
                                        else "target reached")
                    break
                if number == len(batches):
                    self.stop_reason = ("budget spent" if len(self.plan.queries)
                                        < self.plan.dataset_queries else "all queries used")

    def _open(self) -> None:
        warm_up()                       # langid: its first score must not hold up a cancel
        self.run_id, stored = rows.open_run(self.store, self.plan)
        self.header = stored.with_session(Session.starting(self.config.threads))
        self._write_run(status="running")
        self.finished = rows.finished_items(self.store, self.run_id)
        stored = sum(1 for v in self.finished.values() if v)
        sessions = len(self.header.sessions)
        self._log("session", f"session {sessions} started: " + (
            f"resumed, {stored} items stored already" if sessions > 1 or stored
            else "new run") + f", {self.plan.count} items planned")
        for system, by_setting in rows.loose_labels(self.store, self.run_id).items():
            for setting, by_query in by_setting.items():
                for query, value in by_query.items():
                    if self.finished.get((system, setting, query)):
                        self.tally.label(system, setting, value)
        self.live_eta = LiveEta(self.store, self.plan, smooth_s=SMOOTH_S)

    def _run_batch(self, queries: list[int]) -> None:
        items = self.plan.items_for(queries)
        self.queries_used += len(queries)
        self.tally.counts["total"] += len(items)
        self.header = self.header.with_total_items(self.tally.counts["total"])
        facts = load_queries(self.store, queries)
        ranked = self._retrieve(items)
        wanted = {c for f in facts.values() for c in f.oracle + f.pool}
        wanted |= {c for by_query in ranked.values() for top in by_query.values() for c in top}
        chunks = load_chunks(self.store, wanted)
        self.live_eta.add(queries)
        for system in self.plan.systems:
            todo = [i for i in items if i.system == system]
            stored = [i for i in todo if self.finished.get(self._key(i))]
            for item in stored:
                self.live_eta.done(item)
            self.tally.stored_before(len(stored))
            todo = [i for i in todo if not self.finished.get(self._key(i))]
            if not todo:
                continue                                # no model to load
            generator = self._generator(system.generator)
            model_key = generator.identity.key()
            requests = (Request(item, partial(self.answers.answer, item, self._key(item),
                                              generator, model_key, facts[item.query_rowid],
                                              ranked, chunks),
                                group=item.query_rowid) for item in todo)
            self.check_cancel()
            self.mark = self.live_eta.start(system.generator)
            handled = 0
            self.working = generator
            try:
                for outcome in in_flight(requests, name=system.generator,
                                         policy=self._policy(system.generator, generator),
                                         budget=self.budget, cancel=self.cancel,
                                         tick=self.emit,
                                         abort=getattr(generator, "abort", None)):
                    self._store(outcome, generator, model_key,
                                facts[outcome.key.query_rowid])
                    handled += 1
                    self.emit()
            finally:
                self.working = None
            self._keep_learned()
            if handled < len(todo):       # a cancel left some: stopped; none left: go on
                self.check_cancel()
        self.emit(force=True)

    def _key(self, item: PlanItem) -> tuple:
        return (item.system.label, self.plan.setting_of(item), item.query_rowid)

    def _policy(self, name: str, generator) -> Policy:
        """How many requests go out at once (the run's setting, else the generator's
        default), recorded in the header for this session."""
        n = self.config.concurrency or default_concurrency(generator)
        if self.header.concurrency.get(name) != n:
            self.header = self.header.with_concurrency(name, n)
            self._write_run()
        return Policy(concurrency=n, watchdog=watchdog_for(generator), seed=self.config.seed)

    # ----------------------------------------------------------------------- one outcome

    def _keep_learned(self) -> None:
        """On the job's thread: the contexts learned since, into the workspace and the log."""
        for key, name, tokens, message in self.answers.take_learned():
            keep_learned_context(self.store, key, tokens, message)
            learned = self.header.with_endpoint_context(name, tokens)
            if learned is not self.header:
                self.header = learned
                self._write_run()
            self._log("context", f"{name}: the server refused a prompt over its context of "
                                 f"{tokens} tokens; prompts are fitted to it from now on "
                                 "(kept in the workspace)")

    def _store(self, outcome: Outcome, generator, model_key, facts) -> None:
        """On the job's thread, in the plan's order: the item stored, or its error."""
        self._keep_learned()
        item = outcome.key
        key = self._key(item)
        self.current = key[:2]
        for event in getattr(generator, "take_host_events", list)():
            self._log("host", event)
        moment = time.perf_counter()
        took = moment - self.mark
        generated = outcome.ok and outcome.value.generation is not None
        self.live_eta.done(item, *((took, outcome.value.generation) if generated else ()))
        if not outcome.ok:
            message = outcome.message
            if outcome.status == "fatal":
                message = model_failed(item.system.generator, outcome.error).message
            self._error(key, self.answers.contexts.pop(key, None), message)
            return
        answer: Answer = outcome.value
        self.answers.contexts.pop(key, None)
        if outcome.attempts > 1:
            self._log("retry", f"{key[0]} · {key[1]} · query {key[2]}: answered after "
                               f"{outcome.attempts} attempts")
        if answer.error is not None:
            self._error(key, answer.prompt.context if answer.prompt else None, answer.error)
            return
        prompt, gen_key, text, generation = answer.prompt, answer.gen_key, answer.text, \
            answer.generation
        scores = None
        if generation is not None or not rows.is_scored(self.store, gen_key, item.query_rowid):
            scores = score_generation(text, facts.answers, language=facts.language,
                                      cited=self.template.cited)
        rows.write_item(self.store, self.run_id, key, gen_key, prompt, generation, scores,
                        model_key=model_key, model_name=getattr(generator, "name", key[0]),
                        params=params_json(self.plan.params(item.system)))
        self.finished[key] = gen_key
        self.tally.item(generation, prompt.truncated, took)
        self.mark = moment
        loose = (next((s.value for s in scores if s.metric == rows.LOOSE), None) if scores
                 else rows.stored_loose(self.store, gen_key, item.query_rowid))
        self.tally.label(key[0], key[1], loose)

    def _error(self, key, context, message: str) -> None:
        rows.write_error(self.store, self.run_id, key, context, message)
        self._log("error", f"{key[0]} · {key[1]} · query {key[2]}: {message}")
        self.tally.error()

    # ----------------------------------------------------------------------- the run row

    def _write_run(self, status: str | None = None) -> None:
        rows.write_run(self.store, self.run_id, self.header, status)

    @property
    def opened(self) -> bool:
        return self.run_id is not None

    def record(self, status: str, message: str | None) -> None:
        self.header = self.header.with_devices(self.tally.devices)
        if self.config.adaptive:
            self.header = self.header.with_adaptive(self.queries_used, self.stop_reason,
                                                    self.half_widths)
        if message:
            self.header = self.header.with_message(message)
        self._write_run(status)
        c = self.tally.counts
        try:        # best effort: the run row above already says how it ended
            self._log("end", f"{status}: {c['done']}/{c['total']} items ({c['generated']} "
                             f"generated, {c['cached']} stored or cached, {c['errors']} errors)"
                             + (f"; {message}" if message else ""))
        except sqlite3.Error:
            pass

    def _log(self, kind: str, message: str) -> None:
        if self.run_id is not None:
            log_event(self.store, self.run_id, kind, message)

    # ----------------------------------------------------------------------- adaptive

    def _precise_enough(self) -> bool:
        labels = rows.loose_labels(self.store, self.run_id)
        if self.config.adaptive_until == "difference":
            return self._difference_decided(labels)
        self.half_widths = ci_half_widths(labels, seed=self.config.seed)
        widest = max(self.half_widths.values(), default=float("inf"))
        self.emit(force=True, message=f"{self.queries_used} queries: widest 95% CI half-width "
                                       f"{fmt_points(widest)} (target "
                                       f"{fmt_points(self.config.adaptive_target)})")
        return widest < self.config.adaptive_target

    def _difference_decided(self, labels) -> bool:
        a, b = (s.label for s in self.plan.systems[:2])
        found = difference_interval(labels, a, b, seed=self.config.seed)
        if found["difference"] is None:
            return False
        self.half_widths = {f"{b} - {a} | em_loose": (found["hi"] - found["lo"]) / 2}
        self.header = self.header.with_adaptive_difference(
            a=a, b=b, **{k: found[k] for k in ("difference", "lo", "hi", "n")})
        verdict = "decided" if found["decided"] else "not decided yet"
        self.emit(force=True, message=(
            f"{self.queries_used} queries: {b} − {a} on EM_loose "
            f"{fmt_delta_interval(found['difference'], found['lo'], found['hi'])} over "
            f"{found['n']} queries ({verdict})"))
        return found["decided"]

    # ----------------------------------------------------------------------- reporting

    def event(self, status: str, message: str | None) -> JobEvent:
        t, c = self.tally, self.tally.counts
        return run_event(
            run=self.config.name, status=status, done=c["done"], total=c["total"],
            cached=c["cached"], generated=c["generated"], errors=c["errors"],
            truncated=c["truncated"], tokens_per_s=t.tokens_per_s,
            prompt_tokens_per_s=t.prompt_tokens_per_s,
            eta_seconds=(self.live_eta.seconds if self.live_eta is not None
                         else eta(c["done"], c["total"], t.item_seconds, c["generated"])),
            system=self.current[0], setting=self.current[1], queries=self.queries_used,
            accuracy=t.accuracy_pairs(), message=message,
            pace_note=self.live_eta and self.live_eta.busy_note(),
            **self._running(status))

    def _running(self, status: str) -> dict:
        """How long the item now running has run (since the last one was stored, or the
        requests went out) and its tokens so far, while the model works; nothing else."""
        if status != "running" or self.working is None:
            return {}
        return {"running_s": max(0.0, time.perf_counter() - self.mark),
                "running_tokens": tokens_so_far(self.working)}

    def summary(self, status: str, message: str | None) -> RunSummary:
        t, c = self.tally, self.tally.counts
        return RunSummary(
            run=self.config.name, run_id=self.run_id, status=status, message=message,
            total=c["total"], done=c["done"], generated=c["generated"], cached=c["cached"],
            errors=c["errors"], truncated=c["truncated"], queries=self.queries_used,
            seconds=time.perf_counter() - self.started, prompt_tokens=t.tokens["prompt"],
            prompt_tokens_evaluated=t.tokens["evaluated"],
            completion_tokens=t.tokens["completion"], generation_seconds=t.gen_seconds,
            stop_reason=self.stop_reason, half_widths=self.half_widths,
            devices=sorted(t.devices), **self._cut())

    def _cut(self) -> dict:
        """The run's answers cut at the token limit, from its stored items (none before the
        run has a row)."""
        if self.run_id is None:
            return {}
        try:
            cut, thinking = cut_totals(self.store, self.run_id)
        except sqlite3.Error:           # a failing store: the summary says why it failed
            return {}
        return {"cut": cut, "cut_while_thinking": thinking}
