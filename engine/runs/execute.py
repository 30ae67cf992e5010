"""Executing a plan: every generation stored as it finishes, resumable after anything.

Items run in the plan's order (generator, then query, then settings in prefix-sharing order)
through :mod:`engine.inflight`: up to ``concurrency`` requests out at once (a query's items
one after another), retried when a failure is transient, each outcome stored on this thread in
the plan's order. Each finished item is one transaction (:mod:`engine.runs.rows`). A run that is cancelled,
crashes or is killed with ``kill -9`` has only whole items stored; running it again skips
the items it has, answers every other item whose generation is already stored (by any run)
from the store, and generates only the rest: nothing is generated twice, no row is lost or
duplicated.

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

A server that refuses a prompt as too long, naming its context (an endpoint that reported
none, fitted to 8,192), teaches the run that context (:mod:`engine.runs.contexts`: kept in the
workspace for every later run) and the item is fitted again and asked once more; a server
that counted more prompt tokens than the run's estimate did makes later fits leave that much
room.
Running it again resumes. Adaptive runs take the plan's batches one after another and stop
when :func:`engine.runs.sampling.ci_half_widths` are all below the target. Progress goes to
a callback as :class:`~engine.jobs.JobEvent` (:func:`~engine.runs.events.run_event`), at most
one per ``min_interval`` seconds (and always the last one). A run is a
:class:`~engine.jobs.Job`: cancel, the end of a run and its errors follow that policy.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from functools import partial
from typing import Callable, Mapping

from engine.inflight import (ErrorBudget, Outcome, Policy, Request, default_concurrency,
                             in_flight, watchdog_for)
from engine.jobs import Job, JobEvent, eta, model_failed, per_second
from engine.metrics.answer import score_generation
from engine.prompts import get_template
from engine.results.units import fmt_delta_interval, fmt_points
from engine.runs import rows
from engine.runs.contexts import keep_learned_context
from engine.runs.live_eta import LiveEta
from engine.runs.events import RunSummary, run_event
from engine.runs.header import start_session
from engine.runs.log import log_event
from engine.runs.plan import Plan, PlanItem
from engine.runs.run_models import RunModels
from engine.runs.prompting import (PromptTooLong, context_length, context_rowids, fit_prompt,
                                   generation_key, load_chunks, load_queries, params_json,
                                   sampling_params)
from engine.runs.sampling import ci_half_widths, difference_interval
from engine.store import Store
from models.base import ContextOverflow

DISK_FULL = ("the disk is full (database or disk is full): the run stopped; every stored item "
             "is complete (each is one transaction). Free some space and run it again to "
             "resume.")


@dataclass(frozen=True)
class _Answer:
    """What a worker found for one item: its prompt and text (stored or new), or why not."""

    prompt: object
    gen_key: str | None
    text: str | None
    generation: object
    error: str | None = None


def execute(store: Store, plan: Plan, *, progress: Callable[[JobEvent], None] | None = None,
            cancel: threading.Event | Callable[[], bool] | None = None,
            generators: Mapping[str, object] | None = None,
            retrievers: Mapping[str, object] | None = None,
            min_interval: float = 0.1) -> RunSummary:
    """Run the plan (see the module docstring) and say how it ended. ``generators`` and
    ``retrievers`` map configured names to ready objects; others are loaded from the catalog
    (generators: ``models.catalog.load_generator`` with the run's n_ctx and threads) and from
    :class:`engine.retrieval.Retriever` (which indexes the pool on first use)."""
    return _Runner(store, plan, progress, cancel, dict(generators or {}),
                   dict(retrievers or {}), min_interval).run()


class _Runner(RunModels, Job):
    kind = "run"
    disk_full = DISK_FULL

    def __init__(self, store, plan, progress, cancel, generators, retrievers, min_interval):
        super().__init__(progress, cancel, min_interval)
        self.store, self.plan, self.config = store, plan, plan.config
        self.template = get_template(self.config.template)
        self.params = sampling_params(self.config.max_tokens, self.config.seed)
        self.params_json = params_json(self.params)
        self.generators, self.retrievers = generators, retrievers
        self.run_id: int | None = None
        self.header: dict = {}
        self.finished: dict[tuple, str | None] = {}   # item key -> generation key (None: todo)
        self.accuracy: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        self.counts = dict(done=0, total=0, cached=0, generated=0, errors=0, truncated=0)
        self.tokens = dict(prompt=0, evaluated=0, completion=0)
        self.gen_seconds = self.prompt_seconds = self.item_seconds = 0.0
        self.devices: set[str] = set()
        self.queries_used = 0
        self.current: tuple[str | None, str | None] = (None, None)
        self.stop_reason: str | None = None
        self.half_widths: dict[str, float] = {}
        self.recorded: set[str] = set()               # generators whose identity is recorded
        self.budget = ErrorBudget(self.config.max_errors)
        self.contexts: dict[tuple, list[int]] = {}    # item key -> context, while in flight
        self.slack: dict[str, int] = {}               # generator -> tokens its server counted
        #                                               beyond the run's estimate (refusals)
        self.learned: dict[str, tuple] = {}           # context key -> (generator, tokens,
        #                                               refusal), for the job's thread to keep
        self.mark = 0.0                               # when the last item was stored
        self.live_eta: LiveEta | None = None          # the ETA: estimate × the run's pace

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
        self.run_id = rows.save_plan(self.store, self.plan)
        stored = self.store.query("SELECT header FROM runs WHERE id = ?", (self.run_id,))[0][0]
        self.header = start_session(json.loads(stored), self.plan)
        self.header.pop("message", None)
        self._write_run(status="running")
        # the labels the run's retrieved items were stored under (they carry model hashes)
        for name, entry in self.header.get("retrievers", {}).items():
            if name in self.plan.retriever_labels and entry.get("label"):
                self.plan.retriever_labels[name] = entry["label"]
        self.finished = rows.finished_items(self.store, self.run_id)
        stored = sum(1 for v in self.finished.values() if v)
        sessions = len(self.header.get("sessions", []))
        self._log("session", f"session {sessions} started: " + (
            f"resumed, {stored} items stored already" if sessions > 1 or stored
            else "new run") + f", {self.plan.count} items planned")
        for system, by_setting in rows.loose_labels(self.store, self.run_id).items():
            for setting, by_query in by_setting.items():
                for query, value in by_query.items():
                    if self.finished.get((system, setting, query)):
                        self._count_label(system, setting, value)
        self.live_eta = LiveEta(self.store, self.plan)

    def _run_batch(self, queries: list[int]) -> None:
        items = self.plan.items_for(queries)
        self.queries_used += len(queries)
        self.counts["total"] += len(items)
        self.header["total_items"] = self.counts["total"]
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
            self.counts["done"] += len(stored)          # finished before: nothing to ask
            self.counts["cached"] += len(stored)
            todo = [i for i in todo if not self.finished.get(self._key(i))]
            if not todo:
                continue                                # no model to load
            generator = self._generator(system.generator)
            model_key = generator.identity.key()
            requests = (Request(item, partial(self._answer, item, generator, model_key,
                                              facts[item.query_rowid], ranked, chunks),
                                group=item.query_rowid) for item in todo)
            self.check_cancel()
            self.mark = self.live_eta.start(system.generator)
            handled = 0
            for outcome in in_flight(requests, name=system.generator,
                                     policy=self._policy(system.generator, generator),
                                     budget=self.budget, cancel=self.cancel, tick=self.emit,
                                     abort=getattr(generator, "abort", None)):
                self._store(outcome, generator, model_key, facts[outcome.key.query_rowid])
                handled += 1
                self.emit()
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
        if self.header.get("concurrency", {}).get(name) != n:
            self.header.setdefault("concurrency", {})[name] = n
            self.header["sessions"][-1].setdefault("concurrency", {})[name] = n
            self._write_run()
        return Policy(concurrency=n, watchdog=watchdog_for(generator), seed=self.config.seed)

    # ----------------------------------------------------------------------- one item

    def _answer(self, item, generator, model_key, facts, ranked, chunks) -> _Answer:
        """On a worker thread: the item's prompt, and its generation from the cache or the
        model. Model errors propagate (the in-flight policy retries, records or stops); a
        refusal of an overlong prompt that teaches a smaller fit is fitted again and asked
        once more (the module docstring)."""
        name = item.system.generator
        limit = self._limit(generator, name)
        try:
            context = context_rowids(item.kind, facts,
                                     ranked.get(item.retriever, {}).get(item.query_rowid),
                                     item.k)
            prompt = fit_prompt(generator, self.template, facts, item.kind, context, chunks,
                                self.config.max_tokens, n_ctx=limit)
        except (LookupError, PromptTooLong) as exc:
            return _Answer(None, None, None, None, str(exc))
        self.contexts[self._key(item)] = prompt.context
        try:
            return self._ask(generator, model_key, prompt)
        except ContextOverflow as exc:
            self._learn(generator, name, exc, prompt)
            refit = self._limit(generator, name)
            if refit >= limit:
                raise                       # nothing learned: the same prompt would fail
        try:
            prompt = fit_prompt(generator, self.template, facts, item.kind, context, chunks,
                                self.config.max_tokens, n_ctx=refit)
        except PromptTooLong as exc:
            return _Answer(None, None, None, None, str(exc))
        self.contexts[self._key(item)] = prompt.context
        try:
            return self._ask(generator, model_key, prompt)
        except ContextOverflow as again:
            raise ContextOverflow(f"{again} (asked again after fitting the prompt to {refit} "
                                  "tokens)", again.prompt_tokens, again.context_length) \
                from again

    def _ask(self, generator, model_key, prompt) -> _Answer:
        """The prompt's generation: stored already (by any run), or asked now."""
        gen_key = generation_key(model_key, prompt.text, self.params)
        text = rows.generation_text(self.store, gen_key)
        if text is not None:
            return _Answer(prompt, gen_key, text, None)
        generation = generator.generate(prompt.messages, self.params)
        return _Answer(prompt, gen_key, generation.text, generation)

    def _limit(self, generator, name: str) -> int:
        """The context a prompt of ``name`` is fitted to: its window, less the slack."""
        return context_length(generator) - self.slack.get(name, 0)

    def _learn(self, generator, name: str, exc: ContextOverflow, prompt) -> None:
        """From a refusal (on a worker thread): the context it names, when smaller than the
        generator's (an endpoint: ``learn_context``), and the tokens the server counted beyond
        the prompt's estimate."""
        learn = getattr(generator, "learn_context", None)
        if learn is None:
            return                          # a local model: its window is known exactly
        if 0 < exc.context_length < context_length(generator):
            learn(exc.context_length)
            key = getattr(generator, "context_key", None)
            if key is not None:
                self.learned[key] = (name, exc.context_length, str(exc))
        if exc.prompt_tokens > prompt.tokens:
            self.slack[name] = max(self.slack.get(name, 0), exc.prompt_tokens - prompt.tokens)

    def _keep_learned(self) -> None:
        """On the job's thread: the contexts learned since, into the workspace and the log."""
        for key in list(self.learned):
            name, tokens, message = self.learned.pop(key)
            keep_learned_context(self.store, key, tokens, message)
            endpoint = self.header.get("models", {}).get(name, {}).get("endpoint")
            if isinstance(endpoint, dict):
                endpoint["context_length"] = tokens
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
            self._error(key, self.contexts.pop(key, None), message)
            return
        answer: _Answer = outcome.value
        self.contexts.pop(key, None)
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
                        params=self.params_json)
        self.finished[key] = gen_key
        self.counts["done"] += 1
        self.counts["truncated"] += prompt.truncated
        if generation is None:
            self.counts["cached"] += 1
        else:
            self._count_generation(generation, took)
        self.mark = moment
        loose = (next((s.value for s in scores if s.metric == rows.LOOSE), None) if scores
                 else rows.stored_loose(self.store, gen_key, item.query_rowid))
        self._count_label(key[0], key[1], loose)

    def _error(self, key, context, message: str) -> None:
        rows.write_error(self.store, self.run_id, key, context, message)
        self._log("error", f"{key[0]} · {key[1]} · query {key[2]}: {message}")
        self.counts["done"] += 1
        self.counts["errors"] += 1

    def _count_generation(self, g, seconds: float) -> None:
        extra = g.extra or {}
        self.counts["generated"] += 1
        self.tokens["prompt"] += g.prompt_tokens
        self.tokens["evaluated"] += g.prompt_tokens_evaluated
        self.tokens["completion"] += g.completion_tokens
        self.gen_seconds += extra.get("generation_seconds", g.seconds)
        self.prompt_seconds += extra.get("prompt_seconds", 0.0)
        self.item_seconds += seconds
        if g.device:
            self.devices.add(g.device)

    def _count_label(self, system: str, setting: str, value) -> None:
        if value is not None:
            cell = self.accuracy[system][setting]
            cell[0] += int(round(value))
            cell[1] += 1

    # ----------------------------------------------------------------------- the run row

    def _write_run(self, status: str | None = None) -> None:
        rows.write_run(self.store, self.run_id, self.header, status)

    @property
    def opened(self) -> bool:
        return self.run_id is not None

    def record(self, status: str, message: str | None) -> None:
        self.header["devices"] = sorted(set(self.header.get("devices", [])) | self.devices)
        if self.config.adaptive:
            self.header["adaptive"] = {"queries": self.queries_used,
                                       "stop_reason": self.stop_reason,
                                       "half_widths": self.half_widths}
        if message:
            self.header["message"] = message
        self._write_run(status)
        c = self.counts
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
        self.header.setdefault("adaptive_difference", {}).update(
            {"a": a, "b": b, **{k: found[k] for k in ("difference", "lo", "hi", "n")}})
        verdict = "decided" if found["decided"] else "not decided yet"
        self.emit(force=True, message=(
            f"{self.queries_used} queries: {b} − {a} on EM_loose "
            f"{fmt_delta_interval(found['difference'], found['lo'], found['hi'])} over "
            f"{found['n']} queries ({verdict})"))
        return found["decided"]

    # ----------------------------------------------------------------------- reporting

    def event(self, status: str, message: str | None) -> JobEvent:
        c = self.counts
        return run_event(
            run=self.config.name, status=status, done=c["done"], total=c["total"],
            cached=c["cached"], generated=c["generated"], errors=c["errors"],
            truncated=c["truncated"],
            tokens_per_s=per_second(self.tokens["completion"], self.gen_seconds),
            prompt_tokens_per_s=per_second(self.tokens["evaluated"], self.prompt_seconds),
            eta_seconds=(self.live_eta.seconds if self.live_eta is not None
                         else eta(c["done"], c["total"], self.item_seconds, c["generated"])),
            system=self.current[0], setting=self.current[1], queries=self.queries_used,
            accuracy={s: {k: (v[0], v[1]) for k, v in by.items()}
                      for s, by in self.accuracy.items()},
            message=message, pace_note=self.live_eta and self.live_eta.busy_note())

    def summary(self, status: str, message: str | None) -> RunSummary:
        c = self.counts
        return RunSummary(
            run=self.config.name, run_id=self.run_id, status=status, message=message,
            total=c["total"], done=c["done"], generated=c["generated"], cached=c["cached"],
            errors=c["errors"], truncated=c["truncated"], queries=self.queries_used,
            seconds=time.perf_counter() - self.started, prompt_tokens=self.tokens["prompt"],
            prompt_tokens_evaluated=self.tokens["evaluated"],
            completion_tokens=self.tokens["completion"], generation_seconds=self.gen_seconds,
            stop_reason=self.stop_reason, half_widths=self.half_widths,
            devices=sorted(self.devices))
