"""The run header a run stores (``runs.header``) is byte for byte what it was before the header
became a typed :class:`engine.runs.header.RunHeader`: real runs by the run engine (scripted
generators at the edge; the clock, the package versions, the machine and its load fixed) record
every header text they write, first row to last, and the texts equal the golden file
``data/run_headers.json``, captured from the code that built the header as a dict.

The scenarios cover every update a run makes: a new run (two generators, a retriever with its
embedder, requests in flight), an adaptive run deciding a difference, a run a model crash stops
(its message) resumed in a second session (the message gone), and an endpoint whose refusal
teaches the run its context (the endpoint's ``context_length``).

``python tests/engine/test_run_header_stored.py`` writes the golden file again (only when the
stored header is meant to change)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).with_name("data") / "run_headers.json"

PACKAGES = {"mirage-tui": "0.0.0", "llama-cpp-python": None, "python": "3.x"}
MACHINE = {"platform": "TestOS-1", "machine": "x86_64", "processor": None, "cpu_count": 2}


def fix_the_world(monkeypatch) -> list[str]:
    """The clock, packages, machine and load as fixed values; returns the list every header
    text the run stores is appended to (the new row's, then each write)."""
    import engine.machine_load
    import engine.runs.header as header
    import engine.store.runs as run_table

    clock = iter(f"2026-01-01 00:00:{i:02d}" for i in range(60))
    monkeypatch.setattr(header, "now", lambda: next(clock))
    monkeypatch.setattr(header, "package_versions", lambda: dict(PACKAGES))
    monkeypatch.setattr(header, "machine", lambda: dict(MACHINE))
    load = engine.machine_load.MachineLoad(0.5, 2, "fixed")
    monkeypatch.setattr(engine.machine_load, "load_now", lambda wait=True: load)
    written: list[str] = []
    insert, write = run_table.insert_run, run_table.write_header

    def insert_run(db, name, dataset_id, config, text, at):
        written.append(text)
        return insert(db, name, dataset_id, config, text, at)

    def write_header(store, run_id, text, status, at):
        written.append(text)
        return write(store, run_id, text, status, at)

    monkeypatch.setattr(run_table, "insert_run", insert_run)
    monkeypatch.setattr(run_table, "write_header", write_header)
    return written


def _new_run(store) -> None:
    from testkit.runs import BackwardsRetriever, FakeGenerator, config, run
    from testkit.scripted import ScriptedModel

    retriever = BackwardsRetriever(store, label="backwards#0000abcd")
    retriever.embedder = ScriptedModel("emb-small", "e" * 64, backend="sentence-transformers")
    cfg = config(generators=["fake-a", "fake-b"], sample=4, concurrency=2, name="new",
                 settings=["base", "oracle", "mixed", "retrieved@3"], retrievers=["bw"])
    _, summary = run(store, cfg, {"fake-a": FakeGenerator("fake-a"),
                                  "fake-b": FakeGenerator("fake-b", backend="other")},
                     retrievers={"bw": retriever})
    assert summary.status == "done", summary.message


def _adaptive_difference(store) -> None:
    from testkit.runs import FakeGenerator, config, run

    answers = [a for (text,) in store.query("SELECT answers FROM queries")
               for a in json.loads(text)]

    class Knows(FakeGenerator):
        def generate(self, messages, params):
            generation = super().generate(messages, params)
            generation.text = " ".join(answers)
            return generation

    class Dunno(FakeGenerator):
        def generate(self, messages, params):
            generation = super().generate(messages, params)
            generation.text = "I don't know"
            return generation

    cfg = config(generators=["dunno", "knows"], sample=None, adaptive_until="difference",
                 adaptive_batch=10, budget=40, name="diff", concurrency=1)
    _, summary = run(store, cfg, {"dunno": Dunno("dunno"), "knows": Knows("knows")})
    assert summary.stop_reason == "difference decided"


def _crash_then_resume(store) -> None:
    from testkit.runs import FakeGenerator, config, run

    cfg = config(sample=3, name="crash", concurrency=1)
    _, first = run(store, cfg, {"fake-gen": FakeGenerator(fail_on={4})})
    assert first.status == "failed"
    _, again = run(store, cfg, {"fake-gen": FakeGenerator()})
    assert again.status == "done"


def _endpoint_context(store) -> list[tuple[str, str]]:
    from testkit.openai_server import fake_openai_server
    from testkit.runs import config, run

    from models.http.generator import HttpGenerator

    with fake_openai_server(models=("narrow-endpoint",)) as server:
        server.n_ctx, server.template_tokens = 600, 12
        gen = HttpGenerator(server.url, model="narrow-endpoint")
        cfg = config(generators=["narrow-endpoint"], settings=["base", "mixed"], sample=3,
                     concurrency=1, max_tokens=32, name="endpoint")
        _, summary = run(store, cfg, {"narrow-endpoint": gen})
        assert summary.status == "done", summary.message
        identity = gen.identity
        # what changes with the server's port, as placeholders
        return [(identity.key(), "<KEY>"), (identity.sha256, "<SHA>"), (server.url, "<URL>")]


SCENARIOS = {"new": _new_run, "adaptive_difference": _adaptive_difference,
             "crash_then_resume": _crash_then_resume, "endpoint_context": _endpoint_context}


def scenario_headers(store, monkeypatch, name: str) -> list[str]:
    """Every header text scenario ``name`` stores, in order (placeholders for what varies)."""
    written = fix_the_world(monkeypatch)
    varying = SCENARIOS[name](store) or []
    out = []
    for text in written:
        for value, placeholder in varying:
            text = text.replace(value, placeholder)
        out.append(text)
    return out


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_run_stores_the_header_text_it_stored_before(demo, monkeypatch, name):
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    written = scenario_headers(demo, monkeypatch, name)
    assert len(written) == len(golden[name])
    for i, (now, before) in enumerate(zip(written, golden[name])):
        assert now == before, f"{name}: header write {i} differs"


# --------------------------------------------------------------------------- reading

def test_every_golden_header_reads_and_writes_back_the_same_text():
    from engine.runs.header import RunHeader

    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for texts in golden.values():
        for text in texts:
            assert RunHeader.from_json(text).to_json() == text
            assert RunHeader.from_json(json.loads(text)).to_json() == text   # a report's dict


def test_an_older_header_reads_with_the_old_defaults_and_keeps_what_it_does_not_know():
    from engine.runs.header import RunHeader

    old = {"device": "cpu", "total_items": 12, "models": {"gen-a": {"sha256": "s" * 64}},
           "sessions": [{"started_at": "2025-01-01 00:00:00", "gpu": "none"}],
           "notes": ["kept"], "plan": {"count": 9, "new_thing": 1}}
    header = RunHeader.from_json(json.dumps(old))
    assert header.device == "cpu" and header.devices == () and header.total_items == 12
    assert header.models["gen-a"].sha256 == "s" * 64 and header.models["gen-a"].chat is True
    assert header.models["gen-a"].backend is None and header.retrievers == {}
    assert header.reranker is None and header.concurrency == {} and header.message is None
    assert header.sessions[0].load is None and header.sessions[0].concurrency == {}
    assert header.plan["count"] == 9
    assert header.extra == {"notes": ("kept",)} and header.sessions[0].extra == {"gpu": "none"}
    assert header.to_json() == json.dumps(old)              # nothing lost, nothing added
    later = header.with_message("stopped").with_concurrency("gen-a", 2)
    assert json.loads(later.to_json()) == {**old, "message": "stopped",
                                           "concurrency": {"gen-a": 2},
                                           "sessions": [{**old["sessions"][0],
                                                         "concurrency": {"gen-a": 2}}]}
    assert RunHeader.from_json("").to_json() == "{}" == RunHeader.from_json(None).to_json()
    with pytest.raises(ValueError):
        RunHeader.from_json("[1, 2]")


def test_a_part_of_another_shape_is_kept_as_it_came_and_reads_as_not_recorded():
    from engine.runs.header import RunHeader

    odd = {"models": {"gen-a": "sha-a"}, "sampling": None, "concurrency": 3,
           "devices": "cpu", "selection": "all"}
    header = RunHeader.from_json(odd)
    assert header.models == {} and header.sampling is None and header.concurrency == {}
    assert header.devices == () and header.selection is None
    assert header.to_json() == json.dumps(odd)


def test_a_header_is_frozen_and_each_update_is_a_new_one():
    import copy
    import dataclasses

    from engine.runs.header import RunHeader

    header = RunHeader.from_json({"models": {}, "sessions": [], "message": "failed"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        header.message = "x"                                   # type: ignore[misc]
    with pytest.raises(TypeError):
        header.models["a"] = None                              # type: ignore[index]
    assert copy.deepcopy(header) is header
    after = header.with_total_items(3).with_devices({"cpu"}).with_devices({"cuda:0"})
    assert header.total_items is None and after.total_items == 3
    assert after.devices == ("cpu", "cuda:0")
    # a key new to the header is written last; one it had stays where it was
    assert list(json.loads(after.to_json())) == ["models", "sessions", "message",
                                                 "total_items", "devices"]


def test_the_reranker_and_endpoint_updates_write_what_the_dict_header_wrote():
    from testkit.scripted import ScriptedModel

    from engine.runs.header import RunHeader, identity_json

    reranker = ScriptedModel("rr", "r" * 64)
    header = RunHeader.from_json({"reranker": None, "retrievers": {}})
    header = header.with_reranker("judge:rr", reranker, 10).with_retriever("emb", "emb+rr@10",
                                                                          None)
    recorded = {"spec": "judge:rr", "name": "rr", "identity": identity_json(reranker),
                "depth": 10}
    assert json.loads(header.to_json()) == {
        "reranker": recorded, "retrievers": {"emb": {"label": "emb+rr@10", "embedder": None,
                                                     "reranker": recorded}}}
    assert header.retriever_problem("emb", "emb+rr@10") is None
    assert "is not the one this run started with" in header.retriever_problem("emb", "other")
    # an endpoint's learned context replaces the one recorded; no endpoint: the same header
    endpoint = RunHeader.from_json({"models": {"e": {"endpoint": {"context_length": 8192,
                                                                  "url": "u"}},
                                               "m": {"backend": "llama.cpp"}}})
    learned = endpoint.with_endpoint_context("e", 600)
    assert learned.models["e"].endpoint == {"context_length": 600, "url": "u"}
    assert endpoint.with_endpoint_context("m", 600) is endpoint


def _write_golden() -> None:           # pragma: no cover - run by hand
    import tempfile

    from engine.datasets.demo_pool import ensure_demo
    from engine.store import Store

    out = {}
    for name in sorted(SCENARIOS):
        with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as mp:
            store = Store(Path(folder) / "w.db")
            ensure_demo(store)
            out[name] = scenario_headers(store, mp, name)
            store.close()
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":           # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    _write_golden()
