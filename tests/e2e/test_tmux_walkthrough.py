"""Issue 18's closing check: the whole day's loop at 80×24, as a person runs it in a real
terminal (tmux): launch → a run from the New-run form → drill down from Live into the
Inspector, open an item, n → New run → ctrl+s: Live shows the new run (issue 27) → Runs lists
it without a refresh → compare two runs → quit."""

import os
import shutil
import subprocess
import time
import uuid

import pytest

from test_tmux_smoke import BIN, _tmux, _wait_for

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def small_session(tmp_path):
    """The app at 80×24 on a workspace holding two finished scripted runs (alpha, beta)."""
    from testkit.scripted_runs import build_workspace

    assert BIN.exists(), f"{BIN} is not installed (run `make setup`)"
    name = f"mirage-walk-{uuid.uuid4().hex[:8]}"
    db = tmp_path / "walk.db"
    build_workspace(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    cmd = f"{BIN} --db {db}; echo EXITED-$?; sleep 30"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", cmd],
                   check=True, env=env)
    try:
        yield name
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def _keys(session: str, *keys: str) -> None:
    for key in keys:
        _tmux("send-keys", "-t", session, key)
        time.sleep(0.3)


@pytest.mark.two_runs
def test_walkthrough_at_80x24(small_session):
    s = small_session
    _wait_for(s, "demo@1")
    # a run: New run (n, its first field, the dataset, focused), the queries field (a Tab),
    # one query, the packaged SmolLM2 on base/oracle/mixed, ctrl+s starts it, Live follows it
    _keys(s, "n")
    _wait_for(s, "generators")
    _wait_for(s, "Plan:", timeout=60)
    _keys(s, "Tab", "1")
    _wait_for(s, "Plan: 3 items", timeout=60)
    _keys(s, "C-s")
    screen = _wait_for(s, "done · Enter on a bar inspects its items", timeout=900)
    assert "3/3 items" in screen                               # the ETA line, not cut
    # drill down: Enter on the adaptability panel's first line → the Inspector; l → Live
    _keys(s, "Down", "Enter")
    _wait_for(s, "match", timeout=60)                          # "N items match"
    # issue 27: from the Inspector's item, n → New run (its first field focused) → ctrl+s:
    # the new run shows on Live, not the Inspector's item it was started from
    _keys(s, "x")                                              # the bar's items may be none
    _wait_for(s, "3 items match", timeout=60)
    _keys(s, "Enter")
    _wait_for(s, "Gold answers", timeout=60)
    _keys(s, "n")
    _wait_for(s, "Plan: 3 items", timeout=60)
    _keys(s, "Tab", "2")                                       # 2 queries: a new run
    _wait_for(s, "Plan: 6 items", timeout=60)
    _keys(s, "C-s")
    screen = _wait_for(s, "done · Enter on a bar inspects its items", timeout=900)
    assert "6/6 items" in screen and "Gold answers" not in screen
    # Runs lists the new run without r, beside alpha and beta
    _keys(s, "3")
    # (the run's name is in Live's header too: wait for a row only Runs shows)
    screen = _wait_for(s, "beta", timeout=30)
    assert "demo-smollm2-135m-instruct" in screen and "alpha" in screen and "beta" in screen and "3/3" in screen
    # compare: space marks alpha (the first row), Down, c on beta
    _keys(s, "Home", "space", "Down", "c")
    screen = _wait_for(s, "shared items (", timeout=60)
    assert "Δ [95% CI]" in screen                               # on screen at 80 columns
    _keys(s, "Escape")
    time.sleep(1.0)           # a terminal reads ESC followed at once by q as Alt+q
    deadline = time.monotonic() + 30
    while "B − A on shared items" in _tmux("capture-pane", "-p", "-t", s):
        assert time.monotonic() < deadline, "Escape did not leave the Compare screen"
        time.sleep(0.3)
    _keys(s, "q")
    _wait_for(s, "EXITED-0", timeout=30)
