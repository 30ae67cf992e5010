"""The two backends of a model host, on the same MIRAGE-shaped items: the default (llama.cpp in
the host process, one request at a time) against llama-server (parallel slots, continuous
batching), at 1, 2, 4 and 8 requests in flight, in one process run.

The items: XQuAD English (``../shared/data/xquad/xquad.en.json``, read in place), a seeded
sample of ``--items`` / 3 queries × base, oracle, mixed, MIRAGE template, the packaged
SmolLM2-135M-Instruct, greedy, ``--max-tokens`` new tokens. Each run goes through the product's
own path (``plan_named`` + ``execute``: prompts fitted, generated, scored, stored). For each number
of requests in flight a fresh workspace holds one run per backend (their identities differ, so
nothing is cached across them); the runs go in ABBA order (default, llama-server, llama-server,
default, ...) so drift in the machine's load hits both alike, and each run gets a fresh host
of its own (the previous one stopped): every core, and no prompt cache of the same items.

Reported per concurrency: items/s of each backend and their ratio (llama-server / default), the
share of greedy answers identical between the backends, and ``compare``'s own paired statistics
(engine/results/paired.py: Δ with its paired-bootstrap 95% CI, McNemar / sign-flip p, Holm) on
EM, F1 and char-3gram recall per setting. The items/s of both backends are also recorded as
``<data dir>/backend_speeds.json``, the measurement a new host's backend choice reads
(models/host/backend_choice.py; ``--no-record`` skips it). ::

    MIRAGE_LLAMA_SERVER=PATH nice .venv/bin/python benchmarks/bench_backends.py [--items 30]
        [--max-tokens 16] [--concurrency 1,2,4,8] [--out benchmarks/results/backends.json]

Writes benchmarks/results/backends.json (docs/backends.md reads it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.datasets.importing import import_path  # noqa: E402
from engine.arena.ratings.duel import compare  # noqa: E402
from engine.results.pairing import side_runs  # noqa: E402
from engine.results.paired_words import verdict_line  # noqa: E402
from engine.results.records import load_items  # noqa: E402
from engine.runs.lookup import load_run  # noqa: E402
from engine.runs import RunConfig, execute, plan_named  # noqa: E402
from engine.store import Store  # noqa: E402
from engine.store.generations import generation_texts  # noqa: E402
from models.base import SamplingParams  # noqa: E402
from models.host import client, registry, supervisor  # noqa: E402
from models.host.backend_choice import BACKEND_ENV, choose_backend, record_speeds  # noqa: E402
from models.host.llama_server import find_llama_server  # noqa: E402

SMOL = "smollm2-135m-instruct"
XQUAD_EN = ROOT.parent / "shared" / "data" / "xquad" / "xquad.en.json"
RESULTS = ROOT / "benchmarks" / "results" / "backends.json"
DEFAULT, SERVER = "llama.cpp", "llama-server"
METRICS = ("em_loose", "f1_mirage", "char3_recall")
RUN_NAMES = {DEFAULT: "default", SERVER: "llama-server"}


class Hosts:
    """A fresh host for every run, alone: the previous one is stopped first, so each run has
    the cores and no prompt cache from a run of the same items (llama-server keeps prompts in
    its slots and its RAM cache)."""

    def __init__(self) -> None:
        self.backend: str | None = None
        self.generator = None
        self.asked = os.environ.get(BACKEND_ENV)      # put back when done

    def use(self, backend: str):
        if self.generator is not None:
            self.generator.close()
        with registry.registry_lock():
            for entry in registry.live_entries():
                supervisor.stop_host(entry)
        os.environ[BACKEND_ENV] = backend
        self.generator = client.HostedGenerator.for_model(SMOL)
        self.generator.generate("Warm up.", SamplingParams(max_tokens=2))
        self.backend = backend
        return self.generator

    def close(self) -> None:
        if self.generator is not None:
            self.generator.close()
        supervisor.stop_hosts(SMOL)
        if self.asked is None:
            os.environ.pop(BACKEND_ENV, None)
        else:
            os.environ[BACKEND_ENV] = self.asked


def one_run(store: Store, dataset: str, hosts: Hosts, backend: str, queries: int,
            max_tokens: int, concurrency: int) -> dict:
    generator = hosts.use(backend)
    name = f"{RUN_NAMES[backend]}-c{concurrency}"
    config = RunConfig(dataset=dataset, generators=[SMOL], settings=["base", "oracle", "mixed"],
                       sample=queries, seed=0, max_tokens=max_tokens, name=name,
                       concurrency=concurrency, max_errors="50%")
    plan = plan_named(store, config, check_models=False)
    started = time.perf_counter()
    summary = execute(store, plan, generators={SMOL: generator})
    seconds = time.perf_counter() - started
    return {"run": name, "status": summary.status, "items": summary.total,
            "generated": summary.generated, "failed": summary.errors,
            "seconds": round(seconds, 2),
            "items_per_s": round(summary.total / seconds, 4) if seconds else None,
            "slots": generator.max_concurrency, "host_threads": generator.n_threads,
            "load_after": round(os.getloadavg()[0], 2)}


def identical_share(store: Store, a: str, b: str) -> dict:
    """How many items both runs generated have the same text."""
    items = {run: {(i.setting, i.query_rowid): i.generation_key
                   for i in load_items(store, load_run(store, run)) if i.generation_key}
             for run in (a, b)}
    shared = sorted(set(items[a]) & set(items[b]))
    texts = generation_texts(store, [items[r][k] for r in (a, b) for k in shared])
    same = sum(texts.get(items[a][k]) == texts.get(items[b][k]) for k in shared)
    return {"identical": same, "of": len(shared),
            "share": round(same / len(shared), 3) if shared else None}


def paired_scores(store: Store, a: str, b: str) -> dict:
    """``compare``'s rows for the three answer metrics: A = default, B = llama-server."""
    c = compare(store, a, b, side_runs(store, a, b), metrics=list(METRICS))
    rows = [{k: (round(v, 4) if isinstance(v, float) else v)
             for k, v in (("metric", r.metric), ("setting", r.setting), ("n", r.n),
                          ("a", r.a), ("b", r.b), ("delta", r.delta), ("lo", r.lo),
                          ("hi", r.hi), ("p", r.p), ("p_holm", r.p_holm), ("test", r.test),
                          ("significant", r.significant))}
            for r in c.rows if r.metric in METRICS]
    return {"shared_items": c.shared_items, "shared_queries": c.shared_queries,
            "n_boot": c.n_boot, "seed": c.seed, "rows": rows,
            "significant": [f"{r['metric']} ({r['setting']})" for r in rows
                            if r["significant"]],
            "verdict": verdict_line(c)}


