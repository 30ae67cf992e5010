"""A model host against the same model loaded in process, on the demo pool (SmolLM2).

The prompts: every demo query in base, oracle and mixed (MIRAGE template), built for each item
with the engine's own ``fit_prompt`` (so the hosted side pays its HTTP ``render`` calls too),
then ``generate`` greedy with ``--max-tokens`` new tokens. All in one process run, each number
against a baseline taken in the same run:

1. hosted vs in-process, concurrency 1: the prompts in blocks, alternating which side goes
   first; each side has its own model (the host's in its process), so neither disturbs the
   other's prompt cache. Ratio = hosted items/s / in-process items/s (goal >= 0.95); the
   texts must be identical.
2. two processes at once through one shared host (a TUI and a CLI run): two client processes
   each take half the prompts at the same time, against one client process taking them all.
   Ratio = total items/s of the two / items/s of the one (goal >= 0.9).
3. concurrency 4 vs 1 in one process against the host (threads sending at once): the host
   serialises requests on its one llama.cpp context, so on a CPU this is ~1.0 by design;
   the gain of many requests in flight is on llama-server's slots and remote endpoints.
4. what determinism costs (in process, the same items in the engine's order, alternating
   blocks): the adapter's exact prefix reuse (whole 64-token blocks of the previous prompt,
   bit-identical to a cold evaluation) against the old warm path (the cache cut back to the
   longest common prefix, 512-token batches: not bit-stable) and against no reuse at all.
   Ratio = exact items/s / old warm items/s; the exact texts must equal the cold ones.

    nice .venv/bin/python benchmarks/bench_hosting.py [--sample 4] [--max-tokens 32] [--threads 1]
                                                      [--only determinism]

Writes benchmarks/results/hosting.json.
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from models.base import SamplingParams  # noqa: E402

SMOL = "smollm2-135m-instruct"


def demo_items(max_tokens: int, sample: int):
    """(facts, kind, context, chunks) for every demo query × base/oracle/mixed."""
    from engine.datasets.demo_pool import ensure_demo
    from engine.runs import RunConfig, plan_named
    from engine.runs.prompting import context_rowids, load_chunks, load_queries
    from engine.store import Store

    folder = tempfile.mkdtemp(prefix="bench-hosting-")
    store = Store(Path(folder) / "w.db")
    ensure_demo(store)
    plan = plan_named(store, RunConfig(dataset="demo", generators=[SMOL],
                                     settings=["base", "oracle", "mixed"], sample=sample,
                                     max_tokens=max_tokens, name="bench"), check_models=False)
    facts = load_queries(store, plan.queries)
    items = []
    for item in plan.items_for(plan.queries):
        context = context_rowids(item.kind, facts[item.query_rowid], None, item.k)
        items.append((facts[item.query_rowid], item.kind, context))
    chunks = load_chunks(store, {c for _, _, ctx in items for c in ctx or []})
    store.close()
    return [(f, kind, ctx, chunks) for f, kind, ctx in items]


def run_items(generator, items, max_tokens: int, workers: int = 1) -> tuple[float, list[str]]:
    from engine.prompts import get_template
    from engine.runs.prompting import fit_prompt

    template = get_template("mirage")
    params = SamplingParams(max_tokens=max_tokens)

    def one(item):
        facts, kind, context, chunks = item
        prompt = fit_prompt(generator, template, facts, kind, context, chunks, max_tokens)
        return generator.generate(prompt.messages, params).text

    started = time.perf_counter()
    if workers == 1:
        texts = [one(i) for i in items]
    else:
        with ThreadPoolExecutor(workers) as pool:
            texts = list(pool.map(one, items))
    return time.perf_counter() - started, texts


def child(args) -> int:
    """One client process: the items of its half, through the shared host."""
    from models.catalog import load_generator

    items = demo_items(args.max_tokens, args.sample)
    part = items[args.part::2] if args.part >= 0 else items
    gen = load_generator(SMOL, hosted=True, n_threads=args.threads)
    gen.count_tokens("warm")
    print("ready", flush=True)
    sys.stdin.readline()                              # the parent starts both together
    seconds, _ = run_items(gen, part, args.max_tokens)
    print(json.dumps({"items": len(part), "seconds": seconds}), flush=True)
    return 0


def clients(parts: list[int], args) -> float:
    """Wall seconds for client processes (one per part) started together."""
    procs = [subprocess.Popen([sys.executable, __file__, "--child", str(p), "--max-tokens",
                               str(args.max_tokens), "--threads", str(args.threads),
                               "--sample", str(args.sample)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for p in parts]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    results = [json.loads(p.stdout.readline()) for p in procs]
    wall = time.perf_counter() - started
    for p in procs:
        p.wait()
    assert sum(r["items"] for r in results) > 0
    return wall


def _variants(threads: int) -> dict:
    """Three in-process SmolLM2s: exact reuse (the adapter), the old longest-prefix reuse,
    and no reuse."""
    import numpy as np

    from models import packaged
    from models.llama.generator import LlamaGenerator

    class LongestPrefix(LlamaGenerator):
        prompt_block = 512                 # llama-cpp-python's default batches

        def _eval_prompt(self, tokens):    # the adapter as it was before the fix measured here
            llm = self._llm
            held = llm.input_ids[:min(llm.n_tokens, len(tokens))]
            diff = np.flatnonzero(held != np.asarray(tokens[:len(held)], dtype=held.dtype))
            common = int(diff[0]) if diff.size else len(held)
            if common == len(tokens) == llm.n_tokens and not llm._requires_eval:
                return 0
            reuse = common - 1 if common == len(tokens) else common
            if reuse > 0 and llm._ctx.kv_cache_seq_rm(-1, reuse, -1):
                llm.n_tokens = reuse
            else:
                llm.reset()
                reuse = 0
            llm.eval(tokens[reuse:])
            return len(tokens) - reuse

    class Cold(LlamaGenerator):
        def _eval_prompt(self, tokens):
            self._forget_prompt()
            return super()._eval_prompt(tokens)

    path, _ = packaged.resolve_model_path(SMOL)
    return {name: cls(path, n_threads=threads, name=SMOL)
            for name, cls in (("exact", LlamaGenerator), ("old_warm", LongestPrefix),
                              ("cold", Cold))}


def determinism_cost(items, args) -> dict:
    gens = _variants(args.threads)
    for gen in gens.values():
        run_items(gen, items[:2], args.max_tokens)          # warm up
    size = -(-len(items) // args.blocks)
    times = dict.fromkeys(gens, 0.0)
    texts = {name: [] for name in gens}
    for b in range(args.blocks):
        block = items[b * size:(b + 1) * size]
        names = list(gens)
        for name in names[b % 3:] + names[:b % 3]:
            gen = gens[name]
            gen.reset()
            seconds, got = run_items(gen, block, args.max_tokens)
            times[name] += seconds
            texts[name] += got
    n = len(items)
    same_old = sum(a == b for a, b in zip(texts["old_warm"], texts["cold"]))
    return {
        "items": n, "blocks": args.blocks,
        "exact_items_per_s": round(n / times["exact"], 3),
        "old_warm_items_per_s": round(n / times["old_warm"], 3),
        "cold_items_per_s": round(n / times["cold"], 3),
        "ratio_exact_vs_old_warm": round(times["old_warm"] / times["exact"], 3),
        "ratio_cold_vs_old_warm": round(times["old_warm"] / times["cold"], 3),
        "exact_texts_equal_cold": f"{sum(a == b for a, b in zip(texts['exact'], texts['cold']))}"
                                  f"/{n}",
        "old_warm_texts_equal_cold": f"{same_old}/{n}"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--sample", type=int, default=4, help="demo queries (x3 settings)")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--only", choices=("determinism",), help="run only this part")
    args = ap.parse_args()
    if args.child is not None:
        args.part = args.child
        return child(args)
    if args.only == "determinism":
        result = {"model": SMOL, "max_tokens": args.max_tokens, "threads": args.threads,
                  "determinism": determinism_cost(demo_items(args.max_tokens, args.sample),
                                                  args)}
        out = ROOT / "benchmarks" / "results" / "determinism.json"
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result, indent=2))
        return 0

    os.environ.setdefault("MIRAGE_DATA_DIR", tempfile.mkdtemp(prefix="bench-hosting-data-"))
    os.environ["MIRAGE_LLAMA_SERVER"] = ""            # the llama.cpp host, as measured
    from models.catalog import load_generator
    from models.host import stop_hosts

    items = demo_items(args.max_tokens, args.sample)
    local = load_generator(SMOL, hosted=False, n_threads=args.threads)
    hosted = load_generator(SMOL, hosted=True, n_threads=args.threads)
    run_items(local, items[:3], args.max_tokens)       # warm both
    run_items(hosted, items[:3], args.max_tokens)

    size = -(-len(items) // args.blocks)
    times = {"in-process": 0.0, "hosted": 0.0}
    same = total = 0
    for b in range(args.blocks):
        block = items[b * size:(b + 1) * size]
        order = [("in-process", local), ("hosted", hosted)]
        texts = {}
        for name, gen in (order if b % 2 == 0 else order[::-1]):
            seconds, texts[name] = run_items(gen, block, args.max_tokens)
            times[name] += seconds
        same += sum(a == h for a, h in zip(texts["in-process"], texts["hosted"]))
        total += len(block)
    one_process = len(items) / times["hosted"]
    ratio = times["in-process"] / times["hosted"]

    single = clients([-1], args)
    double = clients([0, 1], args)
    some = items[: max(4, len(items) // 2)]
    c1, _ = run_items(hosted, some, args.max_tokens, workers=1)
    c4, _ = run_items(hosted, some, args.max_tokens, workers=4)
    stop_hosts()
    determinism = determinism_cost(items, args)

    result = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "model": SMOL, "queries": args.sample, "items": len(items), "max_tokens": args.max_tokens,
        "threads": args.threads,
        "hosted_vs_in_process": {
            "in_process_items_per_s": round(len(items) / times["in-process"], 3),
            "hosted_items_per_s": round(one_process, 3),
            "ratio": round(ratio, 3), "goal": 0.95, "identical_texts": f"{same}/{total}"},
        "two_processes_one_host": {
            "one_process_items_per_s": round(len(items) / single, 3),
            "two_processes_items_per_s": round(len(items) / double, 3),
            "ratio": round(single / double, 3), "goal": 0.9},
        "concurrency_4_vs_1_one_host": {
            "items": len(some), "c1_items_per_s": round(len(some) / c1, 3),
            "c4_items_per_s": round(len(some) / c4, 3),
            "speedup": round(c1 / c4, 3)},
        "determinism": determinism,
    }
    out = ROOT / "benchmarks" / "results" / "hosting.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
