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
