"""The installed ``mirage-tui`` in a real terminal (tmux), for the end-to-end tests: start it on
a workspace at a size, read the screen, wait for a text. The app imports this checkout's code
(``PYTHONPATH``), whichever checkout the venv was installed from."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

BIN = Path(sys.executable).parent / "mirage-tui"
ROOT = Path(__file__).resolve().parents[2]
SMALL_QUICK = Path(__file__).with_name("app_small_quick.py")


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def wait_for(session: str, text: str | tuple[str, ...], timeout: float = 90.0) -> str:
    """The screen once ``text`` (or any of a tuple of texts) is on it; an AssertionError with
    the screen after ``timeout``."""
    deadline = time.monotonic() + timeout
    screen = ""
    texts = (text,) if isinstance(text, str) else text
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-t", session)
        if any(t in screen for t in texts):
            return screen
        time.sleep(0.3)
    raise AssertionError(f"{text!r} did not appear within {timeout}s; screen was:\n{screen}")


@contextmanager
def app_session(db: Path, size: tuple[int, int], prefix: str, quick_sample: int | None = None):
    """The app on ``db`` in a detached tmux session of ``size`` (columns, rows), named
    ``prefix-<random>``; it prints ``EXITED-<code>`` when the app ends. Killed at the end.
    With ``quick_sample``, its quick comparison takes that many demo queries
    (:mod:`testkit.app_small_quick`)."""
    assert BIN.exists(), f"{BIN} is not installed (run `make setup`)"
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    app = BIN if quick_sample is None else f"{sys.executable} {SMALL_QUICK} {quick_sample}"
    cmd = f"PYTHONPATH={ROOT} {app} --db {db}; echo EXITED-$?; sleep 30"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", str(size[0]),
                    "-y", str(size[1]), cmd], check=True, env=env)
    try:
        yield name
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
