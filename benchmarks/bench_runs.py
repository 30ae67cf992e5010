"""The run engine against a bare llama-cpp-python loop, on a retrieval sweep over XQuAD en.

The sweep: SmolLM2-135M-Instruct, two retrievers (all-MiniLM-L6-v2 and multilingual-e5-small
4-bit), retrieved@1, @3 and @5 (MIRAGE template), N seeded XQuAD en queries (default 100).
Retrieval runs first and is not timed (its rankings are stored; the engine reads them back).

The queries are taken in blocks (default 4). For each block, in a rotating order so that a
machine getting busier or quieter weighs on all three alike: the engine (a run of its own,
nothing cached), a bare loop by setting, and a bare loop in the engine's order.

1. order: the engine (grouped by query, retrieved@1 ⊂ @3 ⊂ @5 for each retriever in turn, so
   the prompt cache keeps the question and the first chunks) against a bare loop that sends
   the very same prompt texts to ``llama_cpp.Llama.create_completion`` grouped by setting
   (all retrieved@1 prompts, then all @3, ...: how a simple script, or MIRAGE's reference
   code, runs). llama-cpp-python reuses a cached prefix by itself, so only the order differs.
   Both loops send each distinct prompt once, as the engine generates it once (two
   retrievers that agree on the top chunk give identical retrieved@1 prompts).
   Reports time ratio (bare / engine; goal >= 1.3) and prompt tokens evaluated.
2. overhead: the same bare loop on the engine's own order, against the engine's time with
   nothing cached (goal: bare / engine >= 0.97). The engine's time includes rendering,
   cache look-ups, scoring and one SQLite transaction per item; it is also split into the
   time spent inside ``LlamaGenerator.generate`` (the adapter) and the rest (bookkeeping).
3. the whole sweep as one run, every answer already in the generation cache, then that run
   once more (nothing at all to do), also as the command a user types (goal: seconds).

Also: tokens that each of a few candidate orders would evaluate (simulated from the prompts'
tokens and the longest-common-prefix rule llama.cpp applies), and how often the bare loop's
text equals the engine's for the same prompt (prefix reuse changes the batch shapes of the
forward pass, which can flip a greedy choice).

Timings are wall-clock and process CPU seconds (with one thread, CPU time is the steadier
number on a shared machine). ::

    .venv/bin/python benchmarks/bench_runs.py [--queries 100] [--max-tokens 32] [--threads 1]

Writes benchmarks/results/runs.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "xquad" / "xquad.en.json"

import llama_cpp  # noqa: E402

from engine.datasets.importing import import_path  # noqa: E402
from engine.runs import RunConfig, execute, plan_named  # noqa: E402
from engine.store import Store  # noqa: E402
from models.llama.generator import LlamaGenerator  # noqa: E402
from timing import Clock  # noqa: E402

SMOL = "smollm2-135m-instruct"
RETRIEVERS = ("minilm-l6-v2", "e5-small-q4")
SETTINGS = ("retrieved@1", "retrieved@3", "retrieved@5")


def retrieve_first(store: Store, queries: list[int]) -> dict:
    """Run (and store) the retrievals; the same retrievers are handed to the engine, so its
    timed run reads stored rankings instead of loading the embedders again."""
    from engine.retrieval import Retriever
    from models.catalog import load_embedder

    out = {}
    for name in RETRIEVERS:
        out[name] = Retriever(store, "xquad-en", load_embedder(name))
        out[name].retrieve(queries, depth=5)
    return out


def unique(prompts):
    """Each distinct prompt once, at its first place (two retrievers often agree on the top
    chunk, so some retrieved@1 prompts are identical: the engine generates them once)."""
    seen, out = set(), []
    for p in prompts:
        if p[3] not in seen:
            seen.add(p[3])
            out.append(p)
    return out


def planned_prompts(store: Store, plan, generator, retrievers) -> list[tuple]:
    """(setting, retriever, query, exact prompt) in the engine's order, built with the
    engine's own prompting code (checked against what the engine stores)."""
    from engine.prompts import get_template
    from engine.runs.prompting import context_rowids, fit_prompt, load_chunks, load_queries

    facts = load_queries(store, plan.queries)
    ranked = {name: {q: [c for c, _ in hits] for q, hits in
                     r.retrieve(plan.queries, depth=5).items()}
              for name, r in retrievers.items()}
    chunks = load_chunks(store, {c for by_q in ranked.values() for top in by_q.values()
                                 for c in top})
    template = get_template(plan.config.template)
    out = []
    for item in plan.items_for(plan.queries):
        query = facts[item.query_rowid]
        context = context_rowids(item.kind, query, ranked[item.retriever][item.query_rowid],
                                 item.k)
        prompt = fit_prompt(generator, template, query, item.kind, context, chunks,
                            plan.config.max_tokens)
        out.append((f"retrieved@{item.k}", item.retriever, item.query_rowid, prompt.text))
    return out


