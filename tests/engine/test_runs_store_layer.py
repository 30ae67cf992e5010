"""The runs package over the store layer (issue 28): its SQL lives in engine/store, it imports
neither results nor arena, the store imports no other engine package, a run is opened without
reading its header back (the one its plan was made with: one stored or deleted since is refused
in one line), and an item's write is the same few statements in one transaction."""

import re

import pytest

from engine.metrics.answer import score_generation
from engine.runs import plan_named, rows
from engine.runs.lookup import RunNotFound, load_run
from testkit.imports import find_modules, imports_of
from testkit.paths import ROOT
from testkit.runs import FakeGenerator, config, run
from testkit.sql_finder import raw_sql


def _engine_imports(package: str) -> list[tuple[str, int, str]]:
    return [(str(module.path.relative_to(ROOT)), imp.line, imp.base)
            for module in find_modules(ROOT, [package]).values()
            for imp in imports_of(module) if imp.top == "engine"]


def test_no_sql_in_the_runs_package():
    assert raw_sql(sorted((ROOT / "engine" / "runs").rglob("*.py")), ROOT) == []


def test_runs_imports_neither_results_nor_arena():
    bad = [f"{path}:{line} imports {base}" for path, line, base in _engine_imports("engine.runs")
           if base.startswith(("engine.results", "engine.arena"))]
    assert not bad, "\n".join(bad)


def test_the_store_imports_no_other_engine_package():
    bad = [f"{path}:{line} imports {base}" for path, line, base in _engine_imports("engine.store")
           if not (base == "engine" or base.startswith("engine.store"))]
    assert not bad, "\n".join(bad)


def _statements(store, action):
    """The SQL statements ``action()`` runs on this thread's connection of ``store``, each
    once: SQLite's own (triggers', FTS tables', PRAGMA reads: ``--`` or ``'main'.``) aside,
    and a statement traced again as its triggers run counted once."""
    seen: list[str] = []
    store.conn.set_trace_callback(seen.append)
    try:
        action()
    finally:
        store.conn.set_trace_callback(None)
    ours = [" ".join(s.split()) for s in seen
            if not s.startswith(("--", "PRAGMA")) and "'main'." not in s]
    return [s for i, s in enumerate(ours) if i == 0 or s != ours[i - 1]]


def test_a_run_is_opened_without_reading_its_header_back(demo):
    statements = _statements(demo, lambda: run(demo, config(sample=1, settings=["base"])))
    header_reads = [s for s in statements if re.match(r"SELECT header FROM runs\b", s)]
    assert header_reads == []
    # and the header it went on with is the stored one, sessions and all
    assert len(load_run(demo, "t").header.sessions) == 1
    run(demo, config(sample=1, settings=["base"]))
    assert len(load_run(demo, "t").header.sessions) == 2


def test_an_item_is_one_transaction_of_the_same_statements(demo):
    plan = plan_named(demo, config(sample=1, settings=["base"]), check_models=False)
    run_id = rows.save_plan(demo, plan)
    gen = FakeGenerator()
    prompt = type("Prompt", (), {"text": "<user>q", "context": [], "truncated": False})()
    generation = gen.generate([{"role": "user", "content": "q"}], None)
    scores = score_generation(generation.text, ["x"], language="en")
    key = ("fake-gen/mirage@1", "base", plan.items[0].query_rowid)
    statements = _statements(demo, lambda: rows.write_item(
        demo, run_id, key, "k1", prompt, generation, scores, model_key="m", model_name="m"))
    verbs = [" ".join(s.split()[:3]) for s in statements]
    assert verbs == ["BEGIN IMMEDIATE", "INSERT INTO generations",
                     "INSERT OR REPLACE", "DELETE FROM scores",
                     *["INSERT INTO scores"] * (len(scores) + 1),
                     "UPDATE runs SET", "COMMIT"]
    assert not [s for s in statements if s.startswith("SELECT")]


def test_an_unknown_run_names_the_nearest(demo):
    run(demo, config(sample=1, settings=["base"], name="alpha-run"))
    with pytest.raises(RunNotFound, match="no run named 'alpha-rn'.*alpha-run"):
        load_run(demo, "alpha-rn")


def test_a_plan_opens_the_run_it_was_made_with_and_says_when_that_changed(demo):
    """Opening a run reads nothing back: a name stored, or a run deleted, since the plan was
    made is refused with one line (plan it again), never a second row or a constraint error."""
    from engine.runs import RunConfigMismatch
    from engine.runs.manage import delete_run

    new = plan_named(demo, config(sample=1, settings=["base"]), check_models=False)
    assert new.existing_run is None
    run(demo, config(sample=1, settings=["base"]))                 # stored meanwhile
    with pytest.raises(RunConfigMismatch, match="'t' was stored since this one was planned"):
        rows.open_run(demo, new)
    resume = plan_named(demo, config(sample=1, settings=["base"]), check_models=False)
    assert resume.existing_run is not None
    delete_run(demo, "t")                                           # deleted meanwhile
    with pytest.raises(RunConfigMismatch, match="'t' was deleted since it was planned"):
        rows.open_run(demo, resume)
    assert demo.query("SELECT COUNT(*) FROM runs")[0][0] == 0
