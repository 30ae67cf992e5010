"""Fixtures of the TUI tests: a fresh workspace path (the inspection workspace, ``workspace``, is
in tests/conftest.py). Pilot helpers live in :mod:`testkit.tui`."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "workspace.db"
