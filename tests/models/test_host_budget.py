"""The user's thread budget across data dirs (models/host/budget.py): the split, its folder,
stale entries, and real SmolLM2 hosts in two data dirs that share the cores and grow back when
one stops."""

from __future__ import annotations

import os
import stat
import subprocess
import time

import pytest
from testkit.runs import SMOL

from models.base import SamplingParams
from models.catalog import load_generator
from models.host import budget, registry, supervisor
from models.host.budget import BudgetEntry


def _entry(pid: int, wanted: int, since: float, *, threads: int | None = None,
           adjustable: bool = True) -> BudgetEntry:
    return BudgetEntry(pid=pid, pid_started=None, since=since, wanted=wanted,
                       threads=wanted if threads is None else threads, adjustable=adjustable)


@pytest.mark.parametrize("cores, hosts, expected", [
    (2, [(2,)], [2]),
    (2, [(2,), (2,)], [1, 1]),                 # the two-workspace case of issue 26
    (2, [(2,), (2,), (2,)], [1, 1, 1]),        # never below one: the total is the hosts
    (3, [(3,), (3,)], [2, 1]),                 # the core left over goes to the oldest
    (16, [(2,), (16,)], [2, 14]),              # a modest host gets what it asks, no more
    (16, [(16,), (1,), (16,)], [8, 1, 7]),
    (8, [(8, False, 4), (8,)], [4, 4]),        # llama-server keeps its -t and counts with it
])
def test_shares_split_the_cores_fairly(cores, hosts, expected):
    entries = [_entry(100 + i, h[0], since=float(i),
                      adjustable=h[1] if len(h) > 1 else True,
                      threads=h[2] if len(h) > 2 else None) for i, h in enumerate(hosts)]
    got = budget.shares(entries, cores)
    assert [got[e.pid] for e in entries] == expected


def test_the_budget_folder_is_the_users_own_and_stale_entries_do_not_count(tmp_path,
                                                                            monkeypatch):
    monkeypatch.delenv(budget.BUDGET_DIR_ENV, raising=False)
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(budget, "DEFAULT_PARENT", tmp_path)           # for /tmp
    folder = budget.budget_dir()
    assert folder == tmp_path / f"mirage-tui-{os.getuid()}-threads"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    dead = subprocess.Popen(["true"])
    dead.wait()
    me = BudgetEntry(pid=os.getpid(), pid_started=registry.process_start_time(os.getpid()),
                     since=1.0, wanted=2, threads=2)
    reused = BudgetEntry(pid=os.getpid(), pid_started=-5.0, since=0.5, wanted=2, threads=2)
    budget.join(_entry(dead.pid, 2, since=0.0))
    budget.join(me)
    assert stat.S_IMODE((folder / f"{os.getpid()}.json").stat().st_mode) == 0o600
    assert budget.live() == [me]
    assert not (folder / f"{dead.pid}.json").exists()             # removed on the way
    budget.join(reused)                  # this pid, another start time: a reused pid
    assert budget.live() == [] and list(folder.glob("*.json")) == []
    budget.join(me)
    budget.leave(os.getpid())
    assert budget.live() == []


def test_a_budget_folder_someone_else_placed_is_not_used(tmp_path, monkeypatch):
    monkeypatch.delenv(budget.BUDGET_DIR_ENV, raising=False)
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(budget, "DEFAULT_PARENT", tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / f"mirage-tui-{os.getuid()}-threads").symlink_to(tmp_path / "elsewhere")
    assert budget.budget_dir() == tmp_path / "data" / "hosts" / "threads"


@pytest.fixture
def two_data_dirs(tmp_path, monkeypatch):
    """Two data dirs (two workspaces' hosts), one budget; no host survives the test."""
    monkeypatch.setenv(budget.BUDGET_DIR_ENV, str(tmp_path / "budget"))
    monkeypatch.setenv("MIRAGE_HOSTING", "hosted")
    monkeypatch.setenv("MIRAGE_HOST_GRACE", "1")
    monkeypatch.setenv("MIRAGE_LLAMA_SERVER", "")
    monkeypatch.delenv("MIRAGE_HOST_BACKEND", raising=False)
    dirs = [tmp_path / "a", tmp_path / "b"]
    yield dirs
    pids = []
    for folder in dirs:
        monkeypatch.setenv("MIRAGE_DATA_DIR", str(folder))
        pids += [e.pid for e in registry.live_entries()]
        supervisor.stop_hosts()
    assert not [p for p in pids if registry.pid_alive(p)]


def _served_threads(gen) -> int:
    return supervisor.get_json(gen.host, "/mirage/identity")["threads"]


def _wait_for(check, seconds: float) -> None:
    """Until ``check()`` holds (fails after ``seconds``, a deadline for a hung test)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds} s")
        time.sleep(0.1)


def test_hosts_of_two_data_dirs_share_the_cores_and_grow_back(two_data_dirs, monkeypatch):
    cores = budget.cores()
    if cores < 2:
        pytest.skip("one core: every host has its one thread")
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(two_data_dirs[0]))
    first = load_generator(SMOL)                          # asks for every core
    assert _served_threads(first) == cores
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(two_data_dirs[1]))
    second = load_generator(SMOL, n_ctx=2048)             # another workspace's host
    # when the second host is ready the first has shrunk (one budget, not one per data dir)
    half = cores // 2
    assert (_served_threads(first), _served_threads(second)) == (cores - half, half)
    entries = budget.live()
    assert sorted(e.data_dir for e in entries) == [str(d) for d in two_data_dirs]
    assert sum(e.threads for e in entries) == cores
    # the first workspace's client goes: its host stops after its grace, the other grows back
    first.close()
    _wait_for(lambda: _served_threads(second) == cores, seconds=120)
    assert [e.pid for e in budget.live()] == [second.host.pid]
    assert budget.live()[0].threads == cores and registry.live_entries()[0].threads == cores
    assert f"threads {half} -> {cores}" in open(second.host.log).read()
    assert second.generate("The capital of France is", SamplingParams(max_tokens=4)).text


def test_the_threads_a_client_asks_for_are_what_the_host_wants(two_data_dirs, monkeypatch):
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(two_data_dirs[0]))
    gen = load_generator(SMOL, n_threads=1)
    (mine,) = budget.live()
    assert (mine.wanted, mine.threads, mine.url) == (1, 1, gen.host.url)
    assert _served_threads(gen) == 1                       # it does not grow past what it wants
