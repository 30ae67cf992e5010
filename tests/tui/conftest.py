"""Fixtures of the TUI tests: a fresh workspace path, and the inspection workspace (two runs
by the real engine and an arena, :mod:`testkit.scripted_runs`), built once per session and
copied for each test. Pilot helpers live in :mod:`testkit.tui`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from testkit.scripted_runs import build_workspace


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "workspace.db"


@pytest.fixture(scope="session")
def workspace_template(tmp_path_factory) -> dict:
    return build_workspace(tmp_path_factory.mktemp("inspect-workspace") / "workspace.db")


@pytest.fixture
def workspace(workspace_template, tmp_path) -> dict:
    path = tmp_path / "workspace.db"
    shutil.copy(workspace_template["path"], path)
    return {"path": path, "queries": workspace_template["queries"]}