def run_benchmark(data: Path, items: int, max_tokens: int, concurrencies: list[int],
                  folder: Path) -> dict:
    queries = max(1, math.ceil(items / 3))
    hosts = Hosts()
    rows = []
    try:
        for index, c in enumerate(concurrencies):
            store = Store(folder / f"c{c}.db")
            dataset = import_path(store, data).dataset
            order = (DEFAULT, SERVER) if index % 2 == 0 else (SERVER, DEFAULT)
            runs = {b: one_run(store, dataset, hosts, b, queries, max_tokens, c)
                    for b in order}
            a, b = runs[DEFAULT]["run"], runs[SERVER]["run"]
            d, s = runs[DEFAULT]["items_per_s"], runs[SERVER]["items_per_s"]
            row = {"concurrency": c, "order": list(order), "default": runs[DEFAULT],
                   "llama_server": runs[SERVER],
                   "ratio_llama_server_over_default": round(s / d, 3) if d and s else None,
                   "greedy_identical": identical_share(store, a, b),
                   "paired": paired_scores(store, a, b)}
            rows.append(row)
            store.close()
            print(f"c={c}: default {d} items/s, llama-server {s} items/s, ratio "
                  f"{row['ratio_llama_server_over_default']}, identical "
                  f"{row['greedy_identical']['identical']}/{row['greedy_identical']['of']}; "
                  f"{row['paired']['verdict']}", flush=True)
    finally:
        hosts.close()
    return {"queries": queries, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=30, help="items (3 settings per query)")
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--concurrency", default="1,2,4,8", help="requests in flight, comma-separated")
    ap.add_argument("--data", type=Path, default=XQUAD_EN,
                    help="an XQuAD-format JSON file, or a folder the importer reads (the demo "
                         "pool: engine/datasets/demo)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--no-record", action="store_true",
                    help="do not write <data dir>/backend_speeds.json")
    ap.add_argument("--import-heavy", action="store_true",
                    help="import torch and pandas (else pyarrow) in this (the app's) process "
                         "first, as the app does in use: a CUDA llama.cpp must live in the host "
                         "processes")
    args = ap.parse_args(argv)
    heavy = {}
    if args.import_heavy:
        import torch

        heavy = {"torch": torch.__version__, "cuda_available": bool(torch.cuda.is_available())}
        try:              # pandas where it is installed (the GPU machine), else pyarrow
            import pandas

            heavy["pandas"] = pandas.__version__
        except ImportError:
            import pyarrow

            heavy["pyarrow"] = pyarrow.__version__
    binary = find_llama_server()
    if binary is None:
        print("bench_backends: no llama-server binary (make llama-server, or set "
              "MIRAGE_LLAMA_SERVER)", file=sys.stderr)
        return 2
    if not args.data.exists():
        print(f"bench_backends: {args.data}: no such file or folder", file=sys.stderr)
        return 2
    concurrencies = [int(c) for c in args.concurrency.split(",") if c.strip()]
    load_at_start = os.getloadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-backends-") as tmp:
        measured = run_benchmark(args.data, args.items, args.max_tokens, concurrencies,
                                 Path(tmp))
    result = {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                    "load_at_start": [round(x, 2) for x in load_at_start],
                    "load_at_end": [round(x, 2) for x in os.getloadavg()],
                    "note": "shared machine: other work ran alongside (see the load)"},
        "model": SMOL, "dataset": args.data.name, "settings": ["base", "oracle", "mixed"],
        "max_tokens": args.max_tokens, "sampling": "greedy, seed 0",
        "llama_server_binary": str(binary), "app_process_imported": heavy,
        "seconds_total": round(time.perf_counter() - started, 1), **measured}
    ratios = [r["ratio_llama_server_over_default"] for r in measured["rows"]
              if r["ratio_llama_server_over_default"]]
    result["ratio_geometric_mean"] = round(statistics.geometric_mean(ratios), 3) \
        if ratios else None
    if not args.no_record:
        speeds = {r["concurrency"]: {DEFAULT: r["default"]["items_per_s"] or 0.0,
                                     SERVER: r["llama_server"]["items_per_s"] or 0.0}
                  for r in measured["rows"]}
        result["recorded"] = str(record_speeds(speeds, model=SMOL, binary=binary,
                                               source="benchmarks/bench_backends.py"))
        chosen = choose_backend()
        result["backend_chosen"] = {"backend": chosen.backend, "reason": chosen.reason}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
