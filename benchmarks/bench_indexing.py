"""Indexing throughput: the engine's ``index_dataset`` against a bare SentenceTransformer.encode.

XQuAD (all 8 languages, 1,920 paragraphs) is imported with the Wikipedia summaries attached
(../shared/data/wiki, 26,227 summaries: about 28k chunks in all; MIRAGE's own pool is 37,800,
which our shared data does not have). MiniLM embeds them through the engine (vectors stored in
SQLite, one transaction per batch) and through a bare ``SentenceTransformer.encode`` of the
same texts with the same batch size, in the same process.

The machine is shared and its load drifts within minutes, so the work is cut into segments of
``--segment`` texts: the engine indexes a segment (cancelled cooperatively at its end, then
resumed for the next one: the resume cost is in the timing) and the bare call encodes the same
texts, back to back, the order alternating. The ratio (bare seconds / engine seconds: the
engine's share of bare throughput; goal >= 0.97) is reported overall and as the median over
segment pairs. Then the pool is re-indexed: nothing should be embedded.

    .venv/bin/python benchmarks/bench_indexing.py [--limit N] [--batch-size 64] [--segment 2048]

``--limit N`` attaches only N Wikipedia summaries (default: all). Writes
benchmarks/results/indexing.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from engine.datasets.catalog import attach_collection  # noqa: E402
from engine.datasets.importing import import_path  # noqa: E402
from engine.retrieval import index_dataset, pending_texts  # noqa: E402
from engine.store import Store  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
GOAL = 0.97


def wiki_folder(limit: int | None, tmp: Path) -> Path:
    """The shared wiki folder, or a copy holding the first ``limit`` summaries (split across
    the language files in proportion)."""
    source = DATA / "wiki"
    if limit is None:
        return source
    files = sorted(source.glob("summaries_*.json"))
    docs = {f.name: json.loads(f.read_text(encoding="utf-8")) for f in files}
    total = sum(len(d) for d in docs.values())
    out = tmp / "wiki"
    out.mkdir()
    for name, doc in docs.items():
        keep = round(limit * len(doc) / total)
        (out / name).write_text(json.dumps(dict(list(doc.items())[:keep]), ensure_ascii=False),
                                encoding="utf-8")
    return out


def load_avg() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None,
                    help="Wikipedia summaries to attach (default: all 26,227)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--segment", type=int, default=2048,
                    help="texts per engine/bare pair (rounded to whole batches)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "indexing.json")
    args = ap.parse_args(argv)

    from sentence_transformers import SentenceTransformer

    from models.embedders import SentenceTransformerEmbedder

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        store = Store(tmp / "bench.db")
        t0 = time.perf_counter()
        xquad = import_path(store, DATA / "xquad", format="squad", name="xquad")
        wiki = import_path(store, wiki_folder(args.limit, tmp), format="wiki-summaries",
                           name="wiki")
        attach_collection(store, xquad.label, wiki.label)
        import_seconds = time.perf_counter() - t0

        embedder = SentenceTransformerEmbedder("minilm-l6-v2", batch_size=args.batch_size)
        bare = SentenceTransformer(str(embedder.folder), device="cpu", local_files_only=True)
        warm = ["warm-up text"] * 4
        embedder.embed_passages(warm), bare.encode(warm, batch_size=args.batch_size)

        pending = pending_texts(store, xquad.label, embedder)
        texts = [t for _, t in pending]
        segment = max(1, args.segment // args.batch_size) * args.batch_size
        state = {"done": 0, "target": 0}

        def progress(event):
            if event.status == "running" and "embedding" in (event.working_on or ""):
                state["done"] = state["base"] + event.new

        pairs = []
        reports = []
        for k, start in enumerate(range(0, len(texts), segment)):
            part = texts[start:start + segment]
            state.update(base=start, done=start, target=start + len(part))
            times = {}
            for which in (("engine", "bare") if k % 2 == 0 else ("bare", "engine")):
                began = time.perf_counter()
                if which == "engine":
                    report = index_dataset(store, xquad.label, embedder,
                                           batch_size=args.batch_size, progress=progress,
                                           cancel=lambda: state["done"] >= state["target"])
                    reports.append(report)
                    assert report.embedded == len(part), (report.embedded, len(part))
                else:
                    vectors = bare.encode(part, batch_size=args.batch_size,
                                          show_progress_bar=False, convert_to_numpy=True)
                times[which] = time.perf_counter() - began
            stored = store.query(
                "SELECT vector FROM embeddings WHERE content_hash = ? AND role = 'passage'",
                (pending[start][0],))[0][0]
            diff = float(np.abs(np.frombuffer(stored, dtype="<f4") - vectors[0]).max())
            pairs.append({"texts": len(part), "engine_s": times["engine"], "bare_s": times["bare"],
                          "ratio": times["bare"] / times["engine"], "max_abs_diff_first": diff,
                          "load_avg_1m": load_avg()})
            print(f"segment {k + 1}: {len(part)} texts, engine {times['engine']:.1f}s, "
                  f"bare {times['bare']:.1f}s, ratio {pairs[-1]['ratio']:.3f}", flush=True)

        final = reports[-1] if reports else None
        again = index_dataset(store, xquad.label, embedder, batch_size=args.batch_size)
        engine_s = sum(p["engine_s"] for p in pairs)
        bare_s = sum(p["bare_s"] for p in pairs)
        ratio = bare_s / engine_s if engine_s else None
        median = statistics.median(p["ratio"] for p in pairs) if pairs else None
        result = {
            "benchmark": "bench_indexing", "goal_ratio": GOAL,
            "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                        "platform": platform.platform()},
            "embedder": embedder.name, "batch_size": args.batch_size, "segment": segment,
            "wiki_limit": args.limit, "import_seconds": import_seconds,
            "chunks": again.chunks, "texts": again.texts,
            "chunks_xquad": xquad.counts.get("chunks"), "chunks_wiki": wiki.counts.get("chunks"),
            "over_length": again.over_length, "max_seq_length": again.max_seq_length,
            "engine_seconds": engine_s, "bare_seconds": bare_s,
            "engine_texts_per_s": len(texts) / engine_s if engine_s else None,
            "bare_texts_per_s": len(texts) / bare_s if bare_s else None,
            "ratio": ratio, "ratio_median_of_pairs": median,
            "meets_goal": bool(median is not None and median >= GOAL),
            "last_segment_report": final.as_json() if final else None,
            "reindex": {"embedded": again.embedded, "reused": again.reused,
                        "seconds": again.seconds},
            "pairs": pairs,
        }
        store.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"{result['chunks']:,} chunks ({result['texts']:,} texts, {result['over_length']:,} "
          f"over {result['max_seq_length']} tokens): engine {engine_s:.0f}s "
          f"({result['engine_texts_per_s'] or 0:.1f}/s), bare {bare_s:.0f}s "
          f"({result['bare_texts_per_s'] or 0:.1f}/s), ratio {ratio or 0:.3f} "
          f"(median of pairs {median or 0:.3f}, goal {GOAL}); re-index: "
          f"{again.embedded} embedded in {again.seconds:.2f}s")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
