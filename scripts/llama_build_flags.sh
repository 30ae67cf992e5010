#!/usr/bin/env bash
# How llama.cpp is built on this machine: sourced by setup.sh and build_llama_server.sh (or run
# as `bash scripts/llama_build_flags.sh` to see the choice).
#
#   llama_build_plan   sets LLAMA_BUILD (user | cuda | cpu), LLAMA_CMAKE_ARGS (the CMake flags)
#                      and LLAMA_BUILD_WHY (one line: what was found)
#
# The user's own CMAKE_ARGS win. Else CUDA when a CUDA toolkit (nvcc on PATH, or
# $CUDA_HOME/bin/nvcc, default /usr/local/cuda) and an NVIDIA GPU (nvidia-smi answers with a
# compute capability) are both present: -DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=<caps
# without the dot, every distinct GPU's, ';'-separated: "86;90">. Else the CPU, with the CPU's
# own instruction sets named and AMX off on x86-64 (`python3 scripts/llama_check.py cpu-args`;
# models/llama/build.py says why: -march=native compiles ggml's AMX backend, which crashes).

llama_find_nvcc() {
  local found
  if found="$(command -v nvcc 2>/dev/null)" && [ -n "$found" ]; then
    echo "$found"
    return 0
  fi
  found="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
  [ -x "$found" ] && echo "$found"
}

# the compute capabilities of the GPUs, distinct, e.g. "8.6 9.0"; nothing (status 1) without a
# GPU that answers
llama_gpu_caps() {
  local caps
  caps="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null \
          | tr -d ' \r' | grep -E '^[0-9]+\.[0-9]+$' | sort -u -t. -k1,1n -k2,2n \
          | paste -sd ' ' -)" || true
  [ -n "$caps" ] && echo "$caps"
}

llama_build_plan() {
  local nvcc caps archs
  if [ -n "${CMAKE_ARGS:-}" ]; then
    LLAMA_BUILD=user
    LLAMA_CMAKE_ARGS="$CMAKE_ARGS"
    LLAMA_BUILD_WHY="your CMAKE_ARGS: $CMAKE_ARGS"
    return 0
  fi
  nvcc="$(llama_find_nvcc)" || true
  caps="$(llama_gpu_caps)" || true
  archs="${caps//./}"
  archs="${archs// /;}"
  if [ -n "$nvcc" ] && [ -n "$caps" ]; then
    LLAMA_BUILD=cuda
    LLAMA_CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$archs"
    # CMake looks for nvcc on PATH only; name it when it was found under $CUDA_HOME
    command -v nvcc >/dev/null 2>&1 || LLAMA_CMAKE_ARGS+=" -DCMAKE_CUDA_COMPILER=$nvcc"
    LLAMA_BUILD_WHY="CUDA toolkit ($nvcc) and an NVIDIA GPU (compute capability ${caps// /, })"
    return 0
  fi
  LLAMA_BUILD=cpu
  LLAMA_CMAKE_ARGS="$("${PYTHON:-python3}" scripts/llama_check.py cpu-args)"
  if [ -n "$nvcc" ]; then
    LLAMA_BUILD_WHY="a CUDA toolkit ($nvcc) but no NVIDIA GPU (nvidia-smi)"
  elif [ -n "$caps" ]; then
    LLAMA_BUILD_WHY="an NVIDIA GPU (compute capability ${caps// /, }) but no CUDA toolkit (nvcc)"
  else
    LLAMA_BUILD_WHY="no CUDA toolkit or NVIDIA GPU"
  fi
}

# SETUP_DRY_RUN=1: print each command that would change something ("would run: ...") instead
# of running it (tests/e2e/test_setup_build_flags.py reads them)
llama_run() {
  if [ -n "${SETUP_DRY_RUN:-}" ]; then
    printf 'would run:'
    printf ' %q' "$@"
    printf '\n'
  else
    "$@"
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  llama_build_plan
  echo "llama.cpp build: $LLAMA_BUILD ($LLAMA_BUILD_WHY)"
  echo "CMAKE_ARGS=$LLAMA_CMAKE_ARGS"
fi
