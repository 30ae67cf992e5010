"""The model host process imports nothing that crashes beside a CUDA llama.cpp (pandas/pyarrow,
torch, scikit-learn: llama-cpp-python issue #1581), checked in a fresh interpreter that imports
what ``python -m models.host serve`` loads for either backend, without starting a host."""

from __future__ import annotations

import json
import subprocess
import sys

from testkit.paths import ROOT

# and what would pull them in: the engine, the app, sqlite_utils, sentence-transformers
CRASH_BESIDE_CUDA_LLAMA = {"pandas", "pyarrow", "torch", "sklearn", "sqlite_utils",
                           "sentence_transformers", "textual", "engine", "mirage_tui"}


def test_the_host_entry_module_and_its_backends_import_none_of_them():
    code = ("import json, sys\n"
            "import models.host.__main__, models.host.server, models.llama.generator\n"
            "from models.host.llama_server import LlamaServerGenerator\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    modules = json.loads(out.stdout)
    assert {"llama_cpp", "models.llama.generator", "models.host.server", "models.host.budget"} <= \
        set(modules)
    assert sorted(m for m in modules if m.split(".")[0] in CRASH_BESIDE_CUDA_LLAMA) == []
