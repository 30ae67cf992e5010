"""The llama.cpp adapter against a bare ``llama_cpp.Llama``, on each packaged generator.

For each model, in one process, with the same file, context, threads and greedy sampling:

- prompt tokens/s: a ~400-token raw prompt, cold cache, 1 generated token;
- generated tokens/s: a short prompt that keeps going, 48 tokens;
  (both: adapter ``generate`` vs bare ``Llama.create_completion``; alternating order, median of
  the repeats; ratio = adapter / bare, goal >= 0.97; the texts must be identical)
- prefix reuse: tokens evaluated and seconds for a prompt that shares a long prefix with the
  previous one, against the same prompt cold;
- judge verdict latency: one ``label_probs`` call against one 1-token ``generate``, both cold.

    .venv/bin/python benchmarks/bench_generators.py [--repeats 5] [--threads N]

Writes benchmarks/results/bench_generators.json.
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

import llama_cpp  # noqa: E402

from models.base import SamplingParams  # noqa: E402
from models.llama.generator import LlamaGenerator  # noqa: E402
from models.packaged import PACKAGED, packaged_gguf_path  # noqa: E402

FACTS = " ".join(f"Fact {i}: the number {i} is {'even' if i % 2 == 0 else 'odd'}."
                 for i in range(30))
PROMPT_LONG = FACTS + "\nQuestion: Is 7 even or odd?\nAnswer:"
PROMPT_COUNT = "1, 2, 3, 4, 5,"
GEN_TOKENS = 48


def timed(fn):
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


def alternate(repeats: int, first, second) -> tuple[list, list]:
    """Run the two callables ``repeats`` times each, in ABBA order, so drift hits both."""
    a, b = [], []
    for i in range(repeats):
        order = [(first, a), (second, b)] if i % 2 == 0 else [(second, b), (first, a)]
        for fn, sink in order:
            sink.append(fn())
    return a, b


def bench_model(name: str, path: Path, threads: int, repeats: int) -> dict:
    adapter = LlamaGenerator(path, n_threads=threads, name=name)
    bare = llama_cpp.Llama(str(path), n_ctx=adapter.n_ctx, n_threads=threads,
                           n_threads_batch=threads, n_gpu_layers=adapter.n_gpu_layers,
                           swa_full=adapter.swa_full, verbose=False)

    def run_adapter(prompt: str, n: int):
        adapter.reset()
        seconds, gen = timed(lambda: adapter.generate(prompt, SamplingParams(max_tokens=n)))
        return seconds, gen.prompt_tokens, gen.completion_tokens, gen.text

    def run_bare(prompt: str, n: int):
        bare.reset()
        seconds, out = timed(lambda: bare.create_completion(prompt, max_tokens=n,
                                                            temperature=0.0))
        return (seconds, out["usage"]["prompt_tokens"], out["usage"]["completion_tokens"],
                out["choices"][0]["text"])

    result: dict = {"model": name, "file": path.name, "threads": threads,
                    "n_ctx": adapter.n_ctx, "device": adapter.device}
    run_adapter(PROMPT_COUNT, 2)      # warm-up: first decode allocates buffers
    run_bare(PROMPT_COUNT, 2)

    for label, prompt, n, rate in (("prompt", PROMPT_LONG, 1, lambda r: r[1] / r[0]),
                                   ("generation", PROMPT_COUNT, GEN_TOKENS,
                                    lambda r: r[2] / r[0])):
        mine, theirs = alternate(repeats, lambda: run_adapter(prompt, n),
                                 lambda: run_bare(prompt, n))
        same_text = all(m[3] == t[3] for m, t in zip(mine, theirs))
        a_rate = statistics.median(rate(r) for r in mine)
        b_rate = statistics.median(rate(r) for r in theirs)
        result[label] = {"tokens": mine[0][1] if label == "prompt" else mine[0][2],
                         "adapter_tokens_per_s": a_rate, "bare_tokens_per_s": b_rate,
                         "ratio": a_rate / b_rate, "same_text": same_text}

    # prefix reuse: the same question after a different one over the same facts, vs cold
    q2 = FACTS + "\nQuestion: Is 12 even or odd?\nAnswer:"
    cold_runs, warm_runs = [], []
    for _ in range(repeats):
        adapter.reset()
        cold_runs.append(adapter.generate(q2, SamplingParams(max_tokens=1)))
        adapter.generate(PROMPT_LONG, SamplingParams(max_tokens=1))
        warm_runs.append(adapter.generate(q2, SamplingParams(max_tokens=1)))
    cold_s = statistics.median(g.seconds for g in cold_runs)
    warm_s = statistics.median(g.seconds for g in warm_runs)
    result["prefix_reuse"] = {
        "prompt_tokens": cold_runs[0].prompt_tokens,
        "evaluated_cold": cold_runs[0].prompt_tokens_evaluated,
        "evaluated_warm": warm_runs[0].prompt_tokens_evaluated,
        "seconds_cold": cold_s, "seconds_warm": warm_s, "speedup": cold_s / warm_s}

    # judge verdict latency: one forward pass for the labels vs a 1-token generation
    def verdict():
        adapter.reset()
        return timed(lambda: adapter.label_probs(PROMPT_LONG, ["even", "odd"]))[0]

    def one_token():
        adapter.reset()
        return timed(lambda: adapter.generate(PROMPT_LONG, SamplingParams(max_tokens=1)))[0]

    probs_s, gen_s = alternate(repeats, verdict, one_token)
    result["judge"] = {"label_probs_seconds": statistics.median(probs_s),
                       "generate_1_seconds": statistics.median(gen_s),
                       "ratio": statistics.median(probs_s) / statistics.median(gen_s)}
    adapter.close()
    bare.close()
    return result


def _line(*cells: tuple[object, str]) -> str:
    """One row of the printed tables: each ``(value, format spec)`` formatted, side by side."""
    return "".join(format(value, spec) for value, spec in cells)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    results = []
    for name in PACKAGED:
        path = packaged_gguf_path(name)
        if path is None:
            print(f"{name}: not installed, skipped ({PACKAGED[name].install})")
            continue
        results.append(bench_model(name, path, args.threads, args.repeats))

    print(_line(("model", "<24"), ("measure", "<22"), ("adapter", ">10"), ("bare", ">10"),
                ("ratio", ">8")) + "  same text")
    for r in results:
        for label in ("prompt", "generation"):
            m = r[label]
            print(_line((r["model"], "<24"), (label + " tok/s", "<22"),
                        (m["adapter_tokens_per_s"], ">10.1f"), (m["bare_tokens_per_s"], ">10.1f"),
                        (m["ratio"], ">8.3f")) + f"  {m['same_text']}")
    print()
    print(_line(("model", "<24"), ("prefix reuse", "<40"), ("cold", ">9"), ("warm", ">9"),
                ("speedup", ">9")))
    for r in results:
        p = r["prefix_reuse"]
        what = f"{p['evaluated_cold']} -> {p['evaluated_warm']} of {p['prompt_tokens']} tokens"
        print(_line((r["model"], "<24"), (what, "<40"), (p["seconds_cold"], ">8.3f"), ("s", ""),
                    (p["seconds_warm"], ">8.3f"), ("s", ""), (p["speedup"], ">8.1f"), ("x", "")))
    print()
    print(_line(("model", "<24"), ("judge verdict", "<22"), ("label_probs", ">12"),
                ("generate(1)", ">12"), ("ratio", ">8")))
    for r in results:
        j = r["judge"]
        print(_line((r["model"], "<24"), ("seconds, cold", "<22"),
                    (j["label_probs_seconds"], ">12.3f"), (j["generate_1_seconds"], ">12.3f"),
                    (j["ratio"], ">8.3f")))
    total = time.perf_counter() - started
    load_after = os.getloadavg()[0]
    # other processes on the machine skew absolute numbers (ratios less so): say how busy it was
    print(f"\n{args.repeats} repeats, {args.threads} threads, {total:.0f}s in all; "
          f"load average {load_before:.1f} before, {load_after:.1f} after")

    out = ROOT / "benchmarks" / "results" / "bench_generators.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "benchmark": "bench_generators", "repeats": args.repeats, "threads": args.threads,
        "llama_cpp_python": llama_cpp.__version__, "machine": platform.machine(),
        "cpu_count": os.cpu_count(), "seconds": total,
        "load_average": [load_before, load_after], "results": results}, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