def engine_block(store: Store, cfg, block: list[int], number: int, generator, retrievers):
    """The engine on one block of queries, as its own run, nothing cached."""
    block_cfg = RunConfig(**{**cfg.as_json(), "name": f"bench-block-{number}"})
    plan = plan_named(store, block_cfg, check_models=False)
    plan.queries, plan.first_batch = list(block), len(block)
    generator.reset()
    with Clock() as clock:
        summary = execute(store, plan, generators={SMOL: generator}, retrievers=retrievers)
    assert summary.status == "done", summary.message
    return clock, summary


def by_setting(prompts):
    """The naive order: every prompt of a setting (and retriever), then the next setting."""
    order = {(s, r): i for i, (s, r) in enumerate(
        (s, r) for r in RETRIEVERS for s in SETTINGS)}
    place = {id(p): i for i, p in enumerate(prompts)}
    return sorted(prompts, key=lambda p: (order[(p[0], p[1])], place[id(p)]))


def evaluated_tokens(token_lists: list[list[int]]) -> int:
    """Prompt tokens llama.cpp evaluates for these prompts in this order: all but the longest
    prefix shared with the previous prompt (at least the last token is evaluated)."""
    total, previous = 0, []
    for tokens in token_lists:
        common = 0
        for a, b in zip(previous, tokens):
            if a != b:
                break
            common += 1
        total += len(tokens) - min(common, len(tokens) - 1)
        previous = tokens
    return total


def greedy_within_query(prompts, tokens):
    """Candidate order: per query, always the remaining prompt sharing the longest prefix."""
    out, last = [], []
    queries = list(dict.fromkeys(p[2] for p in prompts))
    for q in queries:
        todo = [p for p in prompts if p[2] == q]
        while todo:
            def shared(p):
                t = tokens[p[3]]
                n = 0
                for a, b in zip(last, t):
                    if a != b:
                        break
                    n += 1
                return n
            best = max(todo, key=shared)
            todo.remove(best)
            out.append(best)
            last = tokens[best[3]]
    return out


