"""Shared fixtures: a fresh workspace store per test, and the row counts a failed import must
leave unchanged. Plain helpers live in tests/testkit (paths, MIRAGE writers, store checks)."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest
from testkit.paths import ROOT
from testkit.store import row_counts

if str(ROOT) not in sys.path:  # so `pytest` works without an installed package too
    sys.path.insert(0, str(ROOT))

# No test (nor the CLI it starts) reads the user's endpoints.toml or lists the model servers
# that happen to run on this machine; endpoint tests set both variables themselves.
os.environ["MIRAGE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="mirage-config-")
os.environ["MIRAGE_ENDPOINT_PORTS"] = ""


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
