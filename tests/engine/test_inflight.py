"""The in-flight policy (engine/inflight.py) on plain callables: order, overlap, per-group
order, retries with backoff and ``retry_after``, the watchdog, the error budget, cancel, and
which errors count as transient. Real threads and real clocks; each test well under a second.
The same policy on a real run against a misbehaving HTTP server is in test_inflight_faults.py.
"""

from __future__ import annotations

import http.client
import threading
import time
import urllib.error

import pytest

from engine.inflight import (ErrorBudget, Policy, Request, WatchdogTimeout,
                             default_concurrency, in_flight, is_transient, parse_max_errors)
from engine.jobs import Stop
from models.base import ModelError, ReplyError, TransientModelError
from models.http.generator import HttpStatusError


class Recorder:
    """Calls that sleep, and remember when each ran and how many ran at once. With
    ``together``, each call first waits until that many calls are running (it fails after
    30 s: a policy that runs fewer at once never gets past it)."""

    def __init__(self, seconds=0.0, together: int = 0):
        self.seconds = seconds
        self.barrier = threading.Barrier(together, timeout=30) if together else None
        self.lock = threading.Lock()
        self.active = self.peak = 0
        self.spans: dict = {}

    def call(self, key, fail=None):
        def run():
            with self.lock:
                self.active += 1
                self.peak = max(self.peak, self.active)
            start = time.monotonic()
            try:
                if self.barrier is not None:
                    self.barrier.wait()
                time.sleep(self.seconds)
                if fail is not None:
                    raise fail
                return key
            finally:
                with self.lock:
                    self.active -= 1
                    self.spans.setdefault(key, []).append((start, time.monotonic()))
        return run


def fast(**kw) -> Policy:
    return Policy(**{"backoff": 0.01, "max_backoff": 0.05, **kw})


def test_outcomes_come_in_order_while_n_calls_overlap():
    rec = Recorder(together=4)          # each call waits until four run at once
    requests = [Request(i, rec.call(i)) for i in range(12)]
    outcomes = list(in_flight(requests, name="m", policy=fast(concurrency=4)))
    assert [o.key for o in outcomes] == list(range(12))
    assert all(o.ok and o.value == o.key and o.attempts == 1 for o in outcomes)
    assert rec.peak == 4                            # four at once, never more
    one = Recorder(0.0)
    list(in_flight([Request(i, one.call(i)) for i in range(5)], name="m", policy=fast()))
    assert one.peak == 1


def test_a_group_runs_in_order_and_groups_overlap():
    rec = Recorder(0.05)
    requests = [Request((q, s), rec.call((q, s)), group=q) for q in range(4) for s in range(3)]
    outcomes = list(in_flight(requests, name="m", policy=fast(concurrency=3)))
    assert [o.key for o in outcomes] == [(q, s) for q in range(4) for s in range(3)]
    for q in range(4):
        spans = [rec.spans[(q, s)][0] for s in range(3)]
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))   # one after another
    assert rec.peak == 3


def test_transient_errors_are_retried_then_fail_the_item_and_the_rest_go_on():
    attempts = {"flaky": 0, "hint": 0}

    def flaky():
        attempts["flaky"] += 1
        if attempts["flaky"] < 3:
            raise TransientModelError("503 from the server")
        return "fine"

    class Busy(TransientModelError):
        retry_after = 0.2

    def hinted():
        attempts["hint"] += 1
        if attempts["hint"] == 1:
            raise Busy("429 slow down")
        return "fine"

    def down():
        raise ModelError("POST x: connection failed") from ConnectionRefusedError()

    def bad_reply():
        raise ReplyError("m answered None")

    started = time.monotonic()
    outcomes = list(in_flight(
        [Request("flaky", flaky), Request("hint", hinted), Request("down", down),
         Request("reply", bad_reply), Request("last", lambda: "ok")],
        name="m", policy=fast(concurrency=2), budget=ErrorBudget(10)))
    by = {o.key: o for o in outcomes}
    assert by["flaky"].ok and by["flaky"].attempts == 3
    assert by["hint"].ok and by["hint"].attempts == 2
    assert time.monotonic() - started >= 0.2                      # retry_after honoured
    assert by["down"].status == "failed" and by["down"].attempts == 4
    assert "after 4 attempts" in by["down"].message
    assert by["reply"].status == "failed" and by["reply"].attempts == 1   # never retried
    assert by["last"].ok


def test_any_other_error_is_fatal_after_the_caller_saw_it():
    seen = []
    with pytest.raises(Stop) as stop:
        for outcome in in_flight([Request(0, lambda: 1), Request(1, lambda: 1 / 0),
                                  Request(2, lambda: 2)], name="judge-x", policy=fast()):
            seen.append(outcome.status)
    assert seen == ["ok", "fatal"]
    assert stop.value.status == "failed" and "judge-x failed: ZeroDivisionError" in \
        stop.value.message


