"""A model host's grace period, said where a user looks: the host keeps since when no client
holds it in its registry entry beside its grace, ``models hosts`` shows what is left of it, and
a process that quits says how long the hosts it used stay up. Stand-in processes (a sleeping
child as a client or a host); no model is loaded."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from models.host import registry, supervisor
from models.host.server import Host
from testkit.runs import mirage_cli

KEY = "c" * 32


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv(registry.DATA_DIR_ENV, str(tmp_path / "data"))
    registry.hosts_dir()
    return tmp_path / "data"


@pytest.fixture
def sleeper():
    """Start sleeping child processes (a client, a host); all stopped after the test."""
    children = []

    def start() -> subprocess.Popen:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        children.append(child)
        return child
    yield start
    for child in children:
        child.kill()
        child.wait()


def _entry(pid: int, grace: float | None = 10.0, idle_since: float | None = None
           ) -> registry.HostEntry:
    extra = {} if grace is None else {"grace": grace, "idle_since": idle_since}
    entry = registry.HostEntry(key=KEY, name="smollm2-135m-instruct", model="m.gguf",
                               url="http://127.0.0.1:1", pid=pid,
                               pid_started=registry.process_start_time(pid), threads=2,
                               n_ctx=2048, backend="llama.cpp", started=time.time(),
                               log="host.log", extra=extra)
    registry.write_entry(entry)
    return entry


def _until(condition, what: str) -> None:
    for _ in range(1000):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError(f"never: {what}")


def test_a_host_keeps_since_when_no_client_holds_it(data, sleeper):
    client = sleeper()
    entry = _entry(os.getpid(), grace=30.0)         # this process stands in for the host
    registry.add_lease(KEY, client.pid)
    host = Host(None, entry, grace=30.0)
    watching = threading.Thread(target=host.watch, kwargs={"poll": 0.01}, daemon=True)
    watching.start()
    try:
        time.sleep(0.05)
        assert registry.read_entry(KEY).extra["idle_since"] is None       # in use
        [listed] = supervisor.list_hosts()
        assert (listed["grace_s"], listed["grace_left_s"]) == (30.0, None)
        client.kill()
        client.wait()
        _until(lambda: registry.read_entry(KEY).extra["idle_since"] is not None,
               "the host noticed its last client go")
        [listed] = supervisor.list_hosts()
        assert listed["clients"] == [] and 0 < listed["grace_left_s"] <= 30.0
        registry.add_lease(KEY, sleeper().pid)                              # a new client
        _until(lambda: registry.read_entry(KEY).extra["idle_since"] is None,
               "the host saw the new client")
    finally:
        host.stop()
        watching.join(5)
    assert not watching.is_alive()


def test_what_is_left_of_the_grace_is_counted_from_when_the_host_went_idle(data, sleeper):
    entry = _entry(sleeper().pid, grace=10.0, idle_since=1000.0)
    assert supervisor.grace_left(entry, now=1003.0) == 7.0
    assert supervisor.grace_left(entry, now=1030.0) == 0.0
    assert supervisor.grace_left(_entry(entry.pid, idle_since=None)) == 10.0   # not noticed
    assert supervisor.grace_left(_entry(entry.pid, grace=None)) is None       # an older host


def test_models_hosts_shows_each_hosts_idle_grace(data, sleeper):
    host = sleeper()
    _entry(host.pid, grace=10.0, idle_since=time.time())
    env = {**os.environ, registry.DATA_DIR_ENV: str(data), "COLUMNS": "200"}
    out = subprocess.run([*mirage_cli(), "models", "hosts"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    header, row = out.stdout.splitlines()[:2]
    assert "IDLE GRACE" in header and " s left of 10 s" in row
    registry.add_lease(KEY, sleeper().pid)
    out = subprocess.run([*mirage_cli(), "models", "hosts"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert "in use (10 s once idle)" in out.stdout.splitlines()[1]


def test_a_quitting_process_says_how_long_its_hosts_stay_up(data, sleeper, monkeypatch):
    host = sleeper()
    _entry(host.pid, grace=10.0)
    monkeypatch.setattr(supervisor, "_LEASED", {KEY: registry.add_lease(KEY)})
    assert supervisor.hosts_after_quitting() == [
        f"model host smollm2-135m-instruct stays up 10 s for other runs (pid {host.pid}; "
        "mirage-tui models hosts --stop ends it now)"]
    registry.add_lease(KEY, sleeper().pid)           # another process uses it too
    assert supervisor.hosts_after_quitting() == [
        f"model host smollm2-135m-instruct goes on serving 1 other process (pid {host.pid})"]
