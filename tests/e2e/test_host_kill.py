"""``mirage-tui run --generator smollm2`` as a user runs it: through a model host by default.
The host is killed with -9 in the middle of the run: the error names the model and the signal,
a resumed run completes with no row lost or duplicated, and no host process is left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from testkit.paths import ROOT
from testkit.runs import SMOL, mirage_cli

from engine.datasets.demo_pool import ensure_demo
from engine.store import Store
from models.host import registry

ARGS = ("--dataset", "demo", "--generator", SMOL, "--settings", "base,oracle", "--sample", "3",
        "--max-tokens", "12", "--threads", "1", "--name", "hosted")
PLANNED = 6


@pytest.fixture
def user_env(tmp_path, monkeypatch):
    """The environment of a user: hosted (the default), a data dir of this test's own."""
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("MIRAGE_HOSTING", raising=False)
    monkeypatch.setenv("MIRAGE_HOST_GRACE", "1")
    monkeypatch.setenv("MIRAGE_LLAMA_SERVER", "")
    return dict(os.environ)


def _run(db, env, timeout=180) -> subprocess.CompletedProcess:
    return subprocess.run([*mirage_cli(), "run", "--db", str(db), *ARGS], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_kill_9_of_the_host_mid_run_then_resume(tmp_path, user_env):
    db = tmp_path / "w.db"
    store = Store(db)
    ensure_demo(store)
    proc = subprocess.Popen([*mirage_cli(), "run", "--db", str(db), *ARGS], cwd=ROOT,
                            env=user_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while store.query("SELECT COUNT(*) FROM generations")[0][0] < 2:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run ended or stalled: {proc.communicate()[1][-2000:]}")
        time.sleep(0.05)
    entries = registry.live_entries()             # the run went through a host (the default)
    assert len(entries) == 1 and entries[0].clients() == [proc.pid]
    hosts = [entries[0].pid]
    os.kill(hosts[0], signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    if proc.returncode != 0:                     # no retry in the engine: the run stops
        assert SMOL in err and "killed by signal 9 (SIGKILL)" in err, err
        assert store.query("SELECT status FROM runs")[0][0] in ("failed", "stopped")
    hosts += [e.pid for e in registry.live_entries()]
    before = {r["key"]: r["created_at"] for r in store.query(
        "SELECT key, created_at FROM generations")}
    assert len(before) >= 2
    done = _run(db, user_env)                     # resume: the same command again
    assert done.returncode == 0, done.stderr
    after = {r["key"]: r["created_at"] for r in store.query(
        "SELECT key, created_at FROM generations")}
    assert len(after) == PLANNED and all(after[k] == v for k, v in before.items())
    items = store.query("SELECT system, setting, query_rowid, generation_key FROM run_items "
                        "WHERE error IS NULL")
    assert len(items) == PLANNED and len({tuple(r[:3]) for r in items}) == PLANNED
    assert {r[3] for r in items} == set(after)
    assert store.query("SELECT status FROM runs")[0][0] == "done"
    # no host is left once the last client is gone
    hosts += [e.pid for e in registry.live_entries()]
    deadline = time.monotonic() + 15
    while any(registry.pid_alive(p) for p in hosts) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(registry.pid_alive(p) for p in hosts), hosts
    assert registry.live_entries() == []


def _new_host(seen: list[int], deadline: float, proc) -> int:
    while time.monotonic() < deadline and proc.poll() is None:
        pids = [e.pid for e in registry.live_entries() if e.pid not in seen]
        if pids:
            return pids[0]
        time.sleep(0.05)
    pytest.fail(f"no new host came up: {proc.communicate()[1][-2000:]}")


@pytest.mark.slow
def test_a_second_host_death_stops_the_run_and_the_log_names_each(tmp_path, user_env):
    """Before: each death was retried as transient (the transport error was the second
    death's __context__), three were restarted in one run, and the run log said nothing."""
    from engine.runs.log import read_log

    db = tmp_path / "w.db"
    store = Store(db)
    ensure_demo(store)
    args = ["--dataset", "demo", "--generator", SMOL, "--settings", "base,oracle,mixed",
            "--sample", "10", "--max-tokens", "24", "--threads", "1", "--name", "twice"]
    proc = subprocess.Popen([*mirage_cli(), "run", "--db", str(db), *args], cwd=ROOT,
                            env=user_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 180
    killed: list[int] = []
    try:
        for _ in range(2):
            host = _new_host(killed, deadline, proc)
            stored = store.query("SELECT COUNT(*) FROM generations")[0][0]
            while store.query("SELECT COUNT(*) FROM generations")[0][0] < stored + 1:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the run ended or stalled: {proc.communicate()[1][-2000:]}")
                time.sleep(0.05)
            os.kill(host, signal.SIGKILL)
            killed.append(host)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0, out
    assert "second time" in err and "killed by signal 9 (SIGKILL)" in err, err
    run_id, status = store.query("SELECT id, status FROM runs")[0]
    assert status == "failed"
    done = store.query("SELECT COUNT(*) FROM run_items WHERE error IS NULL")[0][0]
    assert done < 30                                 # it stopped; a resume goes on
    hosts = [line.message for line in read_log(store, run_id) if line.kind == "host"]
    assert len(hosts) == 2, hosts
    assert all(SMOL in m and "SIGKILL" in m for m in hosts)
    assert "restarted" in hosts[0] and "the run stops" in hosts[1]
    assert not [e for e in registry.live_entries() if e.pid in killed]


def test_models_hosts_lists_and_stops(tmp_path, user_env):
    code = ("from models.catalog import load_generator; import sys; "
            f"g = load_generator({SMOL!r}, n_threads=1); print(g.host.pid, flush=True); "
            "sys.stdin.read()")
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT,
                              env=user_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        pid = int(holder.stdout.readline())
        listed = subprocess.run([*mirage_cli(), "models", "hosts"], cwd=ROOT, env=user_env,
                                capture_output=True, text=True, timeout=60)
        assert listed.returncode == 0, listed.stderr
        line = next(ln for ln in listed.stdout.splitlines() if ln.startswith(SMOL))
        assert str(pid) in line and str(holder.pid) in line and "127.0.0.1" in line
        stopped = subprocess.run([*mirage_cli(), "models", "hosts", "--stop", "smollm2"],
                                 cwd=ROOT, env=user_env, capture_output=True, text=True,
                                 timeout=60)
        assert stopped.returncode == 0 and f"stopped {SMOL} (pid {pid}" in stopped.stdout
        assert not registry.pid_alive(pid) and registry.live_entries() == []
    finally:
        holder.kill()
        holder.wait()