def test_the_error_budget_stops_with_the_model_and_the_last_error():
    def call(i):
        def run():
            if i % 2:
                raise ReplyError(f"reply {i} was None")
            return i
        return run

    seen = []
    with pytest.raises(Stop) as stop:
        for outcome in in_flight([Request(i, call(i)) for i in range(40)], name="smol",
                                 policy=fast(concurrency=3)):
            seen.append(outcome)
    failed = [o for o in seen if not o.ok]
    assert len(failed) == 5 and len(seen) == 10                   # 5 of 10 > 10%, floor 5
    message = stop.value.message
    assert message.startswith("smol: 5 of 10 requests failed") and "reply 9 was None" in message
    assert "run it again to resume" in message
    # an absolute budget
    with pytest.raises(Stop):
        list(in_flight([Request(i, call(i)) for i in range(40)], name="smol",
                       policy=fast(), budget=ErrorBudget(2)))
    assert len(list(in_flight([Request(i, call(i)) for i in range(8)], name="smol",
                              policy=fast(), budget=ErrorBudget(4)))) == 8


def test_the_watchdog_turns_a_stalled_call_into_a_failed_attempt():
    release = threading.Event()
    try:
        # the stuck call is released only after the outcomes (else it would return False
        # after 2 minutes, an ok outcome): its failure can only come from the watchdog
        outcomes = list(in_flight([Request("stuck", lambda: release.wait(120)),
                                   Request("next", lambda: "ok")],
                                  name="m", policy=fast(concurrency=2, watchdog=0.2,
                                                        max_attempts=2)))
        assert outcomes[0].status == "failed" and isinstance(outcomes[0].error,
                                                               WatchdogTimeout)
        assert outcomes[0].attempts == 2 and outcomes[1].ok
    finally:
        release.set()


def test_cancel_sends_nothing_new_and_keeps_what_finished():
    rec = Recorder(0.05)
    cancel = threading.Event()
    seen, pulled, cancelled_at = [], {}, None

    def requests():                    # pulled lazily, in the caller's thread, by fill()
        for i in range(20):
            pulled[i] = time.monotonic()
            yield Request(i, rec.call(i))

    for outcome in in_flight(requests(), name="m", policy=fast(concurrency=3), cancel=cancel):
        seen.append(outcome.key)
        if len(seen) == 4:
            cancelled_at = time.monotonic()
            cancel.set()
    assert seen == list(range(len(seen))) and 4 <= len(seen) < 20   # what finished: kept
    assert set(rec.spans) == set(seen)                              # all of it was yielded
    # nothing new after the cancel: every request that ran was taken before it (under load,
    # calls behind a slow one finish first and are yielded in order: no fixed upper bound)
    assert all(pulled[k] < cancelled_at for k in rec.spans)
    assert all(t < cancelled_at for t in pulled.values())


def test_which_errors_are_transient():
    assert is_transient(TransientModelError("x"))
    assert is_transient(HttpStatusError("HTTP 503", 503))
    assert is_transient(HttpStatusError("HTTP 429", 429))
    assert not is_transient(HttpStatusError("HTTP 404", 404))
    for cause in (ConnectionRefusedError(), TimeoutError(), http.client.RemoteDisconnected(),
                  urllib.error.URLError(ConnectionRefusedError())):
        try:
            raise ModelError("wrapped") from cause
        except ModelError as exc:
            assert is_transient(exc), cause
    assert not is_transient(ModelError("malformed JSON"))
    assert not is_transient(ReplyError("None"))
    assert not is_transient(ValueError("bug"))


def test_a_suppressed_context_is_not_a_cause():
    def adapter_error(suppress: bool) -> ModelError:
        try:
            try:
                raise ConnectionResetError("reset")
            except ConnectionResetError:
                if suppress:
                    raise ModelError("the reply was not JSON") from None
                raise ModelError("the connection dropped")
        except ModelError as exc:
            return exc

    assert is_transient(adapter_error(suppress=False))        # raised while handling it
    assert not is_transient(adapter_error(suppress=True))     # `from None`: not the cause


def test_max_errors_and_default_concurrency():
    assert parse_max_errors(None) is None
    assert parse_max_errors("20") == 20 and parse_max_errors(3) == 3
    assert parse_max_errors("10%") == 0.1 and parse_max_errors("0.25") == 0.25
    # a whole share stays a share: 100% is no budget at all, not "at most 1"
    assert isinstance(parse_max_errors("100%"), float) and parse_max_errors("100%") == 1.0
    budget = ErrorBudget(parse_max_errors("100%"))
    for _ in range(10):
        budget.record(False, "refused")
    assert not budget.exceeded
    for bad in ("many", -1, 1.5, "150%"):
        with pytest.raises(ValueError):
            parse_max_errors(bad)

    class Hosted:
        max_concurrency = 4

    class Endpoint:
        backend = "http"

    assert default_concurrency(Hosted()) == 4
    assert default_concurrency(Endpoint()) == 8
    assert default_concurrency(object()) == 1
