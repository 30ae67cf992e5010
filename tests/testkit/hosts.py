"""Model-host test helpers: waiting for processes to end, and another client process that
holds a host (its lease) until the test lets it go."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

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
