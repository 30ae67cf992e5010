# One idea: the in-flight loop and the rules it applies (transient or not, retries, the budget).
"""Requests in flight: up to N model calls outstanding, retried, timed out, and counted.

One policy for every backend and every job that calls a model item by item (runs, arena and
long-form judging). :func:`in_flight` takes :class:`Request` objects in the job's order and
yields one :class:`Outcome` per request, **in that same order**, on the caller's thread, so the
job stores its results in a deterministic order with its own transactions (the store has one
writer; the worker threads only call the model and read).

- **Concurrency.** Up to ``concurrency`` calls run at once on a ``concurrent.futures`` thread
  pool. Requests of one ``group`` (a run's query: base, oracle, mixed) run one after another in
  the job's order, so a backend that keeps the last prompt (llama.cpp's prefix reuse, a server
  slot with ``cache_prompt``) still reuses it; N groups are in flight at once. At concurrency 1
  the calls are exactly the job's order.
- **Timeouts.** A backend's own timeout (an HTTP generator's ``timeout``) ends a call that
  takes too long; a watchdog (``watchdog`` seconds after a call started; by default 1.5× that
  timeout plus 5 s) also turns a call that never returns into a failed attempt. The stalled
  thread is abandoned (Python cannot stop a thread), which is why the pool keeps a few spare
  workers.
- **Retries.** A transient failure (:func:`is_transient`: a refused or dropped connection, a
  timeout, HTTP 429 or 5xx, :class:`~models.base.TransientModelError`) is tried again after an
  exponential backoff with jitter (seeded), or after the exception's ``retry_after`` seconds
  when it carries one, up to ``max_attempts`` attempts in all. Then the request has *failed*.
- **What ends what** (:func:`ends_job`: one policy for every backend). Every model-side
  fault is an outcome like any other, ``failed``: retries spent, an unusable reply
  (:class:`~models.base.ReplyError`), a prompt over the context
  (:class:`~models.base.ContextOverflow`), an HTTP 4xx, a body that is not JSON, any other
  :class:`~models.base.ModelError`; the job records it as that item's error, with its reason,
  and goes on. Failures count against an :class:`ErrorBudget`; beyond it the job stops with
  :class:`~engine.jobs.Stop` (``failed``, resumable). Only a *fatal* outcome stops it at once,
  after the caller has recorded it: a model that cannot answer anything
  (:class:`~models.base.ModelUnusable`: a wrong key, a host that died twice), a database
  error (the job's policy: a full disk) or an exception that is no model error (a bug).
- **Cancel means now.** When ``cancel`` is set no new request is sent, and ``abort`` (the
  generator's, when it has one: an HTTP endpoint shuts its connections down) cuts the
  requests in flight: they end within moments and are dropped, not stored (a resumed run asks
  again); one that finished first is yielded and stored whole. Nothing is half-written. The
  caller checks cancel after the loop. Leaving the loop any other way (a Ctrl-C, a breached
  budget) aborts what is in flight too and waits for it at most :data:`ABORT_WAIT_S`.

``tick`` is called at least every ``TICK`` seconds while the caller waits, so a job keeps
sending progress while N requests are out. Hand-written because ``concurrent.futures`` has
no per-group ordering, retry or watchdog; ``Executor.map`` would block on a stalled head.
"""

from __future__ import annotations

import heapq
import http.client
import random
import socket
import sqlite3
import time
import urllib.error
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable, Hashable, Iterable, Iterator

from engine.jobs import Stop, is_cancelled, model_failed
from models.base import ContextOverflow, ModelError, ModelUnusable, ReplyError, TransientModelError

TICK = 0.1
MAX_ATTEMPTS = 4
BACKOFF_S = 0.5           # the first retry waits about this long, then 2×, 4×, ...
MAX_BACKOFF_S = 30.0
MAX_RETRY_AFTER_S = 120.0  # a server's Retry-After is honoured up to this
WATCHDOG_GRACE_S = 5.0
SPARE_WORKERS = 4         # threads beyond N for calls abandoned by the watchdog
DEFAULT_ENDPOINT_CONCURRENCY = 8
ABORT_WAIT_S = 2.0        # after an abort: how long the calls cut get to end


class WatchdogTimeout(TransientModelError):
    """A call still running past the watchdog's deadline: a failed (transient) attempt."""


# --------------------------------------------------------------------------- classification

