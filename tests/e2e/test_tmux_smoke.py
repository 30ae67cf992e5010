"""The whole app, as a person runs it: the installed `mirage-tui` in a real terminal (tmux)."""

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

BIN = Path(sys.executable).parent / "mirage-tui"


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def _wait_for(session: str, text: str, timeout: float = 90.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux("capture-pane", "-p", "-t", session)
        if text in screen:
            return screen
        time.sleep(0.3)
    raise AssertionError(f"{text!r} did not appear within {timeout}s; screen was:\n{screen}")


@pytest.fixture
def session(tmp_path, request):
    assert BIN.exists(), f"{BIN} is not installed (run `make setup`)"
    name = f"mirage-smoke-{uuid.uuid4().hex[:8]}"
    db = tmp_path / "smoke.db"
    if "two_runs" in request.keywords:         # two finished runs made by the real engine
        from testkit.scripted_runs import build_workspace

        build_workspace(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    cmd = f"{BIN} --db {db}; echo EXITED-$?; sleep 30"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "100", "-y", "30", cmd],
                   check=True, env=env)
    try:
        yield name
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def test_launch_browse_a_query_and_quit(session):
    screen = _wait_for(session, "demo@1")
    assert "de 20 · en 20 · es 20" in screen  # the demo pool was imported on first launch
    _tmux("send-keys", "-t", session, "Enter")  # open the demo dataset's queries
    screen = _wait_for(session, "demo-de-01")
    # the queries load in a worker and take focus when they are there; until then Enter
    # reopens the dataset, so press it again until the first query opens
    for attempt in range(5):
        _tmux("send-keys", "-t", session, "Enter")
        try:
            screen = _wait_for(session, "★ oracle", timeout=15)  # cards follow the header
            break
        except AssertionError:
            if attempt == 4:
                raise
    assert "Gold answers: Eisenach" in screen
    _tmux("send-keys", "-t", session, "Escape")
    _wait_for(session, "Queries of demo@1")
    _tmux("send-keys", "-t", session, "q")
    _wait_for(session, "EXITED-0", timeout=30)


def test_quick_comparison_then_inspect_and_quit(session):
    """First launch → `g` (the suggested quick comparison: both packaged generators, base /
    oracle / mixed, MiniLM at 1/3/5 on 10 demo queries) → wait for it to finish in the live
    view → Enter on the first adaptability bar opens the inspector on that system's items of
    that category → quit."""
    _wait_for(session, "demo@1")
    _tmux("send-keys", "-t", session, "g")
    _wait_for(session, "running", timeout=120)
    screen = _wait_for(session, "done · Enter on a bar inspects its items", timeout=1500)
    assert "NV" in screen and "CA" in screen                 # the adaptability panel
    _tmux("send-keys", "-t", session, "Down")               # the first system's NV line
    _tmux("send-keys", "-t", session, "Enter")
    screen = _wait_for(session, "match", timeout=60)        # "N items match" / "1 item matches"
    assert "noise vulnerable" in screen.lower()
    _tmux("send-keys", "-t", session, "q")
    _wait_for(session, "EXITED-0", timeout=30)


@pytest.mark.two_runs
def test_runs_mark_two_and_compare(session):
    """Runs (3) → space on the first run → Down → c: the Compare screen pairs the two runs'
    items and says in words whether B is better, with its shared items → Escape → quit."""
    _wait_for(session, "demo@1")
    _tmux("send-keys", "-t", session, "3")
    _wait_for(session, "beta")
    _tmux("send-keys", "-t", session, "space")
    _tmux("send-keys", "-t", session, "Down")
    _tmux("send-keys", "-t", session, "c")
    screen = _wait_for(session, "shared items (", timeout=60)   # the verdict line
    assert "No clear difference on em_loose" in screen and "power:" in screen
    assert "wrong → right" in screen                             # the flips
    _tmux("send-keys", "-t", session, "Escape")
    time.sleep(1.0)             # a terminal reads ESC followed at once by q as Alt+q
    deadline = time.monotonic() + 30
    while "B − A on shared items" in _tmux("capture-pane", "-p", "-t", session):
        assert time.monotonic() < deadline, "Escape did not leave the Compare screen"
        time.sleep(0.3)
    _tmux("send-keys", "-t", session, "q")
    _wait_for(session, "EXITED-0", timeout=30)