def bare_loop(llm: llama_cpp.Llama, prompts, max_tokens: int, seed: int) -> dict:
    llm.reset()
    texts = []
    with Clock() as clock:
        for _, _, _, prompt in prompts:
            out = llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0,
                                        top_p=1.0, top_k=40, min_p=0.0, repeat_penalty=1.0,
                                        seed=seed)
            texts.append(out["choices"][0]["text"])
    return {"seconds": clock.wall, "cpu_seconds": clock.cpu, "texts": texts}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--block", type=int, default=4,
                        help="queries per interleaved block (at least 2)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "runs.json")
    args = parser.parse_args()
    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    store = Store(tmp / "w.db")
    import_path(store, DATA, format="squad", name="xquad-en")
    cfg = RunConfig(dataset="xquad-en", generators=[SMOL], settings=list(SETTINGS),
                    retrievers=list(RETRIEVERS), sample=args.queries, seed=args.seed,
                    max_tokens=args.max_tokens, threads=args.threads, name="bench")
    plan = plan_named(store, cfg)
    with Clock() as retrieval:
        retrievers = retrieve_first(store, plan.queries)
    generator = LlamaGenerator.load(SMOL, n_threads=args.threads)
    bare = llama_cpp.Llama(str(generator.path), n_ctx=generator.n_ctx,
                           n_threads=args.threads, n_threads_batch=args.threads,
                           n_gpu_layers=generator.n_gpu_layers, verbose=False)
    bare.create_completion("Hello", max_tokens=2)            # warm-up, both instances
    generator.generate("Hello", _params(2, args.seed))
    from engine.metrics.answer import score_generation

    score_generation("warm-up of the language identifier", ["x"], language="en")

    # 1 + 2, interleaved: for each block of queries the engine (a run of its own, nothing
    # cached), the bare loop by setting and the bare loop in the engine's order, in a rotating
    # order so that a machine getting busier or quieter weighs on all three alike
    all_prompts = planned_prompts(store, plan, generator, retrievers)
    prompts = unique(all_prompts)
    naive = unique(by_setting(all_prompts))
    totals = {k: {"wall": 0.0, "cpu": 0.0} for k in ("engine", "naive", "same")}
    texts: dict[str, dict[str, str]] = {"naive": {}, "same": {}}
    summaries = []
    blocks = [plan.queries[i:i + args.block] for i in range(0, len(plan.queries), args.block)]
    for number, block in enumerate(blocks):
        mine = [p for p in all_prompts if p[2] in set(block)]

        def engine(block=block, number=number):
            clock, summary = engine_block(store, cfg, block, number, generator, retrievers)
            summaries.append(summary)
            return {"seconds": clock.wall, "cpu_seconds": clock.cpu, "texts": []}

        jobs = [("engine", engine),
                ("naive", lambda mine=mine: bare_loop(bare, unique(by_setting(mine)),
                                                      args.max_tokens, args.seed)),
                ("same", lambda mine=mine: bare_loop(bare, unique(mine), args.max_tokens,
                                                     args.seed))]
        shift = number % 3
        for kind, job in jobs[shift:] + jobs[:shift]:
            done = job()
            totals[kind]["wall"] += done["seconds"]
            totals[kind]["cpu"] += done["cpu_seconds"]
            if kind != "engine":
                order = unique(by_setting(mine)) if kind == "naive" else unique(mine)
                texts[kind].update((p[3], t) for p, t in zip(order, done["texts"]))
    stored_prompts = {r[0] for r in store.query("SELECT prompt FROM generations WHERE "
                                                "model_name = ?", (SMOL,))}
    assert {p[3] for p in prompts} <= stored_prompts, "planned prompts differ from the engine's"
    adapter_seconds = store.query("SELECT SUM(g.seconds) FROM generations g WHERE g.key IN "
                                  "(SELECT generation_key FROM run_items)")[0][0]

    # 3: the whole sweep as one run (every answer already in the generation cache), then the
    # same run again, in this process and as the command a user types
    with Clock() as cached_clock:
        from_cache = execute(store, plan_named(store, cfg), generators={SMOL: generator},
                             retrievers=retrievers)
    with Clock() as again_clock:
        again = execute(store, plan_named(store, cfg))
    with Clock() as cli_clock:
        code = "import sys; from mirage_tui.cli import main; sys.exit(main(sys.argv[1:]))"
        cli = subprocess.run(
            [sys.executable, "-c", code, "run", "--db", str(store.path), "--dataset",
             "xquad-en", "--generator", SMOL, "--settings", ",".join(SETTINGS), "--retriever",
             ",".join(RETRIEVERS), "--sample", str(args.queries), "--seed", str(args.seed),
             "--max-tokens", str(args.max_tokens), "--threads", str(args.threads),
             "--name", "bench"], cwd=ROOT, capture_output=True, text=True)
    assert cli.returncode == 0 and "0 generated" in cli.stdout, cli.stdout + cli.stderr

    tokens = {p[3]: generator.render(p[3]).tokens for p in prompts}
    engine_texts = {r[0]: r[1] for r in store.query("SELECT prompt, text FROM generations")}
    same_naive = sum(engine_texts[p] == t for p, t in texts["naive"].items())
    same_order = sum(engine_texts[p] == t for p, t in texts["same"].items())
    engine_wall, engine_cpu = totals["engine"]["wall"], totals["engine"]["cpu"]
    orders = {
        "engine (query; retrieved@1,3,5 per retriever)": prompts,
        "by setting (naive)": naive,
        "engine, k descending": [p for q in dict.fromkeys(x[2] for x in prompts)
                                 for r in RETRIEVERS for s in reversed(SETTINGS)
                                 for p in prompts if p[:3] == (s, r, q)],
        "by query, greedy longest shared prefix": greedy_within_query(prompts, tokens),
    }
    result = {
        "benchmark": "bench_runs",
        "queries": args.queries, "items": len(all_prompts), "distinct_prompts": len(prompts),
        "generated_by_engine": sum(x.generated for x in summaries),
        "max_tokens": args.max_tokens,
        "threads": args.threads, "generator": SMOL, "retrievers": list(RETRIEVERS),
        "settings": list(SETTINGS), "dataset": "XQuAD en (seeded stratified sample)",
        "retrieval_seconds_untimed": retrieval.wall,
        "blocks": {"queries_per_block": args.block, "blocks": len(blocks)},
        "order": {
            "engine_seconds": engine_wall, "engine_cpu_seconds": engine_cpu,
            "bare_by_setting_seconds": totals["naive"]["wall"],
            "bare_by_setting_cpu_seconds": totals["naive"]["cpu"],
            "speedup_wall": totals["naive"]["wall"] / engine_wall,
            "speedup_cpu": totals["naive"]["cpu"] / engine_cpu,
            "prompt_tokens": sum(x.prompt_tokens for x in summaries),
            "prompt_tokens_evaluated_engine": sum(x.prompt_tokens_evaluated for x in summaries),
            "prompt_tokens_evaluated_by_setting": evaluated_tokens(
                [tokens[p[3]] for p in naive]),
            "same_text_as_engine": f"{same_naive}/{len(texts['naive'])}",
        },
        "overhead": {
            "engine_seconds": engine_wall, "bare_same_order_seconds": totals["same"]["wall"],
            "ratio_wall": totals["same"]["wall"] / engine_wall,
            "ratio_cpu": totals["same"]["cpu"] / engine_cpu,
            "adapter_generate_seconds": adapter_seconds,
            "engine_bookkeeping_seconds": engine_wall - adapter_seconds,
            "same_text_as_engine": f"{same_order}/{len(texts['same'])}",
        },
        "second_run": {"all_from_generation_cache_seconds": cached_clock.wall,
                       "all_from_generation_cache_generated": from_cache.generated,
                       "identical_rerun_seconds": again_clock.wall,
                       "identical_rerun_generated": again.generated,
                       "identical_rerun_cli_seconds": cli_clock.wall,
                       "cli_output": cli.stdout.strip()},
        "simulated_prompt_tokens_evaluated": {
            name: evaluated_tokens([tokens[p[3]] for p in order])
            for name, order in orders.items()},
        "machine": {"platform": platform.platform(), "cpu_count": os.cpu_count(),
                    "load_average": list(os.getloadavg())},
        "llama_cpp_python": llama_cpp.__version__,
        "seconds": time.perf_counter() - started,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


def _params(max_tokens: int, seed: int):
    from engine.runs.prompting import sampling_params

    return sampling_params(max_tokens, seed)


if __name__ == "__main__":
    sys.exit(main())
