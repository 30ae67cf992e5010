"""Results at scale: every read path of a run, timed at 3k and 60k items.

The run is built by the benchmark itself: XQuAD en (``../shared/data``) replicated until there
are enough distinct questions, imported as a dataset, and run through the engine's own run path
(plan, execute, scoring) with an instant scripted generator (right or wrong per query and
setting, from a hash) over base, oracle and mixed. Building 60k items takes minutes, so each
built workspace is kept in a cache folder (``--cache``, default
``$TMPDIR/mirage-bench-results-scale``; never in the repository) and reused.

Timed read paths (wall seconds, one process; for the report and the summary also this
process's CPU seconds, which other processes on a shared machine do not inflate):

- ``report``: :func:`engine.results.report.build_report` with 1000 resamples and ``as_json``
  (what ``report --json`` runs);
- ``summary``: the Runs screen's Enter (``build_report(summary_only=True)`` with the app's
  resamples, :data:`engine.stats.N_BOOT`, the same as ``report``'s, then ``summary_segments``);
- ``inspector_page``: one Inspector page of 100 items (the first page, the last by offset and,
  as the Inspector scrolls, by key, a category filter, a setting and language filter, a
  score range, text searches: a rare word, no match, a phrase most responses hold);
- ``runs_row``: one row of the Runs list (:func:`engine.results.comparison.run_row`);
- ``export_csv``: ``export --format csv`` in a child process: its wall time and its peak
  resident memory (``ru_maxrss`` of the child).

::

    .venv/bin/python benchmarks/bench_results_scale.py [--items 3000,60000] [--label after]

Writes benchmarks/results/results_scale_<label>.json.
"""

from __future__ import annotations

import argparse
import hashlib
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
SETTINGS = ("base", "oracle", "mixed")
GENERATOR = "fake-instant"

from engine.datasets.importing import import_path  # noqa: E402
from engine.runs import RunConfig, execute, plan_named  # noqa: E402
from engine.runs.lookup import load_run  # noqa: E402
from engine.store import Store  # noqa: E402
from models.base import Generation  # noqa: E402
from tests.testkit.paths import SHARED_DATA  # noqa: E402
from tests.testkit.scripted_runs import ScriptedModel  # noqa: E402

DATA = SHARED_DATA / "xquad" / "xquad.en.json"


class InstantGenerator(ScriptedModel):
    """Answers with the gold answer or a wrong one, decided by a hash of the prompt, at once."""

    def __init__(self, golds: dict[str, str]):
        super().__init__(GENERATOR, "0" * 64)
        self.golds = golds

    def generate(self, messages, params) -> Generation:
        text = self.render(messages).text
        if "Context : " not in text:
            question = text.split("Question: ", 1)[1].split("\n\nAnswer", 1)[0]
        else:
            question = text.split("Question : ", 1)[1].partition("\n\nContext : ")[0]
        right = hashlib.sha256(text.encode()).digest()[0] < 140
        answer = f"The answer is {self.golds.get(question, '?')}." if right else "I am not sure."
        return Generation(text=answer, prompt_tokens=len(text) // 4 + 1, completion_tokens=6,
                          prompt_tokens_evaluated=len(text) // 4 + 1, seconds=0.0,
                          finish_reason="stop", device="cpu", prompt_text=text)


def replicated(copies: int, out: Path) -> Path:
    """XQuAD en ``copies`` times, every copy's questions, ids and titles made distinct."""
    src = json.loads(DATA.read_text(encoding="utf-8"))
    data = []
    for c in range(copies):
        for article in src["data"]:
            paragraphs = []
            for p in article["paragraphs"]:
                qas = [{**qa, "id": f"{qa['id']}-{c}", "question": f"{qa['question']} ({c})"}
                       for qa in p["qas"]]
                paragraphs.append({**p, "context": f"{p['context']} [{c}]", "qas": qas})
            data.append({**article, "title": f"{article['title']} {c}",
                         "paragraphs": paragraphs})
    out.write_text(json.dumps({"version": src.get("version"), "data": data}), encoding="utf-8")
    return out


