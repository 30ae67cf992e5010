"""The machine's load as the estimates read it: other processes wanting a core count, this
process and the model hosts that serve only it do not, and a probe stands for "now" only
while it is fresh. A child process spinning on a core is the load; nothing is timed."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from engine import machine_load
from models.host import registry

LOAD_NOW = machine_load.load_now     # the real one: the suite's fixtures set an idle machine
pytestmark = pytest.mark.skipif(not os.path.exists("/proc/loadavg"),
                                reason="the probe reads /proc")


@pytest.fixture
def spinner():
    """A child process keeping a core busy (always runnable), stopped after the test."""
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        while machine_load._runnable_threads(child.pid) < 1:   # started and spinning
            time.sleep(0.01)
        yield child.pid
    finally:
        child.kill()
        child.wait()


def test_a_process_spinning_on_a_core_is_read_as_a_busy_core(spinner):
    found = machine_load.probe(0.3, exclude=())
    assert found is not None and found.how == "quick probe"
    assert found.others >= 0.9                       # the spinner wants a core all along
    assert found.average is not None                 # what uptime says, beside it
    assert f"load average {found.average:.2f}" in found.words()


def test_the_threads_of_excluded_processes_are_not_counted_as_others(spinner):
    found = machine_load.probe(0.3, exclude=[spinner])
    assert found.own >= 0.9                          # seen, and kept apart from others


def _host(key: str, pid: int, data: os.PathLike) -> registry.HostEntry:
    entry = registry.HostEntry(key=key, name="smollm2", model="m.gguf",
                               url="http://127.0.0.1:1", pid=pid,
                               pid_started=registry.process_start_time(pid), threads=2,
                               n_ctx=2048, backend="llama.cpp", started=time.time(),
                               log=str(data))
    registry.write_entry(entry)
    return entry


def test_a_host_serving_only_this_process_is_its_own_work_and_one_serving_another_is_load(
        tmp_path, monkeypatch, spinner):
    monkeypatch.setenv(registry.DATA_DIR_ENV, str(tmp_path / "data"))
    assert machine_load.own_host_pids() == set()
    assert not (tmp_path / "data").exists()         # looking makes no folder
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        registry.hosts_dir()
        ours = _host("a" * 32, spinner, tmp_path)
        registry.add_lease(ours.key)
        theirs = _host("b" * 32, other.pid, tmp_path)
        registry.add_lease(theirs.key, other.pid)
        assert machine_load.own_host_pids() == {spinner}
        found = machine_load.probe(0.3)              # the default: our own hosts excluded
        assert found.own >= 0.9
        registry.add_lease(ours.key, other.pid)      # another process shares it now
        assert machine_load.own_host_pids() == set()
    finally:
        other.kill()
        other.wait()


def test_a_probe_stands_for_now_only_while_fresh(monkeypatch):
    made = []

    def probe(seconds=machine_load.PROBE_SECONDS, exclude=None):
        made.append(seconds)
        load = machine_load.MachineLoad(float(len(made)), 2, "probe")
        monkeypatch.setattr(machine_load, "_kept", (time.monotonic(), load))
        return load

    monkeypatch.setattr(machine_load, "probe", probe)
    monkeypatch.setattr(machine_load, "load_now", LOAD_NOW)
    monkeypatch.setattr(machine_load, "_kept", None)          # no probe made yet
    first = machine_load.load_now()
    assert first.others == 1.0
    assert machine_load.load_now() is first and machine_load.load_now(wait=False) is first
    kept = (time.monotonic() - machine_load.PROBE_FRESH_S - 1, first)
    monkeypatch.setattr(machine_load, "_kept", kept)
    assert machine_load.load_now(wait=False) is first     # a run starting on its plan's probe
    assert machine_load.load_now().others == 2.0          # a plan probes again
    assert made == [machine_load.PROBE_SECONDS] * 2
    monkeypatch.setattr(machine_load, "_kept",
                        (time.monotonic() - machine_load.PROBE_KEPT_S - 1, first))
    assert machine_load.load_now(wait=False).others == 3.0
    assert made[-1] == machine_load.QUICK_PROBE_S
