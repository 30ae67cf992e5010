"""Requests in flight: a run at concurrency 4 against the same run at concurrency 1.

1. **llama.cpp server on this CPU.** ``python -m llama_cpp.server`` serving the packaged
   SmolLM2-135M-Instruct on loopback (``--n_threads`` as given, default 2), driven through
   ``models.http.generator.HttpGenerator`` by the run engine over the demo pool (base, oracle, mixed; N
   seeded queries; greedy, ``--max-tokens`` new tokens). llama-cpp-python's server answers one
   request at a time and the CPU is compute-bound, so expect about 1.0×: the gain is on GPUs
   and endpoints that batch. Also reports whether the stored texts are equal item by item.
2. **An endpoint with latency.** The loopback fault server (tests/testkit/fault_server.py)
   answering every request after ``--latency`` seconds, without faults and then with its
   default faults (10% refused, 5% HTTP 500, 5% stalled past the timeout): the engine keeps N
   requests out, so the run should be close to N× faster. The fault rows also report that
   every item ended stored or failed.
3. **Cuts and overlap** (``--cuts``: only these, seconds, no model): how long a cancel, an
   abort, Ctrl-C, an HTTP timeout and the watchdog take to free the caller, and how long
   requests in flight take together, each against its target (the bounds the tests asserted
   until they checked order and events instead). Written to benchmarks/results/cuts.json.

Each configuration runs into a fresh workspace (nothing cached), in one process, one after
another; the ratios come from the same process run. ::

    nice .venv/bin/python benchmarks/bench_concurrency.py [--queries 8] [--max-tokens 32]

Writes benchmarks/results/concurrency.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from engine.datasets.demo_pool import ensure_demo  # noqa: E402
from engine.runs import RunConfig, execute, plan_named  # noqa: E402
from engine.store import Store  # noqa: E402
from models.http.generator import HttpGenerator  # noqa: E402
from testkit.fault_server import FaultServer  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "concurrency.json"
CUTS = ROOT / "benchmarks" / "results" / "cuts.json"


def one_run(folder: Path, tag: str, generator, queries: int, max_tokens: int,
            concurrency: int) -> dict:
    store = Store(folder / f"{tag}-c{concurrency}.db")
    ensure_demo(store)
    config = RunConfig(dataset="demo", generators=["endpoint"], sample=queries, seed=0,
                       max_tokens=max_tokens, name=f"{tag}-c{concurrency}",
                       concurrency=concurrency, max_errors="50%")
    plan = plan_named(store, config, check_models=False)
    started = time.perf_counter()
    summary = execute(store, plan, generators={"endpoint": generator})
    seconds = time.perf_counter() - started
    texts = [tuple(r) for r in store.query(
        "SELECT ri.system, ri.setting, ri.query_rowid, g.text FROM run_items ri "
        "LEFT JOIN generations g ON g.key = ri.generation_key ORDER BY 1, 2, 3")]
    items = store.query("SELECT COUNT(*), COUNT(DISTINCT system || setting || query_rowid), "
                        "SUM(error IS NOT NULL) FROM run_items")[0]
    store.close()
    return {"concurrency": concurrency, "status": summary.status, "items": summary.total,
            "generated": summary.generated, "failed": summary.errors,
            "stored_rows": items[0], "distinct_rows": items[1],
            "seconds": round(seconds, 3),
            "items_per_s": round(summary.total / seconds, 3) if seconds else None,
            "completion_tokens": summary.completion_tokens, "_texts": texts}


def compare(rows: list[dict]) -> dict:
    base = rows[0]
    out = {"runs": [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]}
    for r in rows[1:]:
        out[f"speedup_c{r['concurrency']}_vs_c{base['concurrency']}"] = round(
            base["seconds"] / r["seconds"], 3)
        same = sum(a == b for a, b in zip(base["_texts"], r["_texts"]))
        out[f"same_texts_c{r['concurrency']}"] = f"{same}/{len(base['_texts'])}"
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def llama_server(folder: Path, threads: int):
    from models.packaged import packaged_gguf_path

    model = packaged_gguf_path("smollm2-135m-instruct")
    port = free_port()
    log = open(folder / "server.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
         "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", str(threads),
         "--n_threads_batch", str(threads)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"llama.cpp server exited:\n{(folder / 'server.log').read_text()}")
        try:
            with opener.open(url + "/v1/models", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("llama.cpp server did not start within 180 s")


# --------------------------------------------------------------------------- cuts and overlap
# The speed targets the tests used to assert as wall-clock bounds (they fail on a loaded
# machine, so the tests check order and events instead): each is measured here on
# the machine as it is, with its target. ``--cuts`` runs only these (seconds, no model).

CUT_TARGETS_S = {
    "in_flight_12_calls_of_0.1s_at_4": 0.8,      # one at a time: 1.2 s
    "watchdog_0.2s_ends_a_stalled_call_twice": 2.0,
    "abort_cuts_a_request_held_by_the_server": 1.0,
    "http_timeout_0.5s_raises": 2.5,
    "cancel_cuts_a_run_waiting_on_a_slow_endpoint": 2.0,
    "ctrl_c_stops_a_cli_run_waiting_on_a_slow_endpoint": 2.5,
    "discover_a_server_and_a_closed_port": 1.5,
    "48_requests_of_0.05s_from_16_threads": 1.2,  # one at a time: 2.4 s
}


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def cut_latencies(folder: Path) -> dict:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from engine.inflight import Policy, Request, in_flight
    from models import endpoints
    from models.base import SamplingParams
    from testkit.openai_server import fake_openai_server

    ask = [{"role": "user", "content": "Say hi"}]
    fast = {"backoff": 0.01, "max_backoff": 0.05}
    seconds: dict[str, float] = {}

    def sleeper():
        time.sleep(0.1)
    seconds["in_flight_12_calls_of_0.1s_at_4"] = _timed(lambda: list(in_flight(
        [Request(i, sleeper) for i in range(12)], name="m", policy=Policy(concurrency=4,
                                                                           **fast))))
    release = threading.Event()
    seconds["watchdog_0.2s_ends_a_stalled_call_twice"] = _timed(lambda: list(in_flight(
        [Request("stuck", lambda: release.wait(60)), Request("next", lambda: "ok")], name="m",
        policy=Policy(concurrency=2, watchdog=0.2, max_attempts=2, **fast))))
    release.set()

    with fake_openai_server(models=("m",)) as server:
        gen = HttpGenerator(server.url, model="m", timeout=600)
        gen.generate(ask)
        server.hold, asked = threading.Event(), len(server.seen)
        thread = threading.Thread(target=lambda: _swallow(gen.generate, ask), daemon=True)
        thread.start()
        while len(server.seen) == asked:
            time.sleep(0.005)
        started = time.perf_counter()
        gen.abort()
        thread.join(60)
        seconds["abort_cuts_a_request_held_by_the_server"] = time.perf_counter() - started
        server.hold.set()

    with fake_openai_server(models=("m",)) as server:
        server.hold = threading.Event()
        gen = HttpGenerator(server.url, model="m", timeout=0.5)
        seconds["http_timeout_0.5s_raises"] = _timed(lambda: _swallow(gen.generate, ask))

    store = Store(folder / "cut.db")
    ensure_demo(store)
    with fake_openai_server(models=("slow",)) as server:
        server.quick, server.hold = 2, threading.Event()
        gen = HttpGenerator(server.url, model="slow", timeout=600)
        config = RunConfig(dataset="demo", generators=["slow"], settings=["base"], sample=6,
                           seed=0, concurrency=2, name="cut")
        plan = plan_named(store, config, check_models=False)
        cancel = threading.Event()
        worker = threading.Thread(target=lambda: execute(store, plan, generators={"slow": gen},
                                                         cancel=cancel), daemon=True)
        worker.start()
        while server.chats < 4:
            time.sleep(0.02)
        time.sleep(0.3)
        started = time.perf_counter()
        cancel.set()
        worker.join(60)
        seconds["cancel_cuts_a_run_waiting_on_a_slow_endpoint"] = (time.perf_counter()
                                                                   - started)
    store.close()

    db = folder / "ctrl_c.db"
    subprocess.run([sys.executable, "-m", "mirage_tui.cli", "data", "demo", "--db", str(db)],
                   cwd=ROOT, check=True, capture_output=True)
    with fake_openai_server(models=("slow",)) as server:
        server.quick, server.hold = 2, threading.Event()
        proc = subprocess.Popen(
            [sys.executable, "-m", "mirage_tui.cli", "run", "--db", str(db), "--dataset",
             "demo", "--generator", f"{server.url}#slow", "--settings", "base", "--sample",
             "6", "--concurrency", "2", "--name", "slow"], cwd=ROOT,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        while server.chats < 4:
            time.sleep(0.05)
        time.sleep(0.5)
        started = time.perf_counter()
        proc.send_signal(2)
        proc.wait(120)
        seconds["ctrl_c_stops_a_cli_run_waiting_on_a_slow_endpoint"] = (time.perf_counter()
                                                                        - started)

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        closed_port = closed.getsockname()[1]
    with fake_openai_server(["m1", "m2"]) as server:
        port = int(server.url.split(":")[2].split("/")[0])
        seconds["discover_a_server_and_a_closed_port"] = _timed(
            lambda: endpoints.discover([port, closed_port]))

    with fake_openai_server() as server:
        server.delay = 0.05
        gen = HttpGenerator(server.url, timeout=10)

        def many():
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(lambda i: gen.generate(
                    [{"role": "user", "content": f"Context : [{i}] w{i} x y z"}],
                    SamplingParams(max_tokens=4)), range(48)))
        seconds["48_requests_of_0.05s_from_16_threads"] = _timed(many)

    return {name: {"seconds": round(s, 3), "target_s": CUT_TARGETS_S[name],
                   "within": s < CUT_TARGETS_S[name]} for name, s in seconds.items()}


def _swallow(fn, *args) -> None:
    from models.base import ModelError

    try:
        fn(*args)
    except ModelError:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--skip-llama", action="store_true")
    ap.add_argument("--cuts", action="store_true",
                    help=f"only the cuts and overlap (3.), into {CUTS.name}")
    args = ap.parse_args()
    if args.cuts:
        with tempfile.TemporaryDirectory() as tmp:
            cuts = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                                "load_at_start": os.getloadavg()},
                    "cuts": cut_latencies(Path(tmp))}
        cuts["machine"]["load_at_end"] = os.getloadavg()
        print(json.dumps(cuts, indent=1))
        CUTS.write_text(json.dumps(cuts, indent=1) + "\n")
        print(f"wrote {CUTS}")
        return
    results: dict = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                                 "load_at_start": os.getloadavg()},
                     "queries": args.queries, "max_tokens": args.max_tokens,
                     "settings": ["base", "oracle", "mixed"]}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.skip_llama:
            proc, url = llama_server(folder, args.threads)
            try:
                generator = HttpGenerator(url, timeout=300)
                # llama_cpp.server's /v1/models reports no context window (identity 0)
                generator.n_ctx = 2048
                one_run(folder, "warm", generator, 1, args.max_tokens, 1)   # load, caches
                rows = [one_run(folder, "llama", generator, args.queries, args.max_tokens, n)
                        for n in (1, 4)]
                results["llama_cpp_server"] = {"server": "llama_cpp.server (one request at "
                                                         "a time)",
                                               "threads": args.threads, **compare(rows)}
                print(json.dumps(results["llama_cpp_server"], indent=1), flush=True)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
        for label, faulty in (("latency", False), ("latency_with_faults", True)):
            with FaultServer(seed=1, latency_s=args.latency, stall_s=3.0) as server:
                server.faulty = faulty
                generator = HttpGenerator(server.url, timeout=1.0)
                rows = [one_run(folder, label, generator, 20, args.max_tokens, n)
                        for n in (1, 4, 8)]
                results[label] = {"latency_s": args.latency, "faults": dict(server.faults),
                                  "peak_requests_answered_at_once": server.peak,
                                  **compare(rows)}
                print(label, json.dumps(results[label], indent=1), flush=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
