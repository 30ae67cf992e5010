"""Stop means stop on a local model: ``abort()`` reaches the model host (a real ``python -m
models.host`` serving the packaged SmolLM2), which cuts the request between two tokens and
serves the next one at once; a cancelled run (hosted, or in process) keeps its stored items
whole, stores nothing of the item it cut, and resumes by asking that item again.

Every check is on events and their order (the tokens generated against ``max_tokens``, the
host's log, what is stored), never on the wall clock."""

from __future__ import annotations

import re
import threading
import time

import pytest
from testkit.hosts import hosting  # noqa: F401 - a fixture
from testkit.runs import SMOL

from engine.runs import RunConfig, execute, plan_named
from models.base import RequestCancelled, SamplingParams
from models.catalog import load_generator
from models.host.client import HostedGenerator

ASK = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
LONG = [{"role": "user", "content": "Count from 1 to 5000, one number per line."}]
CUT = re.compile(r"request (\w+) cancelled after (\d+) token\(s\)")


def _host_log(gen: HostedGenerator) -> str:
    with open(gen.host.log, encoding="utf-8", errors="replace") as f:
        return f.read()


def test_abort_reaches_the_host_which_stops_and_serves_the_next_request(hosting):
    gen = load_generator(SMOL, n_threads=1)
    assert isinstance(gen, HostedGenerator)
    hosting.append(gen.host.pid)
    before = gen.generate(ASK, SamplingParams(max_tokens=12)).text
    assert gen.abort() is False                      # nothing out: nothing to cut
    ended: list[BaseException] = []

    def long_request():
        try:
            gen.generate(LONG, SamplingParams(max_tokens=2000))
        except BaseException as exc:  # noqa: BLE001 - what ended it, for the test
            ended.append(exc)

    worker = threading.Thread(target=long_request)
    worker.start()
    answered = []
    while worker.is_alive():                         # as engine.inflight does: until it ends
        time.sleep(0.5)
        answered.append(gen.abort())
    worker.join()
    assert len(ended) == 1 and isinstance(ended[0], RequestCancelled), ended
    assert True in answered                          # the host answered the cancel
    cut = ended[0].completion_tokens
    assert 0 <= cut < 2000                           # stopped before max_tokens
    log = _host_log(gen)
    assert "cancel: 1 request(s) running or waiting" in log
    assert [int(n) for _, n in CUT.findall(log)] == [cut]
    # the slot is free and the model's state whole: the next request answers as before
    assert gen.generate(ASK, SamplingParams(max_tokens=12)).text == before


def test_a_cancel_that_overtakes_its_request_refuses_it_when_it_comes(hosting):
    gen = load_generator(SMOL, n_threads=1)
    hosting.append(gen.host.pid)
    gen._out.add("early-1")
    assert gen.abort() is True                       # named before the request exists
    gen._out.discard("early-1")
    with pytest.raises(RequestCancelled, match="after 0 of 8 tokens"):
        gen._call("POST", "/mirage/generate", {"prompt": ASK, "request": "early-1",
                                               "params": SamplingParams(max_tokens=8).key()})
    with pytest.raises(ValueError, match="'request' must be"):
        gen._call("POST", "/mirage/generate", {"prompt": ASK, "request": "no spaces"})
    assert gen.generate(ASK, SamplingParams(max_tokens=4)).completion_tokens > 0


class _CancelOnSecond:
    """The run's generator, seen through: its second call sets the run's cancel as it starts
    (the engine then aborts it, within a tick) and keeps how each call ended (``ended``: set
    when the second has: a call the engine stopped waiting for goes on in its thread)."""

    def __init__(self, inner, cancel: threading.Event):
        self.inner, self.cancel = inner, cancel
        self.calls: list[object] = []
        self.ended = threading.Event()

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def generate(self, prompt, params):
        self.calls.append(None)
        if len(self.calls) == 2:
            self.cancel.set()
        index = len(self.calls) - 1
        try:
            out = self.inner.generate(prompt, params)
        except BaseException as exc:  # noqa: BLE001 - kept for the test
            self.calls[index] = exc
            raise
        else:
            self.calls[index] = out
            return out
        finally:
            if index == 1:
                self.ended.set()


def _stored(store) -> list[tuple]:
    return [tuple(r) for r in store.query(
        "SELECT i.query_rowid, i.error, g.key, g.text, g.completion_tokens FROM run_items i "
        "LEFT JOIN generations g ON g.key = i.generation_key ORDER BY i.query_rowid")]


@pytest.mark.parametrize("where", ["hosted", "in-process"])
def test_a_cancelled_local_run_keeps_whole_items_and_resumes_the_cut_one(hosting, demo, where):
    max_tokens = 96
    gen = load_generator(SMOL, n_threads=1, hosted=where == "hosted")
    if where == "hosted":
        hosting.append(gen.host.pid)
    config = RunConfig(dataset="demo", generators=[SMOL], settings=["base"], sample=2,
                       max_tokens=max_tokens, concurrency=1, name="stop")
    cancel = threading.Event()
    watched = _CancelOnSecond(gen, cancel)
    summary = execute(demo, plan_named(demo, config, check_models=False), cancel=cancel,
                      generators={SMOL: watched})
    assert summary.status == "cancelled" and summary.errors == 0
    assert watched.ended.wait(300)          # a guard against a hang, not a measure
    first, second = watched.calls
    assert not isinstance(first, BaseException) and first.completion_tokens > 0
    assert isinstance(second, RequestCancelled), second          # cut, not run to its end
    assert second.completion_tokens < max_tokens
    if where == "hosted":
        assert [int(n) for _, n in CUT.findall(_host_log(gen))] == [second.completion_tokens]
    stored = _stored(demo)
    assert len(stored) == 1 and stored[0][1] is None               # the first, whole
    assert stored[0][3] == first.text and stored[0][4] == first.completion_tokens
    assert demo.query("SELECT COUNT(*) FROM generations")[0][0] == 1   # nothing of the cut

    again = _CancelOnSecond(gen, threading.Event())
    resumed = execute(demo, plan_named(demo, config, check_models=False),
                      generators={SMOL: again})
    assert resumed.status == "done" and resumed.generated == 1     # only the cut item
    assert len(again.calls) == 1 and again.calls[0].completion_tokens > 0
    after = _stored(demo)
    assert stored[0] in after and len(after) == 2 and all(r[1] is None for r in after)
