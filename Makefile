# The two quick-start commands:  `make run`  (set up, then launch the app on its default data)
#                                `make test` (set up, then run the test suite)
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.mirage-setup

.PHONY: run test setup bench llama-server gpu-pack
run: setup
	$(BIN)/mirage-tui

test: setup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup.sh scripts/llama_build_flags.sh scripts/llama_check.py \
          models/llama/build.py
	bash scripts/setup.sh $(VENV)
	touch $(STAMP)

bench: setup
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

# optional on the CPU: llama.cpp's llama-server as the model-host backend (~15 min on 2 cores).
# With nvcc and an NVIDIA GPU, setup builds it already and this builds it for that GPU too;
# your own CMAKE_ARGS win. See docs/hosting.md.
llama-server: setup
	bash scripts/build_llama_server.sh $(VENV)

# the GPU check's pack: wheels, the trimmed llama-cpp-python sdist and SmolLM2, in parts that
# travel one per call to a machine with no network (scripts/gpu_check.sh; docs/hosting.md)
gpu-pack: setup
	$(BIN)/python scripts/gpu_pack.py