def build(path: Path, items: int) -> dict:
    """The workspace at ``path`` with run ``scale`` of ``items`` items (cached)."""
    marker = path.with_suffix(".json")
    if path.exists() and marker.exists():
        return json.loads(marker.read_text())
    for stale in path.parent.glob(path.name + "*"):
        stale.unlink()
    queries = items // len(SETTINGS)
    copies = -(-queries // 1190)
    started = time.perf_counter()
    store = Store(path)
    source = replicated(copies, path.parent / f"xquad-x{copies}.json")
    import_path(store, source, format="squad", name="xquad-rep")
    source.unlink()
    imported = time.perf_counter() - started
    golds = {r[0]: json.loads(r[1])[0] for r in store.query("SELECT text, answers FROM queries")}
    cfg = RunConfig(dataset="xquad-rep", generators=[GENERATOR], settings=list(SETTINGS),
                    sample=queries, seed=0, name="scale")
    plan = plan_named(store, cfg, check_models=False)
    summary = execute(store, plan, generators={GENERATOR: InstantGenerator(golds)})
    assert summary.status == "done", summary
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    info = {"items": items, "queries": queries, "copies": copies, "import_seconds": imported,
            "build_seconds": time.perf_counter() - started}
    marker.write_text(json.dumps(info))
    return info


def timed(fn, repeat: int = 1) -> float:
    return timed_both(fn, repeat)[0]


def timed_both(fn, repeat: int = 1) -> tuple[float, float]:
    """The best wall and the best CPU seconds (this process) of ``repeat`` calls. On a shared
    machine the wall time counts other processes' turns too; the CPU time does not."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    return best, best_cpu


EXPORT_CHILD = """
import re, sys, time
from engine.store import Store
from engine.results.export import export_run
from engine.runs.lookup import load_run
t = time.perf_counter()
store = Store(sys.argv[1])
export_run(store, load_run(store, "scale"), format=sys.argv[3], out=sys.argv[2])
status = open("/proc/self/status").read()
print(time.perf_counter() - t, re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
"""


def export_in_child(db: Path, fmt: str) -> dict:
    """Export in a child process: its seconds and its peak resident memory (MB)."""
    out = Path(tempfile.mkdtemp(prefix="bench-export-")) / f"scale.{fmt}"
    done = subprocess.run([sys.executable, "-c", EXPORT_CHILD, str(db), str(out), fmt],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    seconds, peak_kb = done.stdout.strip().splitlines()[-1].split()
    # the child's own peak resident set (VmHWM, interpreter and imports in): not ru_maxrss,
    # which a child inherits from its parent across fork and exec
    return {"seconds": float(seconds), "peak_rss_mb": int(peak_kb) / 1024,
            "bytes": out.stat().st_size}


def measure(db: Path) -> dict:
    from engine.results.comparison import run_row, summary_segments
    from engine.results.inspector import items_for
    from engine.results.report import build_report
    from engine.stats import N_BOOT, SEED

    store = Store(db)
    out: dict = {}
    total = store.query("SELECT COUNT(*) FROM run_items")[0][0]
    # best of two: the first call also pays the imports and a cold page cache
    out["report_seconds"], out["report_cpu_seconds"] = timed_both(
        lambda: json.dumps(build_report(store, load_run(store, "scale")).as_json()), repeat=2)
    # what the Runs screen's Enter computes (mirage_tui/screens/runs.py)
    out["summary_seconds"], out["summary_cpu_seconds"] = timed_both(lambda: summary_segments(
        build_report(store, load_run(store, "scale"), n_boot=N_BOOT, seed=SEED,
                     summary_only=True),
        run_row(store, load_run(store, "scale"))), repeat=2)
    out["runs_row_seconds"] = timed(lambda: run_row(store, load_run(store, "scale")), repeat=3)
    pages = {
        "first": {},
        "deep_offset": {"offset": max(0, total - 200)},
        "category": {"category": "noise_vulnerable"},
        "setting_language": {"setting": "mixed", "language": "en"},
        "score_range": {"metric": "em_loose", "min_value": 1.0, "max_value": 1.0},
    }
    if _has_search():
        pages["search"] = {"search": "Denver"}
        # a search with no match anywhere, and one that most responses match
        pages["search_none"] = {"search": "no such text"}
        pages["search_common"] = {"search": "answer is"}
    if _has_keyset():   # what the Inspector does when scrolled: the page after the last row
        last = items_for(store, load_run(store, "scale"), limit=1, offset=max(0, total - 201))[0]
        pages["deep_keyset"] = {"after": (last.system, last.query_rowid, last.setting)}
    out["inspector_page_seconds"] = {
        name: timed(lambda a=args: items_for(store, load_run(store, "scale"), limit=101, **a),
                    repeat=2)
        for name, args in pages.items()}
    store.close()
    out["export_csv"] = export_in_child(db, "csv")
    out["export_jsonl"] = export_in_child(db, "jsonl")
    return out


def _has_search() -> bool:
    return _takes("search")


def _has_keyset() -> bool:
    return _takes("after")


def _takes(parameter: str) -> bool:
    import inspect

    from engine.results.inspector import items_for

    return parameter in inspect.signature(items_for).parameters


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", default="3000,60000",
                        help="comma-separated run sizes (items), smallest first")
    parser.add_argument("--label", default="after")
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "mirage-bench-results-scale")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    sizes = sorted(int(s) for s in args.items.split(","))
    result: dict = {"benchmark": "bench_results_scale", "label": args.label, "runs": {}}
    for items in sizes:
        db = args.cache / f"scale-{items}.db"
        info = build(db, items)
        print(f"built {items} items: {info}", flush=True)
        # a copy, so that migrations of this checkout never touch the cached original
        work = args.cache / f"work-{items}.db"
        for stale in args.cache.glob(work.name + "*"):
            stale.unlink()
        work.write_bytes(db.read_bytes())
        numbers = measure(work)
        result["runs"][str(items)] = {"build": info, **numbers}
        print(json.dumps({items: numbers}, indent=2), flush=True)
    if len(sizes) > 1:
        small, big = str(sizes[0]), str(sizes[-1])
        result["report_ratio"] = (result["runs"][big]["report_seconds"]
                                  / result["runs"][small]["report_seconds"])
        result["report_cpu_ratio"] = (result["runs"][big]["report_cpu_seconds"]
                                      / result["runs"][small]["report_cpu_seconds"])
    result["machine"] = {"platform": platform.platform(), "cpu_count": os.cpu_count(),
                         "load_average": list(os.getloadavg())}
    out = args.out or ROOT / "benchmarks" / "results" / f"results_scale_{args.label}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
