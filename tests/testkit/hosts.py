"""Model-host test helpers: waiting for processes to end, another client process that holds a
host (its lease) until the test lets it go, and the ``hosting`` fixture (a fresh data dir
where models are hosted, no host surviving the test)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from models.host import registry
from testkit.paths import ROOT

CLIENT = textwrap.dedent("""
    import sys
    from models.catalog import load_generator
    from models.base import SamplingParams
    g = load_generator({model!r}, n_threads=1)
    print(g.host.pid, g.generate('Hello', SamplingParams(max_tokens=2)).text, flush=True)
    sys.stdin.read()          # hold the host until the test closes stdin (or kills us)
""")


def dead_within(pids, seconds: float) -> bool:
    """Whether every process of ``pids`` has ended within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(registry.pid_alive(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


def client_process(model: str) -> tuple[subprocess.Popen, int, str]:
    """Another process that loads ``model`` (hosted as this process's environment says),
    generates two tokens and holds the host until its stdin closes: (the process, its host's
    pid, the text). Its stderr is in the assertion message when it fails."""
    proc = subprocess.Popen([sys.executable, "-c", CLIENT.format(model=model)], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    pid, _, text = proc.stdout.readline().rstrip("\n").partition(" ")
    if not pid:
        proc.kill()
        raise AssertionError(f"the client process failed: {proc.communicate()[1][-2000:]}")
    return proc, int(pid), text


@pytest.fixture
def hosting(tmp_path, monkeypatch):
    """A fresh data dir, hosted by default, a one-second grace, the llama.cpp backend; yields
    a list the test adds host pids to; at the end no host survives."""
    from models.host import supervisor

    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MIRAGE_HOSTING", "hosted")
    monkeypatch.setenv("MIRAGE_HOST_GRACE", "1")
    monkeypatch.delenv("MIRAGE_HOST_BACKEND", raising=False)
    monkeypatch.setenv("MIRAGE_LLAMA_SERVER", "")         # the llama.cpp backend, always
    seen: list[int] = []
    yield seen
    seen += [e.pid for e in registry.live_entries()]
    supervisor.stop_hosts()
    assert dead_within(seen, 15), f"a host survived the test: {seen}"
