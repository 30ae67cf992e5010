"""Real runs through the in-flight policy: against a loopback OpenAI-compatible server that
refuses, answers 500 and stalls past the timeout (tests/testkit/fault_server.py) through
``models.http.generator.HttpGenerator``; a model reply that cannot be used; a breached error budget; and
SmolLM2 in-process at concurrency 3 storing exactly what a sequential run stores.

Everything stored is checked in SQLite directly: every item is stored or recorded failed,
none twice, and a resumed run fills the failed ones.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from testkit.fault_server import FaultServer
from testkit.openai_server import fake_openai_server
from testkit.runs import SMOL, FakeGenerator, config, run

import engine.inflight
from engine.datasets.demo_pool import ensure_demo
from engine.store import Store
from models.base import ModelError, ReplyError
from models.http.generator import HttpGenerator


def item_rows(store) -> list[tuple]:
    return [tuple(r) for r in store.query(
        "SELECT system, setting, query_rowid, generation_key, error FROM run_items "
        "ORDER BY system, setting, query_rowid")]


def stored_answers(store) -> list[tuple]:
    """Item by item: the generated text and every score (the rowids are the same in two
    stores that imported the same demo pool)."""
    return [tuple(r) for r in store.query(
        "SELECT ri.system, ri.setting, ri.query_rowid, g.text, s.metric, s.value "
        "FROM run_items ri JOIN generations g ON g.key = ri.generation_key "
        "JOIN scores s ON s.generation_key = ri.generation_key "
        "AND s.query_rowid = ri.query_rowid ORDER BY 1, 2, 3, 5")]


@pytest.fixture
def quick_retries(monkeypatch):
    monkeypatch.setattr(engine.inflight, "BACKOFF_S", 0.05)
    monkeypatch.setattr(engine.inflight, "MAX_BACKOFF_S", 0.2)


def test_a_run_against_a_faulty_endpoint_stores_or_fails_every_item_then_resumes(
        demo, quick_retries):
    with FaultServer(seed=3, refuse=0.3, error=0.15, stall=0.1, stall_s=1.0) as server:
        generator = HttpGenerator(server.url, timeout=0.4)
        cfg = config(generators=["faulty"], sample=12, concurrency=4, max_errors="60%")
        _, first = run(demo, cfg, {"faulty": generator})
        assert first.status == "done" and first.total == 36
        assert set(server.faults) == {"refuse", "error", "stall", "ok"}
        items = item_rows(demo)
        stored = [r for r in items if r[3] is not None and r[4] is None]
        failed = [r for r in items if r[3] is None and r[4] is not None]
        assert len(items) == 36 == len(stored) + len(failed)
        assert len({r[:3] for r in items}) == 36                       # no duplicates
        assert failed and first.errors == len(failed) and first.generated == len(stored)
        assert all("after 4 attempts" in r[4] for r in failed)
        assert demo.query("SELECT COUNT(*) FROM generations")[0][0] == len(stored)
        header = json.loads(demo.query("SELECT header FROM runs")[0][0])
        assert header["concurrency"] == {"faulty": 4}
        assert header["sessions"][-1]["concurrency"] == {"faulty": 4}
        # the server behaves again: running it again asks for the failed items only
        server.faulty = False
        asked = sum(server.asked.values())
        _, second = run(demo, cfg, {"faulty": generator})
        assert second.status == "done" and second.errors == 0
        assert second.generated == len(failed) and second.cached == len(stored)
        assert sum(server.asked.values()) - asked == len(failed)
        items = item_rows(demo)
        assert len(items) == 36 and all(r[3] and r[4] is None for r in items)
        assert demo.query("SELECT COUNT(*) FROM generations")[0][0] == 36


class ReplyFails(FakeGenerator):
    """Answers unusably (a ReplyError) on the calls whose prompt contains ``marker``."""

    def __init__(self, marker: str, **kw):
        super().__init__(**kw)
        self.marker = marker

    def generate(self, messages, params):
        generation = super().generate(messages, params)
        if self.marker in self.calls[-1]:
            raise ReplyError(f"{self.name} answered None for this prompt")
        return generation


def test_a_reply_error_records_that_item_and_the_run_goes_on(demo):
    gen = ReplyFails("Context : ", fail_on=())
    cfg = config(settings=["base", "oracle"], sample=4)
    _, first = run(demo, cfg, {"fake-gen": gen})
    # oracle prompts carry a context: 4 items fail, the 4 base ones are stored
    assert first.status == "done" and first.errors == 4 and first.generated == 4
    errors = demo.query("SELECT setting, error FROM run_items WHERE error IS NOT NULL")
    assert {r[0] for r in errors} == {"oracle"}
    assert all("ReplyError: fake-gen answered None" in r[1] for r in errors)
    healthy = FakeGenerator()
    _, second = run(demo, cfg, {"fake-gen": healthy})
    assert second.status == "done" and len(healthy.calls) == 4 and second.errors == 0
    assert demo.query("SELECT COUNT(*) FROM run_items WHERE error IS NULL")[0][0] == 8


def test_every_model_fault_is_the_items_error_and_the_run_goes_on(demo):
    """One policy whatever the fault: an HTTP 4xx, a 200 that is not JSON, a 200 without
    choices, a plain ModelError, a ReplyError; only the budget ends the run."""
    with fake_openai_server(models=("faulty-endpoint",)) as server:
        gen = HttpGenerator(server.url, model="faulty-endpoint")
        server.faults = [400, "garbage", "empty", 404, 422]
        _, summary = run(demo, config(generators=["faulty-endpoint"], settings=["base"], sample=8,
                                      concurrency=1, max_errors=10), {"faulty-endpoint": gen})
        assert summary.status == "done", summary.message
        assert summary.errors == 5 and summary.generated == 3
        errors = [r[0] for r in demo.query(
            "SELECT error FROM run_items WHERE error IS NOT NULL")]
        assert all("/v1/chat/completions" in e for e in errors)
        for words in ("HTTP 400", "malformed JSON", "unexpected response", "HTTP 404",
                      "HTTP 422"):
            assert sum(words in e for e in errors) == 1, (words, errors)
        # a server that answers garbage to everything: the budget stops it, not the first
        server.faults = ["garbage"] * 100
        _, stopped = run(demo, config(generators=["faulty-endpoint"], settings=["base"], sample=12,
                                      concurrency=1, name="t2"), {"faulty-endpoint": gen})
        assert stopped.status == "failed"
        assert stopped.message.startswith("faulty-endpoint: 5 of 5 requests failed, beyond "
                                          "the error budget")
        assert "malformed JSON" in stopped.message


class PlainFault(FakeGenerator):
    """A plain ModelError (neither transient nor a bad reply) on every third call."""

    def generate(self, messages, params):
        generation = super().generate(messages, params)
        if len(self.calls) % 3 == 0:
            raise ModelError(f"{self.name}: out of memory for this prompt")
        return generation


def test_a_plain_model_error_is_the_items_error(demo):
    _, summary = run(demo, config(sample=4), {"fake-gen": PlainFault()})
    assert summary.status == "done" and summary.errors == 4 and summary.generated == 8
    errors = demo.query("SELECT error FROM run_items WHERE error IS NOT NULL")
    assert all("ModelError: fake-gen: out of memory" in r[0] for r in errors)


def test_a_wrong_key_stops_the_run_at_once(demo):
    with fake_openai_server(models=("faulty-endpoint",)) as server:
        server.faults = [401] * 10
        gen = HttpGenerator(server.url, model="faulty-endpoint")
        _, summary = run(demo, config(generators=["faulty-endpoint"], settings=["base"],
                                      sample=6, concurrency=1), {"faulty-endpoint": gen})
        assert summary.status == "failed" and "HTTP 401" in summary.message
        assert summary.done == 1 and len(server.faults) == 9


def test_a_cancel_cuts_the_requests_waiting_on_a_slow_endpoint(demo):
    """The TUI's cancel (an event into the run's job): the requests out are cut at once."""
    with fake_openai_server(models=("slow-endpoint",)) as server:
        server.quick, server.hold = 2, threading.Event()     # two answers, then none
        gen = HttpGenerator(server.url, model="slow-endpoint", timeout=600)
        cancel = threading.Event()
        done = []
        worker = threading.Thread(target=lambda: done.append(run(
            demo, config(generators=["slow-endpoint"], settings=["base"], sample=6,
                         concurrency=2), {"slow-endpoint": gen}, cancel=cancel)[1]))
        worker.start()
        deadline = time.monotonic() + 60
        while server.chats < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        cancel.set()
        worker.join(timeout=60)
        assert not worker.is_alive()             # the server still holds two answers: cut
        summary = done[0]
        assert summary.status == "cancelled" and summary.done == 2 and summary.errors == 0
        assert demo.query("SELECT COUNT(*) FROM run_items")[0][0] == 2


def test_an_error_budget_breach_stops_the_run_resumably(demo):
    broken = ReplyFails("", name="fake-gen")               # every reply is unusable
    _, first = run(demo, config(sample=6), {"fake-gen": broken})
    assert first.status == "failed"
    assert first.message.startswith("fake-gen: 5 of 5 requests failed, beyond the error "
                                    "budget") and "answered None" in first.message
    assert demo.query("SELECT status FROM runs")[0][0] == "failed"
    assert demo.query("SELECT COUNT(*) FROM run_items WHERE error IS NOT NULL")[0][0] == 5
    assert len(broken.calls) <= 6                          # stopped, not 18 calls
    # a larger budget lets it finish with every item recorded
    _, tolerant = run(demo, config(sample=6, max_errors=100), {"fake-gen": broken})
    assert tolerant.status == "done" and tolerant.errors == 18
    healthy = FakeGenerator()
    _, resumed = run(demo, config(sample=6), {"fake-gen": healthy})
    assert resumed.status == "done" and len(healthy.calls) == 18 and resumed.errors == 0


def test_smollm2_at_concurrency_3_stores_what_a_sequential_run_stores(tmp_path):
    from models.catalog import load_generator

    smol = load_generator(SMOL, n_ctx=2048, n_threads=1)
    stores = []
    for n in (1, 3):
        store = Store(tmp_path / f"c{n}.db")
        ensure_demo(store)
        cfg = config(generators=[SMOL], settings=["base", "oracle"], sample=3, max_tokens=12,
                     concurrency=n)
        _, summary = run(store, cfg, {SMOL: smol})
        assert summary.status == "done" and summary.generated == 6 and summary.errors == 0
        stores.append(store)
    sequential, concurrent = (stored_answers(s) for s in stores)
    assert len(sequential) > 6 and sequential == concurrent
