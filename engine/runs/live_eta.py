"""The ETA of a job while it runs: the one estimator's figures (:mod:`engine.runs.estimates`)
for the steps left, scaled by the job's own pace, counting the step now running.

:class:`Pace` is one stream of steps finishing in order (a generator's items, a judge's
battles), each with its estimated wall seconds (in flight included). Measured seconds per
estimated second is its pace, from its first finished step. A step running past its estimate
counts as it goes: the pace is at least what it would be if that step finished now, so the
ETA grows while a slow step runs instead of freezing until it ends. Before any step
ends the pace is the ``prior`` (another stream's, else 1: the estimate as New run showed it).

:class:`LiveEta` keeps one :class:`Pace` per generator of a run, plus each generator's load
until it starts, and says when the run goes well below its model check's speed (a busy
machine): :meth:`LiveEta.busy_note`. It is a model of the work left: each item left (per model
and setting) at its model time, from the run's own timers blended with the estimate before
the run, plus the time an item takes beyond its model's, measured over every model's items and
added, never multiplied (:meth:`LiveEta.overhead`); items the generation cache holds cost
nothing; what an item's end changes fades in over seconds (:data:`SMOOTH_S`).
"""

from __future__ import annotations

import math
import time
from typing import Callable, Hashable

from engine.model_speeds import Speed, latest_model_speed, planned_backend, speeds_now
from engine.runs.estimates import (call_seconds, item_seconds, likely_cached, load_seconds,
                                   parallel_factor, planned_answer_tokens)
from engine.runs.plan import Plan, PlanItem
from engine.store import Store

PRIOR_ITEMS = 2.0
"""Once a generator's items time themselves, the items left are costed at this run's own
speeds, weighed against the estimate before the run as if that were this many items: one
item on a busy machine is one noisy sample, a speed measured in this workspace many (without
it, after its first item, a run's ETA swung from 0.81× to 1.36× of the time left). A speed
only assumed weighs nothing. Judging's pace weighs its first battles the same way
(:attr:`Pace.prior_steps`)."""

SMOOTH_S = 15.0
"""What an item's end changes in a run's Live ETA fades in with this time constant (seconds),
once :data:`SMOOTH_AFTER` of its items are done (:attr:`LiveEta.seconds`)."""
SMOOTH_AFTER = 0.05

BUSY_FACTOR = 2.5
"""Measured this many times slower than the model check: Live says the machine may be busy."""


class Pace:
    """Steps with estimated seconds, finishing in order; see the module doc. ``clock`` is
    injectable for tests (default :func:`time.perf_counter`)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter, min_steps: int = 1,
                 prior_steps: float = 0.0):
        self.clock, self.min_steps = clock, min_steps
        self.prior_steps = prior_steps      # the estimate's weight, as steps at pace 1
        self.left: dict[Hashable, float] = {}       # step -> estimated seconds, in order
        self.spent = self.expected = 0.0            # of the steps timed so far
        self.steps = 0
        self.mark: float | None = None              # since when the next step runs

    def add(self, step: Hashable, seconds: float) -> None:
        self.left.setdefault(step, seconds)

    def start(self) -> float:
        """The steps start running now (after a load); returns the clock's time."""
        self.mark = self.clock()
        return self.mark

    def done(self, step: Hashable, seconds: float | None = None) -> float | None:
        """``step`` finished, having taken ``seconds`` (None: no work, e.g. a cache hit);
        returns its estimate (None: not a step of this stream)."""
        cost = self.left.pop(step, None)
        if cost is not None and seconds is not None:
            self.spent += seconds
            self.expected += cost
            self.steps += 1
        if self.mark is not None:
            self.mark = self.clock()
        return cost

    def running(self) -> tuple[float, float]:
        """``(seconds the running step has run, its estimate)``; (0, 0) when none runs."""
        if self.mark is None or not self.left:
            return 0.0, 0.0
        return max(0.0, self.clock() - self.mark), next(iter(self.left.values()))

    def measured(self) -> float | None:
        """Seconds per estimated second of the finished steps, weighed against the estimate's
        pace of 1 as if it were ``prior_steps`` steps (:data:`PRIOR_ITEMS`: an estimate from a
        measurement here); None: too few yet."""
        if self.steps >= self.min_steps and self.expected > 0:
            return ((self.prior_steps + self.steps * self.spent / self.expected)
                    / (self.prior_steps + self.steps))
        return None

    def pace(self, prior: float | None = None) -> float:
        """The pace the steps left are taken at: measured (else ``prior``, else 1), raised to
        what it would be if the running step ended now, once that step overruns."""
        base = self.measured()
        base = base if base is not None else (prior if prior is not None else 1.0)
        elapsed, cost = self.running()
        if cost > 0 and elapsed > cost * base:
            return max(base, (self.spent + elapsed) / (self.expected + cost))
        return base

    def seconds(self, prior: float | None = None) -> float:
        """Seconds left: every step left at :meth:`pace`, less what the running one has run."""
        pace = self.pace(prior)
        elapsed, cost = self.running()
        return max(0.0, sum(self.left.values()) * pace - min(elapsed, cost * pace))


