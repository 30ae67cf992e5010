"""Issue 35, items 3 and 7: an arena is claimed by the process judging it, as a run is.

A real second process judges an arena and stalls inside a judge call (its judge blocks; it
says so on stdout first, so the test waits on that line, not on a clock). While it lives, a
second judging of that arena and ``runs delete`` of its run are refused in one line naming its
pid; killed with SIGKILL, its arena reads ``interrupted`` in ``arena list``, ``arena
ratings`` and the Leaderboard's arena line, and judging it again resumes it (no duplicate
battle)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

import pytest

from engine.arena.ratings.battles import list_arenas
from engine.arena.judging.job import judge_arena
from engine.runs.lookup import load_run
from engine.runs.manage import delete_run
from engine.store import Store
from mirage_tui import cli
from mirage_tui.screens.leaderboard.board import arena_line
from testkit.arena import ScriptedJudge
from testkit.paths import ROOT

STALLING_JUDGE = textwrap.dedent("""
    import sys
    sys.path.insert(0, "tests")
    from engine.arena.judging.job import judge_arena
    from engine.runs.lookup import load_run
    from engine.store import Store
    from testkit.arena import StallingJudge

    store = Store(sys.argv[1])              # one battle judged in both orders, then stall
    judge_arena(store, load_run(store, "r"), StallingJudge(after=2), name="race",
                order="both", concurrency=1)
""")


@pytest.fixture
def db(answered_path):
    return answered_path


@pytest.fixture
def stalled_judging(db):
    """A process judging arena ``race`` of run ``r``, stalled inside its third judge call."""
    child = subprocess.Popen([sys.executable, "-c", STALLING_JUDGE, str(db)], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "stalled"
        yield child
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def main(capsys, *args) -> tuple[int, str, str]:
    code = cli.main([*args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_judged_arena_is_claimed_and_a_dead_judges_arena_is_interrupted(
        db, stalled_judging, capsys, monkeypatch):
    import models.catalog

    monkeypatch.setattr(models.catalog, "load_generator", lambda name, **opts: ScriptedJudge())
    pid = stalled_judging.pid
    code, _, err = main(capsys, "arena", "judge", "r", "--db", str(db), "--judge", "fake",
                        "--name", "race", "--order", "both")
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert f"arena race of run r is being judged (pid {pid})" in err
    code, _, err = main(capsys, "runs", "delete", "r", "--db", str(db))
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert f"run r is being judged (arena race, pid {pid})" in err
    code, out, _ = main(capsys, "arena", "list", "r", "--db", str(db), "--json")
    assert [a["status"] for a in json.loads(out)] == ["running"]

    stalled_judging.send_signal(signal.SIGKILL)
    stalled_judging.wait()
    code, out, _ = main(capsys, "arena", "list", "r", "--db", str(db), "--json")
    assert [a["status"] for a in json.loads(out)] == ["interrupted"]
    code, out, _ = main(capsys, "arena", "ratings", "r", "--db", str(db), "--arena", "race")
    assert code == 0 and "(pairwise, interrupted) of run r" in out.splitlines()[0]

    store = Store(db)
    try:
        [info] = list_arenas(store, load_run(store, "r"))      # the Leaderboard's arena line
        assert " · interrupted · " in arena_line(info)
        summary = judge_arena(store, load_run(store, "r"), ScriptedJudge(), name="race",
                              order="both", concurrency=1)
        assert summary.status == "done" and summary.done == summary.total
        [info] = list_arenas(store, load_run(store, "r"))
        assert info.status == "done" and info.battles == summary.total
    finally:
        store.close()
    code, _, err = main(capsys, "runs", "delete", "r", "--db", str(db))
    assert code == 0, err


def test_a_run_deleted_while_its_judge_loads_is_one_line_not_a_foreign_key_error(
        db, capsys, monkeypatch):
    import models.catalog

    def load_while_deleted(name, **opts):
        other = Store(db)                  # `runs delete r` in another process, meanwhile
        try:
            delete_run(other, "r")
        finally:
            other.close()
        return ScriptedJudge()

    monkeypatch.setattr(models.catalog, "load_generator", load_while_deleted)
    code, _, err = main(capsys, "arena", "judge", "r", "--db", str(db), "--judge", "fake")
    assert code == 1 and err.strip() == "mirage-tui: error: run r was deleted; there is "\
                                         "nothing to judge", err
