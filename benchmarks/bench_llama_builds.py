"""Set-up's CPU build of llama.cpp (named instruction sets, AMX off: models/llama/build.py)
against ``-march=native`` and, on a CPU with AMX, against every AMX path that runs.

The builds cannot share one Python process (each is a ``llama_cpp`` with its own
``libllama.so``), so this process installs each wheel into a folder of its own and keeps one
worker process per build, each with the packaged SmolLM2 loaded once (same file, context,
threads, greedy sampling). It asks them in turn (ABBA order, so drift hits all alike):

- prompt tokens/s: a ~400-token raw prompt, cold cache, 1 generated token;
- generated tokens/s: a short prompt that keeps going, 48 tokens;

and reports each build's median and its ratio to set-up's build (>= 1: the other is faster),
with whether the greedy texts are identical. A worker that dies (the AMX build on an AMX CPU,
ggml-org/llama.cpp#20824) is reported with its signal and left out.

On a CPU with AMX the variants are: set-up's build; the native build (AMX compiled in); the
native build loaded with ``use_extra_bufts = False`` (no AMX repacking). Without AMX: set-up's
build and the native one, which then compile the same instruction sets.

    .venv/bin/python benchmarks/bench_llama_builds.py [--repeats 5] [--native WHEEL]
                                                      [--safe WHEEL]

A wheel not given is taken from set-up's wheel cache (scripts/llama_check.py) or built there
with pip's cache off (~5 min each on 2 cores). Writes benchmarks/results/llama_builds.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import llama_check  # noqa: E402  (set-up's builder: the wheel cache and keys)

from models.llama.build import Build, Cpu, cpu_builds  # noqa: E402
from models.packaged import packaged_gguf_path  # noqa: E402

FACTS = " ".join(f"Fact {i}: the number {i} is {'even' if i % 2 == 0 else 'odd'}."
                 for i in range(30))
PROMPT_LONG = FACTS + "\nQuestion: Is 7 even or odd?\nAnswer:"
PROMPT_COUNT = "1, 2, 3, 4, 5,"
GEN_TOKENS = 48

WORKER = r'''
import json, sys, time
import llama_cpp
from llama_cpp import llama_cpp as _c
if sys.argv[3] == "no-extra-bufts":
    _default = _c.llama_model_default_params
    def _params():
        p = _default()
        p.use_extra_bufts = False
        return p
    _c.llama_model_default_params = _params
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=1024, n_threads=int(sys.argv[2]),
                      n_threads_batch=int(sys.argv[2]), seed=0, verbose=False)
print(json.dumps({"ready": llama_cpp.llama_print_system_info().decode()}), flush=True)
for line in sys.stdin:
    ask = json.loads(line)
    llm.reset()
    t = time.perf_counter()
    out = llm.create_completion(ask["prompt"], max_tokens=ask["n"], temperature=0.0)
    print(json.dumps({"seconds": time.perf_counter() - t, "text": out["choices"][0]["text"],
                      "prompt": out["usage"]["prompt_tokens"],
                      "generated": out["usage"]["completion_tokens"]}), flush=True)
'''


class Worker:
    def __init__(self, label: str, folder: Path, model: Path, threads: int, mode: str):
        self.label, self.died = label, None
        env = {**os.environ, "PYTHONPATH": str(folder)}
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER, str(model), str(threads),
                                      mode], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd=tempfile.gettempdir())
        self.system_info = self._read().get("ready", "")

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            sig = self.proc.returncode
            self.died = (f"killed by signal {-sig}" if sig < 0 else f"exited with {sig}") + \
                f": {self.proc.stderr.read()[-300:].strip()}"
            return {}
        return json.loads(line)

    def ask(self, prompt: str, n: int) -> dict | None:
        if self.died:
            return None
        self.proc.stdin.write(json.dumps({"prompt": prompt, "n": n}) + "\n")
        self.proc.stdin.flush()
        return self._read() or None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def wheel_for(build: Build, cpu: Cpu, given: str | None) -> Path:
    if given:
        return Path(given)
    venv = Path(sys.prefix)
    key = build.key(cpu, llama_check.python_tag(venv), llama_check.source_id())
    wheel = llama_check.cached_wheel(key)
    if wheel is None:
        print(f"building {build.what} ({build.cmake_args or 'native defaults'}) ...", flush=True)
        wheel = llama_check.build_wheel(venv, build, key)
    return wheel


def unpack(wheel: Path, into: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--no-cache-dir", "--target", str(into), str(wheel)], check=True)
    return into


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--native", help="a wheel built with -march=native (default: build)")
    parser.add_argument("--safe", help="a wheel of set-up's build (default: its cache)")
    args = parser.parse_args()

    cpu = Cpu.read()
    safe = cpu_builds(cpu)[0]
    native = Build("native", "", "CPU, -march=native" + (" (AMX compiled in)" if cpu.has_amx
                                                            else ""))
    model = packaged_gguf_path("smollm2-135m-instruct")
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        folders = {"safe": unpack(wheel_for(safe, cpu, args.safe), Path(tmp) / "safe"),
                   "native": unpack(wheel_for(native, cpu, args.native), Path(tmp) / "native")}
        variants = [("setup", "safe", "default", safe.what),
                    ("native", "native", "default", native.what)]
        if cpu.has_amx:
            variants.append(("native-no-extra-bufts", "native", "no-extra-bufts",
                             native.what + ", use_extra_bufts = False"))
        workers = [Worker(label, folders[folder], model, args.threads, mode)
                   for label, folder, mode, _ in variants]
        for w in workers:              # warm-up: the first decode allocates buffers
            w.ask(PROMPT_COUNT, 2)
        measures: dict = {w.label: {"prompt": [], "generation": []} for w in workers}
        for i in range(args.repeats):
            order = workers if i % 2 == 0 else workers[::-1]
            for label, prompt, n in (("prompt", PROMPT_LONG, 1),
                                     ("generation", PROMPT_COUNT, GEN_TOKENS)):
                for w in order:
                    got = w.ask(prompt, n)
                    if got is not None:
                        measures[w.label][label].append(got)
        for w in workers:
            w.close()

    base = measures["setup"]
    results = []
    for (label, _, mode, what), w in zip(variants, workers):
        row = {"build": label, "what": what, "died": w.died,
               "amx_in_system_info": "AMX" in w.system_info}
        for kind, count in (("prompt", "prompt"), ("generation", "generated")):
            got = measures[label][kind]
            if not got:
                continue
            rate = statistics.median(g[count] / g["seconds"] for g in got)
            base_rate = statistics.median(g[count] / g["seconds"] for g in base[kind])
            row[kind] = {"tokens_per_s": rate, "ratio_to_setup": rate / base_rate,
                         "same_text": [g["text"] for g in got] ==
                         [g["text"] for g in base[kind]][:len(got)]}
        results.append(row)

    print(f"{'build':<24}{'prompt tok/s':>14}{'ratio':>8}{'gen tok/s':>12}{'ratio':>8}  "
          "same text")
    for r in results:
        if "prompt" not in r:
            print(f"{r['build']:<24}  died: {r['died']}")
            continue
        p, g = r["prompt"], r["generation"]
        print(f"{r['build']:<24}{p['tokens_per_s']:>14.1f}{p['ratio_to_setup']:>8.3f}"
              f"{g['tokens_per_s']:>12.1f}{g['ratio_to_setup']:>8.3f}  "
              f"{p['same_text'] and g['same_text']}")
    load_after = os.getloadavg()[0]
    print(f"\nCPU: {cpu.model or cpu.machine}; AMX: {'yes' if cpu.has_amx else 'no'}; "
          f"{args.repeats} repeats, {args.threads} threads, "
          f"{time.perf_counter() - started:.0f}s; load average {load_before:.1f} before, "
          f"{load_after:.1f} after")
    out = ROOT / "benchmarks" / "results" / "llama_builds.json"
    out.write_text(json.dumps({
        "benchmark": "bench_llama_builds", "cpu": cpu.model, "machine": platform.machine(),
        "amx": cpu.has_amx, "setup_build": safe.cmake_args, "repeats": args.repeats,
        "threads": args.threads, "load_average": [load_before, load_after],
        "results": results}, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