def is_transient(exc: BaseException) -> bool:
    """Whether sending the same request again may succeed: a TransientModelError, an HTTP
    status 429 or 5xx (an exception with ``status``), or (anywhere in its cause chain) a
    refused, reset or dropped connection or a timeout. The project's own backends
    (``models.http.generator``, the model host's client) raise TransientModelError for these
    themselves; the status and chain checks cover a generator that only lets the transport's
    own exception through (a user's adapter, a test double). A context suppressed with
    ``raise ... from None`` is not followed."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, TransientModelError):
            return True
        if isinstance(exc, (ReplyError, ContextOverflow)):
            return False
        status = getattr(exc, "status", None)
        if isinstance(status, int) and (status == 429 or 500 <= status <= 599):
            return True
        if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
            reason = exc.reason
            if isinstance(reason, BaseException) and is_transient(reason):
                return True
        if isinstance(exc, (ConnectionError, TimeoutError, socket.timeout,
                            http.client.RemoteDisconnected, http.client.IncompleteRead)):
            return True
        # ``raise ... from None`` says the earlier error is not the cause: do not follow it
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return False


def ends_job(exc: BaseException) -> bool:
    """Whether a call's error (not transient) stops the job rather than failing its item: a
    model that cannot answer anything (:class:`~models.base.ModelUnusable`), a database error,
    or anything that is not a :class:`~models.base.ModelError` (a bug, a wrong argument).
    Every other model error is the item's (module docstring)."""
    if isinstance(exc, ModelUnusable) or isinstance(exc, sqlite3.Error):
        return True
    return not isinstance(exc, ModelError)


def default_concurrency(generator) -> int:
    """Requests to keep in flight for ``generator`` when the run does not say: what the
    generator declares (``max_concurrency``: a model host's parallel slots), else
    :data:`DEFAULT_ENDPOINT_CONCURRENCY` for an HTTP endpoint, else 1 (an in-process model
    answers one request at a time)."""
    declared = getattr(generator, "max_concurrency", None)
    if isinstance(declared, int) and not isinstance(declared, bool) and declared >= 1:
        return declared
    backend = getattr(generator, "backend", None) or getattr(
        getattr(generator, "identity", None), "backend", None)
    return DEFAULT_ENDPOINT_CONCURRENCY if backend == "http" else 1


def watchdog_for(generator) -> float | None:
    """The watchdog deadline for a generator with its own ``timeout`` (None: no watchdog)."""
    timeout = getattr(generator, "timeout", None)
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        return 1.5 * timeout + WATCHDOG_GRACE_S
    return None


# --------------------------------------------------------------------------- the error budget

