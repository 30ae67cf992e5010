"""Issue 18's closing check: the whole day's loop at 80×24, as a person runs it in a real
terminal (tmux): launch → a run from the New-run form → drill down from Live into the
Inspector, open an item, n → New run → ctrl+s: Live shows the new run (issue 27) → Runs lists
it without a refresh → compare two runs → quit."""

import shutil
import time

import pytest

from testkit.tmux import app_session, tmux, wait_for

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def small_session(tmp_path):
    """The app at 80×24 on a workspace holding two finished scripted runs (alpha, beta)."""
    from testkit.scripted_runs import build_workspace

    db = tmp_path / "walk.db"
    build_workspace(db)
    with app_session(db, (80, 24), "mirage-walk") as name:
        yield name


def _keys(session: str, *keys: str) -> None:
    for key in keys:
        tmux("send-keys", "-t", session, key)
        time.sleep(0.3)


@pytest.mark.two_runs
def test_walkthrough_at_80x24(small_session):
    s = small_session
    wait_for(s, "demo@1")
    # a run: New run (n, its first field, the dataset, focused), the queries field (a Tab),
    # one query, the packaged SmolLM2 on base/oracle/mixed, ctrl+s starts it, Live follows it
    _keys(s, "n")
    wait_for(s, "generators")
    wait_for(s, "Plan:", timeout=60)
    _keys(s, "Tab", "1")
    wait_for(s, "Plan: 3 items", timeout=60)
    # (max tokens is left at 64: four Tabs and "16" typed at once after the plan showed once
    # did not reach that field on CI's loaded machine; the walk is about the screens, not it)
    _keys(s, "C-s")
    screen = wait_for(s, "done · Enter on a bar inspects its items", timeout=900)
    assert "3/3 items" in screen                               # the ETA line, not cut
    # drill down: Enter on the adaptability panel's first line → the Inspector; l → Live.
    # The finished run's report may land after "done": its bars first (keys sent before them
    # once moved nothing: the panel's Enter now inspects the first bar then)
    wait_for(s, "CA ↑", timeout=60)
    _keys(s, "Down", "Enter")
    wait_for(s, ("items match", "item matches"), timeout=60)  # the Inspector's status line
    # issue 27: from the Inspector's item, n → New run (its first field focused) → ctrl+s:
    # the new run shows on Live, not the Inspector's item it was started from
    _keys(s, "x")                                              # the bar's items may be none
    wait_for(s, "3 items match", timeout=60)
    _keys(s, "Enter")
    wait_for(s, "Gold answers", timeout=60)
    _keys(s, "n")
    wait_for(s, "Plan: 3 items", timeout=60)
    _keys(s, "Tab", "2")                                       # 2 queries: a new run
    wait_for(s, "Plan: 6 items", timeout=60)
    _keys(s, "C-s")
    screen = wait_for(s, "done · Enter on a bar inspects its items", timeout=900)
    assert "6/6 items" in screen and "Gold answers" not in screen
    # Runs lists the new run without r, beside alpha and beta
    _keys(s, "3")
    # (the run's name is in Live's header too: wait for a row only Runs shows)
    screen = wait_for(s, "beta", timeout=30)
    assert "demo-smollm2-135m-instruct" in screen and "alpha" in screen and "beta" in screen and "3/3" in screen
    # compare: space marks alpha (the first row), Down, c on beta
    _keys(s, "Home", "space", "Down", "c")
    screen = wait_for(s, "shared items (", timeout=60)
    assert "Δ [95% CI]" in screen                               # on screen at 80 columns
    _keys(s, "Escape")
    time.sleep(1.0)           # a terminal reads ESC followed at once by q as Alt+q
    deadline = time.monotonic() + 30
    while "B − A on shared items" in tmux("capture-pane", "-p", "-t", s):
        assert time.monotonic() < deadline, "Escape did not leave the Compare screen"
        time.sleep(0.3)
    _keys(s, "q")
    wait_for(s, "EXITED-0", timeout=30)