class LiveEta:
    """The Live ETA of a run: a :class:`Pace` per generator over its planned items (their
    estimated seconds divided by the in-flight speed-up), and each generator's load until it
    starts. A generator not measured yet takes the pace of those that are (the machine's load
    is the same); before any item the ETA is the estimate New run and ``--dry-run`` show
    (speeds corrected for the machine's load at the start). :meth:`running` says how long the
    item now running has run."""

    def __init__(self, store: Store, plan: Plan, min_items: int = 1,
                 clock: Callable[[], float] = time.perf_counter,
                 smooth_s: float = 0.0) -> None:
        self.store, self.plan, self.clock = store, plan, clock
        self.smooth_s = smooth_s                     # SMOOTH_S in a run; 0: the raw figure
        self.offset, self.offset_at = 0.0, 0.0       # shown minus raw, since (_fading)
        # corrected for the load now (a probe New run made just now, else the load average)
        self.speeds = speeds_now(store, plan.config.generators, wait=False)
        self.paces = {name: Pace(clock, min_items) for name in plan.config.generators}
        self.factor = {name: parallel_factor(*planned_backend(name),
                                             plan.config.concurrency)[1]
                       for name in plan.config.generators}
        self.loads = {name: load_seconds(store, name)[0] * self.speeds[name].factor
                      for name in plan.config.generators}
        self.checked = {name: latest_model_speed(store, name) for name in self.paces}
        self.at_check: dict[str, list[float]] = {}   # name -> [estimated s, at check speed s]
        self.tokens: dict[PlanItem, float] = {}      # item -> its estimated prompt tokens
        self.prior: dict[PlanItem, float] = {}       # item -> its seconds before the run
        self.first: dict[str, list[float]] = {}      # name -> [wall s, first estimates' s]
        self.timed: dict[str, list[float]] = {}      # name -> this run's timed generations:
        #   [estimated prompt tokens, evaluated, prompt s, generated, generation s, wall s, n]
        self.model_time: dict[str, list[float]] = {}  # name -> [estimated, measured] model s
        self.sized: dict[tuple[str, str], list[float]] = {}   # (name, setting) -> prompt
        #   tokens [estimated, evaluated] of its timed items: each setting's own size error
        self.finished = 0                            # items done, from the store or a model
        self.added = False

    @property
    def left(self) -> dict[PlanItem, float]:
        """Every item left, with its estimated seconds."""
        return {item: s for pace in self.paces.values() for item, s in pace.left.items()}

    def add(self, queries: list[int]) -> None:
        """A batch's queries join the run (its items are left to do until :meth:`done`)."""
        self.added = True
        cached = likely_cached(self.store, self.plan, queries)
        for item, tokens, seconds in item_seconds(self.store, self.plan, self.speeds, queries):
            name = item.system.generator
            if item in cached:                 # from the store: no model call, no time
                self.paces[name].add(item, 0.0)
                continue
            self.tokens[item] = tokens
            self.prior[item] = seconds / self.factor[name]
            self.paces[name].add(item, seconds / self.factor[name])
            checked = self.checked.get(name)
            if checked is not None:
                speed = checked[0]
                answer = planned_answer_tokens(self.store, self.plan, item.system,
                                               self.speeds[name])
                both = self.at_check.setdefault(name, [0.0, 0.0])
                both[0] += seconds
                both[1] += tokens / speed.prompt_tps + answer / speed.gen_tps

    def start(self, generator: str) -> float:
        """``generator`` is loaded and its requests go out now; returns the clock's time."""
        self.loads[generator] = 0.0
        return self.paces[generator].start()

    def done(self, item: PlanItem, seconds: float | None = None, generation=None) -> None:
        """``item`` is finished; ``seconds``: the wall time it took (None: no model call);
        ``generation``: its :class:`~models.base.Generation`, whose prompt and generation
        times (``extra``) give this run's own speeds from the first item (:meth:`_respeed`)."""
        name = item.system.generator
        shown = self.seconds if self.smooth_s > 0 and self.added else None
        cost = self.paces[name].done(item, seconds)
        if cost is not None:
            self.finished += 1
        self._done(item, name, cost, seconds, generation)
        if shown is not None and cost is not None:
            self._smooth_from(shown)

    def _done(self, item: PlanItem, name: str, cost: float | None, seconds: float | None,
              generation) -> None:
        if cost is None or seconds is None:
            return
        first = self.first.setdefault(name, [0.0, 0.0])
        first[0] += seconds
        first[1] += cost
        extra = getattr(generation, "extra", None) or {}
        if extra.get("prompt_seconds") and extra.get("generation_seconds"):
            timed = self.timed.setdefault(name, [0.0] * 7)
            for i, value in enumerate((self.tokens.get(item, 0.0),
                                       generation.prompt_tokens_evaluated,
                                       extra["prompt_seconds"], generation.completion_tokens,
                                       extra["generation_seconds"], seconds, 1)):
                timed[i] += value
            sized = self.sized.setdefault((name, self._setting(item)), [0.0, 0.0])
            sized[0] += self.tokens.get(item, 0.0)
            sized[1] += generation.prompt_tokens_evaluated
            both = self.model_time.setdefault(name, [0.0, 0.0])
            both[0] += self.prior.get(item, cost)
            both[1] += (extra["prompt_seconds"] + extra["generation_seconds"]) / self.factor[name]
            self._respeed(name)
            self._carry_over()

    def _respeed(self, name: str) -> None:
        """The items left of ``name`` at this run's own speeds (prompt and generated tokens a
        second, each from its own timer), its prompts' measured size against their estimate
        (per setting once that setting has an item timed: an oracle prompt and a mixed one
        are sized apart; else the model's), and its mean answer, weighed with their estimate
        before the run (:data:`PRIOR_ITEMS`); plus the seconds an item takes beyond its
        model's (:meth:`overhead`)."""
        guessed, evaluated, prompt_s, generated, gen_s, wall, n = self.timed[name]
        speed = Speed(evaluated / prompt_s, max(generated, 1) / gen_s, "this run")
        scale = evaluated / guessed if guessed > 0 else 1.0
        answer = min(generated / n, max(self.plan.max_tokens(s) for s in self.plan.systems
                                        if s.generator == name))
        pace = self.paces[name]
        overhead = self.overhead()
        weight = 0.0 if self.speeds[name].source.startswith("assumed") else PRIOR_ITEMS
        for item in pace.left:
            if item not in self.prior:
                continue                                   # from the store: free
            guessed_here, evaluated_here = self.sized.get((name, self._setting(item)),
                                                          (0.0, 0.0))
            here = evaluated_here / guessed_here if guessed_here > 0 else scale
            own = call_seconds(self.tokens.get(item, 0.0) * here, answer,
                               speed) / self.factor[name]
            pace.left[item] = (weight * self.prior[item] + n * own) / (weight + n) + overhead
        pace.spent, pace.expected, pace.steps = wall, wall, n      # its pace is in the costs

    def _setting(self, item: PlanItem) -> str:
        """``base``, ``oracle``, ``mixed``, ``retrieved@3``: what sizes an item's prompt."""
        return item.kind if item.kind != "retrieved" else f"retrieved@{item.k}"

    def overhead(self) -> float:
        """Seconds an item takes beyond its model's time (its prompt fitted, its answer
        scored and stored), a mean over every generator's timed items: the same work whatever
        the model, so it is added per item, never multiplied into a slower model's time (a
        135M model's short items once made a 270M model's look 75% longer)."""
        extra = sum(t[5] for t in self.timed.values()) - sum(
            m[1] for m in self.model_time.values())
        n = sum(t[6] for t in self.timed.values())
        return max(0.0, extra / n) if n else 0.0

    def _carry_over(self) -> None:
        """A generator with no item timed yet: its items at their estimate before the run,
        times the model pace the others measured (:meth:`_model_pace`) when slower (a busy
        machine slows every model), plus :meth:`overhead`."""
        pace_now, overhead = self._model_pace(), self.overhead()
        for name, pace in self.paces.items():
            if name in self.timed or pace.steps:
                continue
            for item in pace.left:
                if item in self.prior:
                    pace.left[item] = self.prior[item] * pace_now + overhead

    def _model_pace(self) -> float:
        """Model seconds measured (the models' own timers) against their estimate before the
        run, over the generators timed so far, when above 1; its square root: part of a
        model's error is the model's own (its prompts' size, its answers' length), part the
        machine's, which another model shares."""
        estimated = sum(m[0] for m in self.model_time.values())
        measured = sum(m[1] for m in self.model_time.values())
        return max(1.0, measured / estimated) ** 0.5 if estimated > 0 else 1.0

    def _prior(self) -> float | None:
        """The pace a generator not measured yet is taken at where no model reports its
        timers: the others' wall time against their first estimates, when slower (a busy
        machine slows every model; a model that beats its own estimate says nothing of
        another's); with timers :meth:`_carry_over` has costed its items already."""
        if self.timed:
            return None
        spent = sum(f[0] for f in self.first.values())
        expected = sum(f[1] for f in self.first.values())
        return max(1.0, spent / expected) if expected > 0 else None

    @property
    def seconds(self) -> float | None:
        """Seconds left; None before the first batch joined (nothing planned yet). With
        ``smooth_s``, what an item's end changes in the figure once :data:`SMOOTH_AFTER` of
        the items are done is not shown at once: it fades in with that time constant
        (:meth:`_fading`), while the figure counts down and grows with an overrunning item as
        before: a new model's first items or one slow item move it over seconds, never
        halve it at once."""
        if not self.added:
            return None
        return max(0.0, self._raw() + self._fading())

    def _raw(self) -> float:
        prior = self._prior()
        return sum(pace.seconds(None if pace.steps else prior)
                   + (self.loads[name] if pace.left else 0.0)
                   for name, pace in self.paces.items())

    def _fading(self) -> float:
        """What is left of the change the last items' ends made (shown minus the raw figure),
        fading with the time constant ``smooth_s``."""
        if not self.offset:
            return 0.0
        return self.offset * math.exp(-max(0.0, self.clock() - self.offset_at) / self.smooth_s)

    def _smooth_from(self, before: float) -> None:
        """An item's end changed the figure from ``before`` (as shown): keep showing that, and
        let the change fade in (:meth:`_fading`), once enough items are done."""
        total = self.finished + sum(len(pace.left) for pace in self.paces.values())
        if self.smooth_s <= 0 or not total or self.finished < SMOOTH_AFTER * total:
            return
        self.offset, self.offset_at = before - self._raw(), self.clock()

    def slowdown(self, generator: str) -> float | None:
        """How many times slower ``generator`` runs than its model check (None: no check,
        or nothing measured or running late yet)."""
        both = self.at_check.get(generator)
        checked = self.checked.get(generator)
        timed = self.timed.get(generator)
        if checked is not None and timed is not None:      # wall time against the check's
            speed = checked[0]
            at_check = call_seconds(timed[1], timed[3], speed) / self.factor[generator]
            return timed[5] / at_check if at_check > 0 else None
        pace = self.paces[generator]
        if not both or both[1] <= 0 or (pace.measured() is None and not pace.running()[0]):
            return None
        return pace.pace() * both[0] / both[1]

    def busy_note(self) -> str | None:
        """``running 5× slower than smollm2's model check: machine busy?`` when a generator
        runs :data:`BUSY_FACTOR` times slower than its check, else None."""
        for name in self.paces:
            ratio = self.slowdown(name)
            if ratio is not None and ratio >= BUSY_FACTOR:
                return f"running {ratio:.0f}× slower than {name}'s model check: machine busy?"
        return None
