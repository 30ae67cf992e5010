"""The run engine: configs, plans and their order, sampling, truncation, the generation cache,
resume after cancel / crash / full disk, adaptive sampling. The CLI's run command is tested in
tests/cli/test_run_cli.py, real SmolLM2 runs (and kill -9) in tests/e2e/test_run_real.py.

Fakes only at the edge: a scripted generator that counts its calls, and (for plan order) a
retriever that ranks a query's pool backwards; the store, the engine and the metrics are real.
"""

from __future__ import annotations

import json
import threading

import pytest
from testkit.runs import SMOL, BackwardsRetriever, FakeGenerator, config, rows, run

from engine.datasets.demo_pool import ensure_demo
from engine.metrics.answer import LANGUAGE_VARIANTS, METRICS, SCORER_VERSION
from engine.runs import (
    SCORER_MARK,
    ConfigError,
    RunConfig,
    RunConfigMismatch,
    execute,
    generation_key,
    plan_run,
    stratified_order,
)
from engine.runs.estimates import estimate, measured_speeds
from engine.runs.prompting import PromptTooLong, fit_prompt, load_queries
from engine.runs.sampling import allocation, ci_half_widths
from engine.store import Store
from models.base import ModelIdentity

# --------------------------------------------------------------------------- config

def test_config_from_toml_with_overrides_and_checks(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text('name = "x"\ndataset = "demo"\ngenerators = ["a", "b"]\n'
                    'settings = ["base", "retrieved@3", "retrieved@1"]\n'
                    'retrievers = "minilm-l6-v2"\nsample = 10\n', encoding="utf-8")
    cfg = RunConfig.from_toml(path, seed=7, max_tokens=None)
    assert cfg.generators == ["a", "b"] and cfg.retrievers == ["minilm-l6-v2"]
    assert cfg.top_k == [1, 3] and cfg.seed == 7 and cfg.max_tokens == 64
    assert cfg.template == "mirage@1"
    bad = [
        ({"settings": ["retrieved@3"]}, "needs at least one retriever"),
        ({"settings": ["nope"]}, "unknown setting 'nope'"),
        ({"retrievers": ["m"]}, "no retrieved@k setting"),
        ({"sample": 0}, "sample: expected a positive integer"),
        ({"adaptive_target": 2.0}, "adaptive_target"),
        ({"template": "nope"}, "no prompt template"),
        ({"settings": ["retrieved@5"], "retrievers": ["m"], "reranker": "judge:x",
          "rerank_depth": 3}, "rerank_depth 3 is smaller"),
        ({"reranker": "x"}, "not 'judge:GENERATOR'"),
    ]
    for changes, message in bad:
        with pytest.raises(ValueError, match=message):
            config(**changes)
    with pytest.raises(ConfigError, match="unknown key.*colour"):
        RunConfig.from_dict({"dataset": "demo", "generators": "a", "colour": 1})
    path.write_text("dataset = [", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        RunConfig.from_toml(path)
    # no name: derived from what decides the results, so the same command finds the run again
    a = RunConfig(dataset="demo", generators=["g"], threads=1)
    b = RunConfig(dataset="demo", generators=["g"], threads=2, budget=9)
    assert a.name == b.name and a.name.startswith("demo-g-")
    assert RunConfig(dataset="demo", generators=["g"], seed=1).name != a.name


# --------------------------------------------------------------------------- sampling

def test_stratified_order_is_seeded_and_every_prefix_is_proportional():
    strata = [("s1", "en")] * 50 + [("s2", "en")] * 30 + [("s1", "de")] * 15 + [("s3", "es")] * 5
    order = stratified_order(strata, seed=3)
    assert sorted(order) == list(range(100))
    assert order == stratified_order(strata, seed=3)
    assert order != stratified_order(strata, seed=4)
    sizes = {("s1", "en"): 50, ("s2", "en"): 30, ("s1", "de"): 15, ("s3", "es"): 5}
    for n in range(1, 101):
        counts = allocation(strata, order, n)
        for key, size in sizes.items():
            assert abs(counts.get(key, 0) - n * size / 100) < 1.0 + 1e-9, (n, key)
    assert allocation(strata, order, 20) == {("s1", "en"): 10, ("s2", "en"): 6,
                                             ("s1", "de"): 3, ("s3", "es"): 1}


def test_a_sample_is_stratified_and_a_longer_one_extends_it(demo):
    small = plan_run(demo, config(sample=9), check_models=False)
    large = plan_run(demo, config(sample=30, name="t2"), check_models=False)
    assert large.queries[:9] == small.queries
    langs = [r[0] for r in demo.query(
        f"SELECT language FROM queries WHERE id IN ({','.join(map(str, small.queries))})")]
    assert sorted(langs) == ["de"] * 3 + ["en"] * 3 + ["es"] * 3
    every = plan_run(demo, config(sample=None, name="all"), check_models=False)
    assert every.queries == sorted(every.queries) and len(every.queries) == 60


# --------------------------------------------------------------------------- plan

def test_plan_size_and_order_share_prefixes(demo):
    cfg = config(generators=["g1", "g2"], sample=4,
                 settings=["oracle", "retrieved@3", "mixed", "base", "retrieved@1"],
                 retrievers=["r"])
    plan = plan_run(demo, cfg, check_models=False)
    assert plan.count == 4 * 2 * 5 == len(plan.items)
    assert plan.settings == ["base", "retrieved@1:r", "retrieved@3:r", "mixed", "oracle"]
    order = [(i.system.generator, i.query_rowid, plan.setting_of(i)) for i in plan.items]
    assert [g for g, _, _ in order] == ["g1"] * 20 + ["g2"] * 20      # one model at a time
    assert [q for _, q, _ in order[:20]] == [q for q in plan.queries for _ in range(5)]
    # executed: each retrieved@3 prompt extends its retrieved@1 prompt's first chunk
    gens = {"g1": FakeGenerator("g1"), "g2": FakeGenerator("g2")}
    summary = execute(demo, plan, generators=gens, retrievers={"r": BackwardsRetriever(demo)})
    assert summary.status == "done" and summary.generated == 40
    calls = gens["g1"].calls
    for q in range(4):
        base, r1, r3, mixed, oracle = calls[5 * q:5 * q + 5]
        assert "Answer : \n" in base and "Context : 1. " in r1
        prefix = r1.split("\n\nAnswer :")[0]
        assert r3.startswith(prefix + "\n2. ")
    stored = {r[0] for r in demo.query("SELECT DISTINCT setting FROM run_items")}
    assert stored == {"base", "oracle", "mixed", "retrieved@1:backwards#00000000",
                      "retrieved@3:backwards#00000000"}


def test_unknown_models_and_datasets_are_named_with_what_exists(demo):
    with pytest.raises(LookupError, match="no-such-model.*available generators: .*smollm2"):
        plan_run(demo, config(generators=["no-such-model"]))
    with pytest.raises(LookupError, match="retriever 'nope'.*available embedders: .*minilm"):
        plan_run(demo, config(generators=[SMOL], settings=["retrieved@1"], retrievers=["nope"]))
    with pytest.raises(LookupError, match="no dataset named 'nope' \\(known: demo\\)"):
        plan_run(demo, config(dataset="nope"))


def test_estimates_use_defaults_then_measured_speeds(demo):
    plan = plan_run(demo, config(generators=[SMOL], sample=4))
    speeds = measured_speeds(demo, [SMOL])
    assert speeds[SMOL].source.startswith("assumed 600/70")
    guess = estimate(demo, plan, speeds)
    assert guess["generators"][SMOL]["items"] == 12 and guess["seconds"] > 12 * 64 / 70
    with demo.write() as db:
        db.conn.executemany(
            "INSERT INTO generations (key, model_key, model_name, prompt, params, text, "
            "prompt_tokens, completion_tokens, prompt_tokens_evaluated, seconds, created_at) "
            "VALUES (?, 'm', ?, 'p', '{}', 't', 100, 10, 100, 1.0, 'now')",
            [(str(i), SMOL) for i in range(3)])
    measured = measured_speeds(demo, [SMOL])[SMOL]
    assert measured.source == "measured (3 generations in the store)"
    assert measured.prompt_tps == pytest.approx(100 + 600 / 70 * 10)
    # with enough rows both rates are fitted: here 200 prompt and 50 generated tokens/s
    with demo.write() as db:
        db.conn.execute("DELETE FROM generations")
        db.conn.executemany(
            "INSERT INTO generations (key, model_key, model_name, prompt, params, text, "
            "prompt_tokens, completion_tokens, prompt_tokens_evaluated, seconds, created_at) "
            "VALUES (?, 'm', ?, 'p', '{}', 't', ?, ?, ?, ?, 'later')",
            [(f"f{i}", SMOL, 50 * i, 5 + i, 50 * i, 50 * i / 200 + (5 + i) / 50)
             for i in range(1, 13)])
    fitted = measured_speeds(demo, [SMOL])[SMOL]
    assert (fitted.prompt_tps, fitted.gen_tps) == (pytest.approx(200), pytest.approx(50))


# --------------------------------------------------------------------------- truncation

def test_truncation_drops_chunks_from_the_end_then_errors(demo):
    from engine.prompts import get_template
    from engine.runs.prompting import load_chunks

    facts = next(iter(load_queries(demo, [demo.query("SELECT MIN(id) FROM queries")[0][0]])
                      .values()))
    chunks = load_chunks(demo, facts.pool)
    template = get_template("mirage")
    full = fit_prompt(FakeGenerator(n_ctx=100_000), template, facts, "mixed", facts.pool,
                      chunks, 64)
    assert not full.truncated and full.context == facts.pool
    per_chunk = full.tokens // 5
    small = FakeGenerator(n_ctx=full.tokens - per_chunk // 2 + 64)
    cut = fit_prompt(small, template, facts, "mixed", facts.pool, chunks, 64)
    assert cut.truncated and cut.context == facts.pool[:4]
    assert cut.tokens + 64 <= small.n_ctx
    with pytest.raises(PromptTooLong, match="even the first context chunk"):
        fit_prompt(FakeGenerator(n_ctx=80), template, facts, "mixed", facts.pool, chunks, 64)
    with pytest.raises(PromptTooLong, match="the question alone"):
        fit_prompt(FakeGenerator(n_ctx=40), template, facts, "base", None, chunks, 64)


def test_truncated_and_impossible_items_are_recorded(demo):
    gen = FakeGenerator(n_ctx=420)      # fits base and oracle, part of mixed
    plan, summary = run(demo, config(sample=3, max_tokens=16), {"fake-gen": gen})
    assert summary.status == "done" and summary.truncated == 3
    items = demo.query("SELECT setting, truncated, context, error FROM run_items")
    mixed = [r for r in items if r["setting"] == "mixed"]
    assert all(r["truncated"] == 1 and 0 < len(json.loads(r["context"])) < 5 for r in mixed)
    assert all(r["truncated"] == 0 for r in items if r["setting"] != "mixed")
    tiny = FakeGenerator(n_ctx=60)
    _, summary = run(demo, config(sample=3, max_tokens=16, name="tiny"), {"fake-gen": tiny})
    assert summary.status == "done" and summary.errors > 0
    errors = demo.query("SELECT error FROM run_items ri JOIN runs r ON r.id = ri.run_id "
                        "WHERE r.name = 'tiny' AND error IS NOT NULL")
    assert all("does not fit" in e[0] or "exceeds the context" in e[0] for e in errors)


# --------------------------------------------------------------------------- cache / resume

def test_second_run_generates_nothing_and_keys_are_exact(demo):
    gen = FakeGenerator()
    plan, first = run(demo, config(), {"fake-gen": gen})
    assert first.generated == 18 == len(gen.calls) and first.status == "done"
    before = rows(demo)
    again = FakeGenerator()
    _, second = run(demo, config(), {"fake-gen": again})
    assert again.calls == [] and second.generated == 0 and second.cached == 18
    assert rows(demo) == before
    g = demo.query("SELECT key, model_key, prompt, params FROM generations LIMIT 1")[0]
    from engine.runs.prompting import sampling_params

    assert g["key"] == generation_key(g["model_key"], g["prompt"], sampling_params(64, 0))
    assert json.loads(g["params"])["temperature"] == 0.0
    # every generation is scored once per query, with the scorer's version
    marks = demo.query("SELECT COUNT(*), MIN(detail) FROM scores WHERE metric = ?",
                       (SCORER_MARK,))[0]
    assert tuple(marks) == (18, SCORER_VERSION)
    # a second run name reuses the cache too
    other = FakeGenerator()
    _, third = run(demo, config(name="other"), {"fake-gen": other})
    assert other.calls == [] and third.cached == 18
    status = demo.query("SELECT status FROM runs WHERE name = 't'")[0][0]
    assert status == "done"


def test_cancelled_run_resumes_to_the_same_rows(tmp_path):
    whole = Store(tmp_path / "whole.db")
    ensure_demo(whole)
    run(whole, config())
    parts = Store(tmp_path / "parts.db")
    ensure_demo(parts)
    gen = FakeGenerator()
    stop = threading.Event()
    events = []

    def progress(event):
        events.append(event)
        if event.done >= 7:
            stop.set()

    _, first = run(parts, config(), {"fake-gen": gen}, cancel=stop, progress=progress,
                   min_interval=0)
    assert first.status == "cancelled" and first.done == 7 and len(gen.calls) == 7
    assert parts.query("SELECT status FROM runs")[0][0] == "cancelled"
    assert events[-1].status == "cancelled"
    again = FakeGenerator()
    _, second = run(parts, config(), {"fake-gen": again})
    assert second.status == "done" and len(again.calls) == 11 and second.cached == 7
    assert rows(parts) == rows(whole)


def test_a_crashing_generator_fails_the_run_and_resume_completes_it(demo):
    crashing = FakeGenerator(fail_on={5})
    _, first = run(demo, config(), {"fake-gen": crashing})
    assert first.status == "failed" and "scripted crash on call 5" in first.message
    run_row = demo.query("SELECT status, header FROM runs")[0]
    assert run_row["status"] == "failed"
    assert "scripted crash" in json.loads(run_row["header"])["message"]
    errored = demo.query("SELECT error FROM run_items WHERE error IS NOT NULL")
    assert len(errored) == 1 and "scripted crash" in errored[0][0]
    assert demo.query("SELECT COUNT(*) FROM generations")[0][0] == 4
    healthy = FakeGenerator()
    _, second = run(demo, config(), {"fake-gen": healthy})
    assert second.status == "done" and len(healthy.calls) == 14
    assert demo.query("SELECT COUNT(*) FROM run_items WHERE generation_key IS NOT NULL "
                      "AND error IS NULL")[0][0] == 18
    assert demo.query("SELECT COUNT(*) FROM generations")[0][0] == 18
    assert "message" not in json.loads(demo.query("SELECT header FROM runs")[0][0])


def test_a_full_disk_stops_cleanly_and_resumes(demo):
    gen = FakeGenerator()
    plan = plan_run(demo, config(), check_models=False)
    conn = demo.conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 4}")
    summary = execute(demo, plan, generators={"fake-gen": gen})
    assert summary.status == "failed" and summary.message.startswith("the disk is full")
    assert 0 < summary.done < 18
    conn.execute("PRAGMA max_page_count = 1073741823")
    # nothing half-written: every stored item has its generation and all its scores
    for item in demo.query("SELECT generation_key, query_rowid FROM run_items"):
        assert demo.query("SELECT 1 FROM generations WHERE key = ?", (item[0],))
        assert demo.query("SELECT COUNT(*) FROM scores WHERE generation_key = ? AND "
                          "query_rowid = ?", (item[0], item[1]))[0][0] == (
                              len(METRICS) + len(LANGUAGE_VARIANTS) + 1)
    stored = demo.query("SELECT COUNT(*) FROM run_items")[0][0]
    assert stored == summary.done
    again = FakeGenerator()
    _, resumed = run(demo, config(), {"fake-gen": again})
    assert resumed.status == "done" and len(again.calls) == 18 - stored
    assert demo.query("SELECT COUNT(*) FROM run_items")[0][0] == 18


def test_same_name_with_another_config_is_refused_unless_forced(demo):
    run(demo, config())
    with pytest.raises(RunConfigMismatch, match="differs in: seed.*--force-new"):
        plan_run(demo, config(seed=1), check_models=False)
    # how far and how fast a run goes may change between sessions
    plan_run(demo, config(threads=3), check_models=False)
    gen = FakeGenerator()
    plan = plan_run(demo, config(seed=1), force_new=True, check_models=False)
    summary = execute(demo, plan, generators={"fake-gen": gen})
    assert summary.status == "done" and len(gen.calls) == 18   # new seed: new keys
    assert json.loads(demo.query("SELECT config FROM runs")[0][0])["seed"] == 1
    assert demo.query("SELECT COUNT(*) FROM run_items")[0][0] == 18


def test_a_changed_model_file_is_refused_on_resume(demo):
    stop = threading.Event()
    run(demo, config(), cancel=stop, progress=lambda e: e.done >= 2 and stop.set(),
        min_interval=0)

    class Other(FakeGenerator):
        @property
        def identity(self):
            return ModelIdentity(self.name, "0" * 64, None, self.n_ctx, "fake")

    _, summary = run(demo, config(), {"fake-gen": Other()})
    assert summary.status == "failed" and "not the model this run started with" in \
        summary.message


# --------------------------------------------------------------------------- progress, scores

def test_progress_is_throttled_and_reports_accuracy(demo):
    events = []
    run(demo, config(), progress=events.append, min_interval=60)
    assert len(events) <= 3 and events[-1].status == "done"
    last = events[-1]
    assert (last.done, last.total, last.new) == (18, 18, 18)
    assert set(last.detail.accuracy["fake-gen/mirage@1"]) == {"base", "oracle", "mixed"}
    assert all(n == 6 for _, n in last.detail.accuracy["fake-gen/mirage@1"].values())
    every = []
    run(demo, config(name="again"), progress=every.append, min_interval=0)
    assert len(every) >= 18 and every[-1].cached == 18


def test_cited_template_scores_citations_and_stale_scores_are_redone(demo):
    _, summary = run(demo, config(template="mirage-bench", sample=2))
    metrics = {r[0] for r in demo.query("SELECT DISTINCT metric FROM scores")}
    assert "citations" in metrics and SCORER_MARK in metrics
    with demo.write() as db:
        db.conn.execute("UPDATE scores SET detail = 'answer-0' WHERE metric = ?", (SCORER_MARK,))
        db.conn.execute("DELETE FROM scores WHERE metric = 'em_strict'")
    again = FakeGenerator()
    _, second = run(demo, config(template="mirage-bench", sample=2), {"fake-gen": again})
    assert again.calls == []
    assert demo.query("SELECT COUNT(*) FROM scores WHERE metric = 'em_strict'")[0][0] == 6
    assert demo.query("SELECT COUNT(DISTINCT detail) FROM scores WHERE metric = ?",
                      (SCORER_MARK,))[0][0] == 1


# --------------------------------------------------------------------------- adaptive

def test_adaptive_sampling_stops_at_the_target_and_reuses_batches(demo):
    labels = {"s": {"base": {q: q % 2 for q in range(400)},
                    "oracle": {q: 1 for q in range(400)},
                    "mixed": {q: int(q % 3 > 0) for q in range(400)}}}
    widths = ci_half_widths(labels)
    assert set(widths) == {f"s | mixed | {m}" for m in ("nv", "ca", "ci", "cm")}
    assert all(w < 0.06 for w in widths.values())
    # all agree (every item context insensitive): the bootstrap collapses, Wilson does not
    flat = ci_half_widths({"s": {"base": {0: 0, 1: 0}, "oracle": {0: 0, 1: 0},
                                 "mixed": {0: 0, 1: 0}}})
    assert flat["s | mixed | ci"] > 0.3

    cfg = config(sample=None, adaptive_target=0.25, adaptive_batch=10, budget=40, name="ad")
    gen = FakeGenerator()
    plan, summary = run(demo, cfg, {"fake-gen": gen})
    assert plan.batches()[0] == plan.queries[:10] and len(plan.queries) == 40
    assert summary.status == "done" and summary.queries in (10, 20, 30, 40)
    header = json.loads(demo.query("SELECT header FROM runs WHERE name = 'ad'")[0][0])
    assert header["adaptive"]["stop_reason"] in ("target reached", "budget spent")
    assert header["total_items"] == summary.total == 3 * summary.queries
    if summary.stop_reason == "target reached":
        assert max(summary.half_widths.values()) < 0.25
    again = FakeGenerator()
    _, rerun = run(demo, cfg, {"fake-gen": again})
    assert again.calls == [] and rerun.queries == summary.queries
    # an unreachable target spends the budget, extending the same order
    tight = config(sample=None, adaptive_target=0.001, adaptive_batch=10, budget=25,
                   name="tight")
    plan2, spent = run(demo, tight)
    assert spent.stop_reason == "budget spent" and spent.queries == 25
    assert plan2.queries[:10] == plan.queries[:10]


def test_adaptive_until_the_paired_difference_is_decided(demo):
    """``adaptive_until="difference"`` (issue 16): sample batches until the paired 95% CI of
    the second system's EM minus the first's excludes 0, or the budget is spent."""
    answers = [a for (text,) in demo.query("SELECT answers FROM queries")
               for a in json.loads(text)]

    class Knows(FakeGenerator):           # every gold answer of the pool: always right
        def generate(self, messages, params):
            generation = super().generate(messages, params)
            generation.text = " ".join(answers)
            return generation

    class Dunno(FakeGenerator):           # never right
        def generate(self, messages, params):
            generation = super().generate(messages, params)
            generation.text = "I don't know"
            return generation

    cfg = config(generators=["dunno", "knows"], sample=None, adaptive_until="difference",
                 adaptive_batch=10, budget=40, name="diff")
    _, decided = run(demo, cfg, {"dunno": Dunno("dunno"), "knows": Knows("knows")})
    assert decided.status == "done" and decided.stop_reason == "difference decided"
    assert decided.queries == 10                                 # the first batch decides it
    header = json.loads(demo.query("SELECT header FROM runs WHERE name = 'diff'")[0][0])
    found = header["adaptive_difference"]
    assert (found["a"], found["b"], found["n"]) == ("dunno/mirage@1", "knows/mirage@1", 10)
    assert found["difference"] == 1.0 and found["lo"] > 0
    assert header["adaptive"]["stop_reason"] == "difference decided"

    # two systems that answer alike never decide: the budget is spent
    same = config(generators=["fake-a", "fake-b"], sample=None, adaptive_until="difference",
                  adaptive_batch=10, budget=30, name="same")
    _, spent = run(demo, same, {"fake-a": FakeGenerator("fake-a"),
                                "fake-b": FakeGenerator("fake-b")})
    assert spent.stop_reason == "budget spent" and spent.queries == 30

    with pytest.raises(ConfigError, match="needs two generators"):
        config(sample=None, adaptive_until="difference")
