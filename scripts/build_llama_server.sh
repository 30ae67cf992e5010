#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` (optional model-host backend, models/host/llama_server.py)
# from the llama-cpp-python 0.3.36 sdist: the same llama.cpp the Python package wraps.
#
#   bash scripts/build_llama_server.sh [VENV]          (or: make llama-server)
#
# Installs <data dir>/bin/llama-server, where <data dir> is $MIRAGE_DATA_DIR or platformdirs'
# user data dir for mirage-tui. Takes ~15 min on 2 cores (a few on 16). With a CUDA toolkit
# (nvcc) and an NVIDIA GPU it builds for that GPU by itself (scripts/llama_build_flags.sh:
# -DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=<compute capability>); your own CMAKE_ARGS win, e.g.
#   CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90" make llama-server
# Needs cmake, a C++ compiler and (for CUDA) nvcc. Nothing is installed outside the data dir.
# SETUP_DRY_RUN=1 prints the commands instead of running them.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${1:-.venv}"
PY="$VENV/bin/python"
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
# shellcheck source=scripts/llama_build_flags.sh
source scripts/llama_build_flags.sh
run() { llama_run "$@"; }

llama_build_plan
echo "build_llama_server: $LLAMA_BUILD build ($LLAMA_BUILD_WHY)"
command -v cmake >/dev/null || { echo "build_llama_server: cmake is not installed" >&2; exit 1; }
DATA_DIR="$("$PY" -c 'from models.host.registry import data_dir; print(data_dir())')"
if [ -n "${SETUP_DRY_RUN:-}" ]; then
  WORK="${TMPDIR:-/tmp}/llama-server-build.DRYRUN"
else
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/llama-server-build.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
fi

echo "build_llama_server: llama-cpp-python $VERSION sdist -> $WORK"
run "$PY" -m pip download --no-binary :all: --no-deps --dest "$WORK" "llama-cpp-python==$VERSION"
if [ -n "${SETUP_DRY_RUN:-}" ]; then
  SRC="$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp"
else
  for sdist in "$WORK"/llama*cpp*python-"$VERSION".tar.gz; do tar -xzf "$sdist" -C "$WORK"; done
  SRC="$(find "$WORK" -maxdepth 3 -type d -path '*/vendor/llama.cpp' | head -n 1)"
  [ -n "$SRC" ] && [ -f "$SRC/CMakeLists.txt" ] || { echo "build_llama_server: no vendor/llama.cpp in the sdist" >&2; exit 1; }
fi

# the flags are split on spaces on purpose (several -D flags)
# shellcheck disable=SC2086
run cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_SERVER=ON \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF \
  $LLAMA_CMAKE_ARGS
run cmake --build "$WORK/build" --target llama-server -j "$JOBS"

run mkdir -p "$DATA_DIR/bin"
run install -m 0755 "$WORK/build/bin/llama-server" "$DATA_DIR/bin/llama-server"
echo "build_llama_server: installed $DATA_DIR/bin/llama-server"
echo "  new model hosts use it (MIRAGE_HOST_BACKEND=llama.cpp keeps the in-process-identical host)"
