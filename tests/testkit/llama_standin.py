"""A stand-in ``llama-cpp-python==0.3.36`` source tree, for set-up's build check
(scripts/llama_check.py) without compiling llama.cpp (~5 min on 2 cores).

``write_source(folder)`` writes a project whose in-tree PEP 517 backend (standard library only,
so ``pip wheel --no-build-isolation`` needs nothing from the registry) bakes the build's
``CMAKE_ARGS`` into the wheel, as the real build bakes its flags into ``libllama.so``. Its
``llama_cpp.Llama`` then behaves as the real one does on a CPU where a flag crashes:

- ``STANDIN_CRASH_IF=<text>`` at run time: if the baked flags contain ``<text>`` (e.g.
  ``-DGGML_AVX512=ON``), the first ``create_completion`` logs the AMX lines llama.cpp logs and
  dies by SIGSEGV, as ``_internals.decode`` does on an AMX CPU (ggml-org/llama.cpp#20824);
- ``STANDIN_BAKE_CRASH=1`` at build time: every wheel built so crashes the same way (a bad
  wheel left in a cache);
- ``STANDIN_SILENT=1`` at run time: generates no text.

Otherwise it answers " Paris." to anything.
"""

from __future__ import annotations

from pathlib import Path

BACKEND = '''
"""In-tree PEP 517 backend: a wheel of llama_cpp/ with the build's CMAKE_ARGS baked in."""
import base64, hashlib, os, zipfile

NAME, VERSION = "llama_cpp_python", "0.3.36"
DIST = f"{NAME}-{VERSION}.dist-info"


def get_requires_for_build_wheel(config_settings=None):
    return []


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    here = os.path.dirname(os.path.abspath(__file__))
    files = {}
    for fn in sorted(os.listdir(os.path.join(here, "llama_cpp"))):
        if fn.endswith(".py"):
            with open(os.path.join(here, "llama_cpp", fn), "rb") as f:
                files[f"llama_cpp/{fn}"] = f.read()
    files["llama_cpp/_baked.py"] = (
        f"CMAKE_ARGS = {os.environ.get('CMAKE_ARGS', '')!r}\\n"
        f"CRASH = {os.environ.get('STANDIN_BAKE_CRASH') == '1'!r}\\n").encode()
    files[f"{DIST}/METADATA"] = (f"Metadata-Version: 2.1\\nName: llama-cpp-python\\n"
                                 f"Version: {VERSION}\\n").encode()
    files[f"{DIST}/WHEEL"] = (b"Wheel-Version: 1.0\\nGenerator: standin\\n"
                              b"Root-Is-Purelib: true\\nTag: py3-none-any\\n")
    name = f"{NAME}-{VERSION}-py3-none-any.whl"
    record = [_record_line(n, d) for n, d in files.items()] + [f"{DIST}/RECORD,,"]
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        for n, d in files.items():
            zf.writestr(n, d)
        zf.writestr(f"{DIST}/RECORD", "\\n".join(record) + "\\n")
    return name
'''

PYPROJECT = '''[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]

[project]
name = "llama-cpp-python"
version = "0.3.36"
'''

INIT = '''"""Stand-in llama_cpp (tests/testkit/llama_standin.py)."""
import os, signal, sys

from llama_cpp import _baked

__version__ = "0.3.36"


def llama_supports_gpu_offload():
    return False


class Llama:
    def __init__(self, model_path, **kw):
        self.model_path = model_path
        print(f"llama_model_loader: loaded meta data from {model_path}", file=sys.stderr)
        print(f"stand-in build: CMAKE_ARGS={_baked.CMAKE_ARGS}", file=sys.stderr)

    def create_completion(self, prompt, max_tokens=16, temperature=0.8, **kw):
        crash_if = os.environ.get("STANDIN_CRASH_IF")
        if _baked.CRASH or (crash_if and crash_if in _baked.CMAKE_ARGS):
            print("load_tensors: AMX model buffer size = 95.34 MiB", file=sys.stderr)
            print("amx repack tensor blk.0.attn_q.weight of type q4_1", file=sys.stderr)
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGSEGV)
        text = "" if os.environ.get("STANDIN_SILENT") == "1" else " Paris."
        return {"choices": [{"text": text, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 2 if text else 0}}
'''


def write_source(folder: Path) -> Path:
    """The stand-in source tree in ``folder``; returns it."""
    (folder / "llama_cpp").mkdir(parents=True, exist_ok=True)
    (folder / "backend.py").write_text(BACKEND)
    (folder / "pyproject.toml").write_text(PYPROJECT)
    (folder / "llama_cpp" / "__init__.py").write_text(INIT)
    return folder
