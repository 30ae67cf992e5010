"""The llama_cpp installed in this venv generates on this machine, in a child process (as set-up
checks it, scripts/llama_check.py probe). A build that crashes here (the AMX build on a CPU with
AMX dies by SIGSEGV at its first token, ggml-org/llama.cpp#20824) fails this test loudly, with
the log line behind it and the command that rebuilds safely; it never skips."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from testkit.paths import ROOT

from models.llama.build import Cpu, cause_line, cpu_builds, rebuild_command, signal_name


def test_the_installed_llama_cpp_generates_here_in_a_child_process(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "llama_check.py"), "probe"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    if out.returncode != 0:
        how = signal_name(out.returncode) or f"exit status {out.returncode}"
        pytest.fail(f"llama_cpp could not generate here ({how}): "
                    f"{cause_line(out.stderr) or out.stderr[-1500:]}; rebuild it with "
                    f"{rebuild_command()}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["text"].strip() and result["tokens"] > 0, result
    assert result["version"] == "0.3.36"


def test_this_venv_holds_the_build_set_up_checked_for_this_cpu():
    """Set-up stamps what it built and checked: the safe build for this CPU, never AMX."""
    stamp_path = Path(sys.prefix) / ".mirage-llama.json"
    assert stamp_path.exists(), f"no {stamp_path}: this venv was not made by scripts/setup.sh"
    stamp = json.loads(stamp_path.read_text())
    assert stamp["checked"]["text"].strip()
    if stamp["kind"] in ("cpu", "cpu-baseline"):
        assert stamp["cmake_args"] in [b.cmake_args for b in cpu_builds(Cpu.read())]
        if Cpu.read().x86:
            assert "-DGGML_AMX_INT8=OFF" in stamp["cmake_args"]
    import llama_cpp                       # in this process too: what it was compiled with
    info = llama_cpp.llama_print_system_info().decode()
    assert "AMX_INT8 = 1" not in info, info
