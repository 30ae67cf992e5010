"""Arena test helpers shared by the engine and CLI tests: a run generator that answers from its
context (:class:`Answerer`), a finished run of them (:func:`answered_run`), judged by the kit's
:class:`~testkit.scripted.ScriptedJudge` (imported from here too) or one that stalls
(:class:`StallingJudge`), and a small LFRQA folder with
a reference-mode script."""

from __future__ import annotations

import json
import threading

from engine.arena.types import arena_system
from engine.runs import RunConfig, execute, plan_named
from testkit.scripted import (  # noqa: F401 - the arena tests import them from here
    ScriptedGenerator, ScriptedJudge, prefer_stronger, sections, strength)

A_BASE, A_ORACLE = arena_system("gen-a/mirage@1", "base"), arena_system("gen-a/mirage@1", "oracle")
B_BASE, B_ORACLE = arena_system("gen-b/mirage@1", "base"), arena_system("gen-b/mirage@1", "oracle")
CONTESTANTS = sorted([A_BASE, A_ORACLE, B_BASE, B_ORACLE])


# --------------------------------------------------------------------------- fakes

class Answerer(ScriptedGenerator):
    """The scripted generator of the arena runs: ``<name>: <start of the context>`` or
    ``<name>: I don't know``, with no ``render`` (the engine counts the messages' JSON)."""

    def __init__(self, name: str, decline=lambda question: False):
        def answer(text: str) -> str:
            _, _, context = text.partition("Context : ")
            if context and not decline(text):
                return f"{name}: {context.lstrip('1. ')[:50]}"
            if decline(text):
                return f"{name}: I don't know."
            return f"{name}: I don't know" if "gen-" in name else f"{name}: ok"

        super().__init__(name, answer, backend="fake", usage=lambda text: (10, 5, 10, 0.001),
                         renders=False)


class StallingJudge(ScriptedJudge):
    """Judges ``after`` calls, then says ``stalled`` on stdout and blocks for good inside the
    next: a judging process that a test signals or kills at a known point, however slow the
    machine (the test waits on that line, not on a clock)."""

    def __init__(self, *args, after: int = 2, **kwargs):
        super().__init__(*args, **kwargs)
        self.after = after

    def generate(self, prompt, params=None):
        if len(self.calls) >= self.after:
            print("stalled", flush=True)
            threading.Event().wait()
        return super().generate(prompt, params)


# --------------------------------------------------------------------------- runs

def answered_run(store, name="r", generators=("gen-a", "gen-b"), settings=("base", "oracle"),
                 dataset="demo", sample=3, answerers=None):
    """Plan and execute run ``name`` of ``generators`` (each an :class:`Answerer`, or
    ``answerers``) over ``sample`` queries of ``dataset``; returns its name. (The inspection
    workspace's runs with known labels are :func:`testkit.scripted_runs.make_run`'s.)"""
    cfg = RunConfig(dataset=dataset, generators=list(generators), settings=list(settings),
                    sample=sample, name=name)
    plan = plan_named(store, cfg, check_models=False)
    gens = answerers or {g: Answerer(g) for g in generators}
    summary = execute(store, plan, generators=gens)
    assert summary.status == "done", summary.message
    return name


def run_workspace(tmp_path):
    """A workspace file with the demo pool and :func:`answered_run`'s run ``r``; its path."""
    from engine.datasets.demo_pool import ensure_demo
    from engine.store import Store

    path = tmp_path / "w.db"
    store = Store(path)
    ensure_demo(store)
    answered_run(store)
    store.close()
    return path



def write_lfrqa(folder):
    """Two domains, three queries each."""
    folder.mkdir()
    for domain in ("science", "fiqa"):
        with (folder / f"annotations_{domain}_with_citation.jsonl").open("w") as fh:
            for i in range(3):
                fh.write(json.dumps({
                    "qid": f"{domain}-{i}", "question": f"{domain} question number {i}?",
                    "answer": f"The reference answer to {domain} {i}.",
                    "citation_numbers": [[1]], "gold_doc_ids": [i],
                    "faithful_answer_w_citation": f"The reference answer to {domain} {i}. [1]",
                }) + "\n")
    return folder


def against_reference(s: dict[str, str]) -> str:
    """RAG-QA Arena scheme: 'good' beats the reference, 'meh' ties it on science and loses on
    fiqa, a decline loses; science question 2 gets an unparseable reply."""
    if "science question number 2" in s["Question"]:
        return "I cannot decide between these."
    one, two = s["Answer 1"], s["Answer 2"]
    system_first = not one.startswith("The reference answer")
    answer = one if system_first else two
    if "I don't know" in answer or "meh" in answer and "fiqa" in s["Question"]:
        return "2" if system_first else "1"
    if "meh" in answer:
        return "0"
    return "1" if system_first else "2"


# --------------------------------------------------------------------------- labels

def import_reference_labels(store, folder, name: str = "people") -> str:
    """Ten labelled pairs with a reference answer each: people prefer the answer closer to the
    reference on nine (token F1 agrees 9/10), and see p9 the other way."""
    from engine.datasets.importing import import_path

    rows = []
    for i in range(10):
        good, bad = f"the answer is number {i}", "something else entirely"
        a, b = (good, bad) if i % 2 else (bad, good)
        human = -1 if i % 2 else 2            # people prefer the answer closer to the reference
        if i == 9:
            human = 1                         # one pair people see the other way
        for annotator in ("ann", "bob"):
            rows.append({"query": f"q{i}", "answer_a": a, "answer_b": b, "label": human,
                         "annotator": annotator, "reference": f"the answer is number {i}",
                         "pair_id": f"p{i}"})
    path = folder / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    import_path(store, path)
    return name


def drop_references(path_or_store) -> None:
    """Take every query's gold answers and reference answer away: no battle then has reference
    text, so no reference judge can judge it."""
    from engine.store import Store

    store = Store(path_or_store) if not isinstance(path_or_store, Store) else path_or_store
    with store.write() as db:
        db.conn.execute("UPDATE queries SET answers = '[]', reference_answer = NULL")
    if store is not path_or_store:
        store.close()


def give_long_form_references(store) -> None:
    """Give every query a long-form reference answer (as LFRQA's), keeping its gold answers:
    the arena's default judge then reads long-form references."""
    with store.write() as db:
        db.conn.execute("UPDATE queries SET reference_answer = 'In full: ' || text || ' The "
                        "answer, with its context, is ' || answers")


def judge_catalog(monkeypatch, judge, instruct: str) -> None:
    """The judge dialog's model list: a packaged base model (sorting first by name) and the
    local instruction-tuned ``instruct``; loading any model gives ``judge``."""
    import models.catalog
    from models.catalog import CatalogEntry

    def entry(name, chat, source):
        return CatalogEntry(name=name, kind="generator", path="/nowhere.gguf", installed=True,
                            install=None, size_bytes=None, quantization=None,
                            context_length=8192, license=None, chat=chat, source=source)

    entries = [entry("gemma3-270m", False, "packaged"), entry(instruct, True, "local")]
    monkeypatch.setattr(models.catalog, "list_models", lambda *a, **k: entries)
    monkeypatch.setattr(models.catalog, "endpoint_entries", lambda *a, **k: [])
    monkeypatch.setattr(models.catalog, "load_generator", lambda *a, **k: judge)
