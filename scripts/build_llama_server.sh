#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` (optional model-host backend, models/host/llama_server.py)
# from the llama-cpp-python 0.3.36 sdist: the same llama.cpp the Python package wraps.
#
#   bash scripts/build_llama_server.sh [VENV]          (or: make llama-server)
#
# Installs <data dir>/bin/llama-server, where <data dir> is $MIRAGE_DATA_DIR or platformdirs'
# user data dir for mirage-tui. Takes ~15 min on 2 cores (a few on 16). For a GPU build pass the
# CMake flags through CMAKE_ARGS, e.g.
#   CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90" make llama-server
# Needs cmake, a C++ compiler and (for CUDA) nvcc. Nothing is installed outside the data dir.
set -euo pipefail

VENV="${1:-.venv}"
PY="$VENV/bin/python"
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

command -v cmake >/dev/null || { echo "build_llama_server: cmake is not installed" >&2; exit 1; }
DATA_DIR="$("$PY" -c 'from models.host.registry import data_dir; print(data_dir())')"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/llama-server-build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

echo "build_llama_server: llama-cpp-python $VERSION sdist -> $WORK"
"$PY" -m pip download --no-binary :all: --no-deps --dest "$WORK" "llama-cpp-python==$VERSION"
for sdist in "$WORK"/llama*cpp*python-"$VERSION".tar.gz; do tar -xzf "$sdist" -C "$WORK"; done
SRC="$(find "$WORK" -maxdepth 3 -type d -path '*/vendor/llama.cpp' | head -n 1)"
[ -n "$SRC" ] && [ -f "$SRC/CMakeLists.txt" ] || { echo "build_llama_server: no vendor/llama.cpp in the sdist" >&2; exit 1; }

# CMAKE_ARGS is split on spaces on purpose (several -D flags)
# shellcheck disable=SC2086
cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_SERVER=ON \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF \
  ${CMAKE_ARGS:-}
cmake --build "$WORK/build" --target llama-server -j "$JOBS"

mkdir -p "$DATA_DIR/bin"
install -m 0755 "$WORK/build/bin/llama-server" "$DATA_DIR/bin/llama-server"
echo "build_llama_server: installed $DATA_DIR/bin/llama-server"
echo "  new model hosts use it (MIRAGE_HOST_BACKEND=llama.cpp keeps the in-process-identical host)"
