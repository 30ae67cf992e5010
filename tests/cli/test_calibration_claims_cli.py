"""Issue 35, items 1, 3 and 7: a calibration is claimed by the process running it, a dead one
reads ``interrupted`` in ``judge list``, and Ctrl-C ends ``judge calibrate`` with exit 130 and
one line.

A real second process calibrates a scripted judge and stalls inside a judge call (it says so
on stdout first: the test waits on that line, not on a clock)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from engine.arena.trust.calibrate import calibrate_judge, unfinished_calibrations
from engine.store import Store
from mirage_tui import cli
from testkit.arena import ScriptedJudge
from testkit.labels import write_labels
from testkit.paths import ROOT

STALLING_CALIBRATION = textwrap.dedent("""
    import sys
    sys.path.insert(0, "tests")
    from engine.arena.trust.calibrate import calibrate_judge
    from engine.store import Store
    from testkit.arena import StallingJudge

    calibrate_judge(Store(sys.argv[1]), "people", StallingJudge(), concurrency=1, n_boot=20)
""")


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "w.db"
    store = Store(path)
    write_labels(store, tmp_path, "people", n=8)
    store.close()
    return path


@pytest.fixture
def scripted_judge(monkeypatch):
    """``--judge fake-judge`` loads a ScriptedJudge (the one the stalled process uses)."""
    import models.catalog

    monkeypatch.setattr(models.catalog, "load_generator", lambda name, **opts: ScriptedJudge())


def main(capsys, *args) -> tuple[int, str, str]:
    code = cli.main([*args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_running_calibration_is_claimed_and_a_dead_one_reads_interrupted(
        db, scripted_judge, capsys, monkeypatch):
    child = subprocess.Popen([sys.executable, "-c", STALLING_CALIBRATION, str(db)], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "stalled"
        code, _, err = main(capsys, "judge", "calibrate", "--db", str(db), "--judge",
                            "fake-judge", "--labels", "people", "--boot", "20")
        assert code == 1 and len(err.strip().splitlines()) == 1, err
        assert "calibration of fake-judge on people" in err
        assert f"is running (pid {child.pid})" in err
        code, out, _ = main(capsys, "judge", "list", "--db", str(db), "--json")
        [u] = json.loads(out)["unfinished_calibrations"]
        assert (u["status"], u["pid"]) == ("running", child.pid)
    finally:
        child.kill()
        child.wait()
    monkeypatch.setenv("COLUMNS", "250")    # a line each (narrower, they wrap)
    code, out, _ = main(capsys, "judge", "list", "--db", str(db))
    assert code == 0
    assert any(line.strip().startswith("fake-judge on people") and
               f": interrupted (pid {child.pid}); run it again to resume" in line
               for line in out.splitlines()), out
    store = Store(db)
    try:
        assert calibrate_judge(store, "people", ScriptedJudge(), n_boot=20).status == "done"
        assert unfinished_calibrations(store) == []          # stored: no longer unfinished
    finally:
        store.close()


class CtrlCOnItsThirdCall(ScriptedJudge):
    """The user presses Ctrl-C while the judge answers its third call."""

    def generate(self, prompt, params=None):
        if len(self.calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)
        return super().generate(prompt, params)


def test_ctrl_c_ends_judge_calibrate_with_130_and_one_line(db, capsys, monkeypatch):
    import models.catalog

    monkeypatch.setattr(models.catalog, "load_generator",
                        lambda name, **opts: CtrlCOnItsThirdCall())
    code, out, err = main(capsys, "judge", "calibrate", "--db", str(db), "--judge",
                          "fake-judge", "--labels", "people", "--boot", "20")
    assert code == 130, err
    said = [line for line in err.splitlines() if line.strip()]
    assert said[-1] == ("mirage-tui: calibration cancelled; run the same command again to "
                        "resume (the verdicts so far are cached)")
    assert err.count("resume") == 1 and out == ""
    store = Store(db)
    try:
        assert unfinished_calibrations(store) == []          # a cancel lets go of its claim
    finally:
        store.close()