def parse_max_errors(value) -> int | float | None:
    """``--max-errors``: an absolute count (``20``), a fraction (``0.1``) or a percentage
    (``10%``) of the items attempted; None keeps the default. A fraction or percentage stays a
    share even when it is whole: ``100%`` (or ``1.0``) means no budget, never one error."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"max_errors: expected a count or a fraction, got {value!r}")
    if isinstance(value, str):
        text = value.strip()
        try:
            if text.endswith("%"):
                value = float(text[:-1]) / 100
            else:
                value = float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            raise ValueError(f"max_errors: expected a count (20), a fraction (0.1) or a "
                             f"percentage (10%), got {text!r}") from None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, float) and 0 <= value <= 1:
        return value
    raise ValueError(f"max_errors: expected a count >= 0, a fraction in [0, 1] or a "
                     f"percentage, got {value!r}")


@dataclass
class ErrorBudget:
    """How many failed requests a job tolerates. ``max_errors`` an int: more than that many
    failures stop it; a fraction (default 0.1): more than that share of the requests attempted
    so far, once at least ``floor`` (5) have failed."""

    max_errors: int | float | None = None
    floor: int = 5
    attempted: int = 0
    failed: int = 0
    last_error: str | None = None

    def record(self, ok: bool, error: str | None = None) -> None:
        self.attempted += 1
        if not ok:
            self.failed += 1
            self.last_error = error

    @property
    def exceeded(self) -> bool:
        limit = 0.1 if self.max_errors is None else self.max_errors
        if isinstance(limit, int):
            return self.failed > limit
        return self.failed >= self.floor and self.failed > limit * self.attempted

    def describe(self) -> str:
        limit = 0.1 if self.max_errors is None else self.max_errors
        if isinstance(limit, int):
            return f"at most {limit}"
        return f"more than {limit:.0%} of those attempted, once {self.floor} have failed"


# --------------------------------------------------------------------------- requests

@dataclass
class Request:
    """One model call: ``call()`` runs on a worker thread and returns the value the caller
    stores. ``key`` names it for the caller; requests of one ``group`` run in order."""

    key: object
    call: Callable[[], object]
    group: Hashable | None = None


@dataclass
class Outcome:
    """How a request ended: ``status`` is ``ok`` (``value`` holds the result), ``failed``
    (retries spent, or a ReplyError: the item's error, the job goes on) or ``fatal`` (the job
    stops after the caller records it)."""

    key: object
    status: str
    value: object = None
    error: BaseException | None = None
    attempts: int = 1
    seconds: float = 0.0            # wall time of the successful (or last) attempt

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def message(self) -> str:
        if self.error is None:
            return ""
        text = f"{type(self.error).__name__}: {self.error}"
        return text if self.attempts == 1 else f"{text} (after {self.attempts} attempts)"


@dataclass
class Policy:
    """How :func:`in_flight` sends requests (module docstring)."""

    concurrency: int = 1
    watchdog: float | None = None
    max_attempts: int = field(default_factory=lambda: MAX_ATTEMPTS)
    backoff: float = field(default_factory=lambda: BACKOFF_S)
    max_backoff: float = field(default_factory=lambda: MAX_BACKOFF_S)
    seed: int = 0


@dataclass
class _Slot:
    index: int
    request: Request
    attempts: int = 0
    future: Future | None = None
    box: list = field(default_factory=list)      # [when the worker began the attempt]
    seconds: float = 0.0


@dataclass
class _State:
    waiting: deque = field(default_factory=deque)        # pulled, not sent yet (job order)
    running: dict = field(default_factory=dict)          # future -> slot
    retries: list = field(default_factory=list)          # heap of (ready_at, index, slot)
    busy: set = field(default_factory=set)               # groups with a request out
    done: dict = field(default_factory=dict)             # index -> Outcome, not yielded yet
    next_out: int = 0                                    # the index to yield next
    pulled: int = 0


def _timed(call: Callable[[], object], box: list) -> object:
    box.append(time.monotonic())
    return call()


def in_flight(requests: Iterable[Request], *, name: str, policy: Policy,
              budget: ErrorBudget | None = None, cancel=None,
              tick: Callable[[], None] | None = None,
              fatal: Callable[[Outcome], Stop] | None = None,
              abort: Callable[[], None] | None = None) -> Iterator[Outcome]:
    """Send ``requests`` (module docstring) and yield their outcomes in order. ``name`` (the
    model) goes into the messages of a breached budget and of a fatal error; ``fatal`` makes
    the :class:`Stop` of a fatal outcome (default: :func:`engine.jobs.model_failed`);
    ``abort`` cuts the calls in flight (a cancel, or leaving early)."""
    budget = budget if budget is not None else ErrorBudget()
    n = max(1, int(policy.concurrency))
    rng = random.Random(policy.seed)
    source = iter(requests)
    state = _State()
    exhausted = False
    stopping, stopped_at = False, 0.0
    pool = ThreadPoolExecutor(max_workers=n + SPARE_WORKERS, thread_name_prefix="in-flight")
    lookahead = 8 * n + 8

    def pull() -> bool:
        nonlocal exhausted
        if exhausted:
            return False
        try:
            request = next(source)
        except StopIteration:
            exhausted = True
            return False
        state.waiting.append(_Slot(state.pulled, request))
        state.pulled += 1
        return True

    def send(slot: _Slot) -> None:
        slot.attempts += 1
        slot.box = []
        slot.future = pool.submit(_timed, slot.request.call, slot.box)
        state.running[slot.future] = slot
        state.busy.add(_group(slot))

    def fill() -> None:
        now = time.monotonic()
        while state.retries and state.retries[0][0] <= now and len(state.running) < n:
            _, _, slot = heapq.heappop(state.retries)
            send(slot)
        while len(state.running) + len(state.retries) < n:
            chosen = None
            for slot in state.waiting:
                if _group(slot) not in state.busy:
                    chosen = slot
                    break
            if chosen is None:
                if len(state.waiting) >= lookahead or not pull():
                    return
                continue
            state.waiting.remove(chosen)
            send(chosen)

    def finish(slot: _Slot, status: str, value=None, error=None) -> None:
        state.busy.discard(_group(slot))
        state.done[slot.index] = Outcome(slot.request.key, status, value, error,
                                         slot.attempts, slot.seconds)

    def settle(future: Future, slot: _Slot, error: BaseException | None) -> None:
        del state.running[future]
        if error is None:
            finish(slot, "ok", future.result())
            return
        if stopping and not isinstance(error, sqlite3.Error):
            # cancelled (and the call cut): dropped, not stored; a resumed run asks again
            state.busy.discard(_group(slot))
            state.done[slot.index] = None
        elif isinstance(error, (ReplyError, ContextOverflow)):
            finish(slot, "failed", error=error)
        elif is_transient(error):
            if slot.attempts >= policy.max_attempts:
                finish(slot, "failed", error=error)
            else:
                heapq.heappush(state.retries,
                               (time.monotonic() + _delay(policy, slot.attempts, error, rng),
                                slot.index, slot))
        elif ends_job(error):
            finish(slot, "fatal", error=error)
        else:
            finish(slot, "failed", error=error)

    def collect(timeout: float) -> None:
        if not state.running:
            time.sleep(timeout)
            return
        finished, _ = wait(list(state.running), timeout=timeout, return_when=FIRST_COMPLETED)
        for future in finished:
            slot = state.running[future]
            slot.seconds = time.monotonic() - slot.box[0] if slot.box else 0.0
            settle(future, slot, future.exception())
        if policy.watchdog is not None:
            now = time.monotonic()
            for future, slot in list(state.running.items()):
                if slot.box and now - slot.box[0] > policy.watchdog:
                    slot.seconds = now - slot.box[0]
                    settle(future, slot, WatchdogTimeout(
                        f"{name}: no answer within the watchdog's {policy.watchdog:g} s"))

    interrupted = False
    try:
        while True:
            # yield what is finished, in order (the caller stores it and may stop us)
            while state.next_out in state.done:
                outcome = state.done.pop(state.next_out)
                state.next_out += 1
                if outcome is None:
                    continue
                yield outcome
                if outcome.status == "fatal":
                    if isinstance(outcome.error, sqlite3.Error):
                        raise outcome.error       # the job's policy: a full disk, ...
                    raise (fatal(outcome) if fatal is not None
                           else model_failed(name, outcome.error))
                budget.record(outcome.ok, None if outcome.ok else outcome.message)
                if budget.exceeded:
                    raise Stop("failed", f"{name}: {budget.failed} of {budget.attempted} "
                                         f"requests failed, beyond the error budget "
                                         f"({budget.describe()}); last error: "
                                         f"{budget.last_error}. The failed items are "
                                         "recorded; run it again to resume (they are retried)")
            if stopping and state.running and abort is not None:
                # a call that opened a connection since the last cut is cut too; one that
                # outlives ABORT_WAIT_S is left behind (dropped), so the job can stop
                abort()
                if time.monotonic() - stopped_at > ABORT_WAIT_S:
                    for slot in state.running.values():
                        state.busy.discard(_group(slot))
                        state.done[slot.index] = None
                    state.running.clear()
            if not stopping and is_cancelled(cancel):
                stopping, stopped_at = True, time.monotonic()
                if state.running and abort is not None:
                    abort()
                state.retries.clear()
                state.waiting.clear()
                # every request not in flight is dropped: mark them so order can move on
                for index in range(state.next_out, state.pulled):
                    if index not in state.done and not any(
                            s.index == index for s in state.running.values()):
                        state.done[index] = None
            if not stopping:
                fill()
            if not state.running and not state.retries and (stopping or (
                    exhausted and not state.waiting)):
                if not state.done:
                    return      # everything pulled was yielded (or dropped on cancel)
                continue        # after a cancel: the finished ones behind a dropped one
            wait_s = TICK
            if state.retries and len(state.running) < n:
                wait_s = max(0.0, min(TICK, state.retries[0][0] - time.monotonic()))
            collect(wait_s)
            if tick is not None:
                tick()
    except KeyboardInterrupt:
        interrupted = True          # a second Ctrl-C: stop at once
        raise
    finally:
        _drain(pool, state, policy, abort, wait_for_calls=not interrupted)


def _group(slot: _Slot):
    group = slot.request.group
    return ("#", slot.index) if group is None else group


def _delay(policy: Policy, attempts: int, error: BaseException, rng: random.Random) -> float:
    hint = _retry_after(error)
    if hint is not None:
        return min(hint, MAX_RETRY_AFTER_S)
    base = min(policy.max_backoff, policy.backoff * 2 ** (attempts - 1))
    return base * (0.5 + rng.random() / 2)            # jitter: half to the whole delay


def _retry_after(error: BaseException | None) -> float | None:
    while error is not None:
        hint = getattr(error, "retry_after", None)
        if isinstance(hint, (int, float)) and not isinstance(hint, bool) and hint >= 0:
            return float(hint)
        error = error.__cause__
    return None


def _drain(pool: ThreadPoolExecutor, state: _State, policy: Policy,
           abort: Callable[[], None] | None, wait_for_calls: bool = True) -> None:
    """The loop ended (done, stopped or interrupted): calls still running are cut (``abort``)
    and get :data:`ABORT_WAIT_S` to end, or, with nothing to cut them, finish or are abandoned
    after the watchdog (at once after a KeyboardInterrupt: a second Ctrl-C stops now); their
    results are not stored."""
    running = list(state.running)
    if running:
        if abort is not None:
            abort()
        if wait_for_calls:
            wait(running, timeout=ABORT_WAIT_S if abort is not None else policy.watchdog)
    pool.shutdown(wait=False, cancel_futures=True)

