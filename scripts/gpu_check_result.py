#!/usr/bin/env python3
"""The GPU check's one JSON (scripts/gpu_check.sh, step 6): the machine and card, the llama.cpp
build, the probe, the phases' seconds and, per number of requests in flight, gens/s through
each backend with the greedy-identical share, and the backend a new host would choose.

Written to ``benchmarks/results/gpu_check-<card>.json`` (``gpu_check-cpu.json`` with --cpu)
and, when ``$OUT`` is set (the device machine's folder that comes back), there too.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def card() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout else ""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("gpu", "cpu"), required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--cmake-args", default="")
    ap.add_argument("--items", type=int, required=True)
    args = ap.parse_args()

    bench = json.loads((args.work / "backends.json").read_text())
    probe = json.loads((args.work / "probe.json").read_text().strip().splitlines()[-1])
    phases, last = {}, 0
    for line in (args.work / "phases.txt").read_text().splitlines():
        name, at = line.split()
        phases[name] = int(at) - last
        last = int(at)
    gpu = card() if args.mode == "gpu" else ""
    rows = []
    for r in bench["rows"]:
        rows.append({"concurrency": r["concurrency"],
                     "gens_per_s": {"llama.cpp": r["default"]["items_per_s"],
                                    "llama-server": r["llama_server"]["items_per_s"]},
                     "ratio_llama_server_over_default": r["ratio_llama_server_over_default"],
                     "greedy_identical": r["greedy_identical"],
                     "failed": {"llama.cpp": r["default"]["failed"],
                                "llama-server": r["llama_server"]["failed"]},
                     "verdict": r["paired"]["verdict"]})
    result = {
        "check": "scripts/gpu_check.sh" + (" --cpu" if args.mode == "cpu" else ""),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "card": gpu or None, "machine": platform.platform(), "cpus": os.cpu_count(),
        "python": sys.version.split()[0], "llama_cmake_args": args.cmake_args,
        "probe": probe, "app_process_imported": bench.get("app_process_imported"),
        "model": bench["model"], "items": args.items, "max_tokens": bench["max_tokens"],
        "settings": bench["settings"], "rows": rows,
        "backend_chosen": bench.get("backend_chosen"), "seconds": phases,
        "seconds_total": sum(phases.values())}
    slug = re.sub(r"[^a-z0-9]+", "-", gpu.split(",")[0].lower()).strip("-") if gpu else "cpu"
    out = ROOT / "benchmarks" / "results" / f"gpu_check-{slug}.json"
    text = json.dumps(result, indent=1) + "\n"
    out.write_text(text)
    if os.environ.get("OUT"):
        (Path(os.environ["OUT"]) / out.name).write_text(text)
    print(f"gpu_check: wrote {out.relative_to(ROOT)}")
    for r in rows:
        g = r["gens_per_s"]
        same = r["greedy_identical"]
        print(f"  {r['concurrency']:>3} in flight: llama.cpp {g['llama.cpp']} gens/s, "
              f"llama-server {g['llama-server']} gens/s, identical {same['identical']}/"
              f"{same['of']}")
    chosen = result["backend_chosen"] or {}
    print(f"  backend chosen: {chosen.get('backend')} ({chosen.get('reason')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
