"""Which backend a new host uses (models/host/backend_choice.py): no binary, the override, a GPU
build, a measurement of this machine that says llama-server pays or does not, and a
measurement of another binary (ignored). The binary is a real executable file found as the
product finds it; the measurement is the file the benchmark writes."""

from __future__ import annotations

import json
import os

import pytest
from testkit.runs import SMOL

from models.base import ModelError
from models.host.backend_choice import choose_backend, read_speeds, record_speeds, speeds_path
from models.host.supervisor import HostSpec


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("MIRAGE_LLAMA_SERVER", raising=False)
    monkeypatch.delenv("MIRAGE_HOST_BACKEND", raising=False)
    return tmp_path / "data"


def _binary(data, body: bytes = b"#!/bin/sh\n"):
    binary = data / "bin" / "llama-server"
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.write_bytes(body)
    binary.chmod(0o755)
    return binary


def _measured(binary, default: float, server: float):
    """Measured: llama-server at ``server`` × 0.5 and × 2 of the default's items/s at 1 and
    4 in flight, relative to ``default``: a geometric mean of server / default."""
    return record_speeds({1: {"llama.cpp": default, "llama-server": server * 0.5},
                          4: {"llama.cpp": default / 4, "llama-server": server / 2}},
                         model=SMOL, source="test", binary=binary)


def test_no_binary_is_the_in_process_host(data):
    choice = choose_backend()
    assert choice.backend == "llama.cpp" and "no llama-server binary" in choice.reason
    assert HostSpec.resolve(SMOL).backend == "llama.cpp"


def test_no_measurement_keeps_the_host_on_a_cpu_and_says_how_to_measure(data):
    """Issue 26: llama-server is used where the benchmark shows it pays (always on a GPU);
    a CPU build not measured yet keeps the in-process host (0.79x on 2 cores here)."""
    _binary(data)
    choice = choose_backend()
    assert choice.backend == "llama.cpp"
    assert "no measurement" in choice.reason and "bench_backends.py" in choice.reason
    assert HostSpec.resolve(SMOL).backend == "llama.cpp"


def test_a_measurement_that_pays_picks_llama_server_and_one_that_does_not_the_host(data):
    binary = _binary(data)
    _measured(binary, default=1.0, server=1.5)
    choice = choose_backend()
    assert choice.backend == "llama-server" and "1.50x" in choice.reason
    assert json.loads(speeds_path().read_text())["best"] == {"llama.cpp": 1.0,
                                                             "llama-server": 0.75}
    _measured(binary, default=2.0, server=1.5)
    choice = choose_backend()
    assert choice.backend == "llama.cpp" and "does not pay" in choice.reason
    assert "0.75x" in choice.reason
    assert HostSpec.resolve(SMOL).backend == "llama.cpp"


def test_a_measurement_of_another_binary_is_ignored(data):
    binary = _binary(data)
    _measured(binary, default=2.0, server=1.0)
    binary.write_bytes(b"#!/bin/sh\n# rebuilt\n")
    os.utime(binary, (1, 1))
    speeds, why = read_speeds(binary)
    assert speeds is None and "another llama-server binary" in why
    choice = choose_backend()                  # as if not measured: the host, and says why
    assert choice.backend == "llama.cpp" and "another llama-server binary" in choice.reason


def test_a_gpu_build_always_uses_llama_server(data):
    binary = _binary(data, b"\x7fELF....libcudart.so.12\x00libcublas.so.12\x00")
    _measured(binary, default=2.0, server=1.0)      # a CPU measurement does not matter
    choice = choose_backend()
    assert choice.backend == "llama-server" and "GPU build" in choice.reason


def test_the_override_wins_and_is_checked(data, monkeypatch):
    binary = _binary(data)
    _measured(binary, default=1.0, server=3.0)
    monkeypatch.setenv("MIRAGE_HOST_BACKEND", "llama.cpp")
    choice = choose_backend()
    assert choice.backend == "llama.cpp" and "MIRAGE_HOST_BACKEND=llama.cpp" in choice.reason
    monkeypatch.setenv("MIRAGE_HOST_BACKEND", "gpu")
    with pytest.raises(ModelError, match="expected auto, llama.cpp or llama-server"):
        choose_backend()
    monkeypatch.setenv("MIRAGE_HOST_BACKEND", "llama-server")
    binary.unlink()
    with pytest.raises(ModelError, match="make llama-server"):
        choose_backend()


def test_models_check_says_which_backend_a_hosted_model_uses_and_why(data, monkeypatch, capsys):
    from mirage_tui.cli import main as cli_main
    from models.host import registry, supervisor

    monkeypatch.setenv("MIRAGE_HOSTING", "hosted")
    monkeypatch.setenv("MIRAGE_HOST_GRACE", "1")
    _measured(_binary(data), default=2.0, server=1.0)    # measured: llama-server does not pay
    try:
        assert cli_main(["models", "check", SMOL, "--max-tokens", "2",
                         "--db", str(data / "none.db")]) == 0
        out = capsys.readouterr().out
        assert [e.backend for e in registry.live_entries()] == ["llama.cpp"]
    finally:
        supervisor.stop_hosts()
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("backend:"))
    assert line.strip().startswith("backend: llama.cpp: llama-server does not pay here: 0.50x")
