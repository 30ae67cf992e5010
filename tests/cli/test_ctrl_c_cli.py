"""Issue 35, item 7: Ctrl-C twice ends a long command at once, with exit 130 and one line,
even while a judge call hangs (the interpreter would otherwise wait for it at exit).

The command runs in a real process whose judge stalls inside a call after saying so on stdout;
the test presses Ctrl-C, waits for the "cancelling" line, presses it again and reads how the
process ended."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from engine.store import Store
from testkit.arena import run_workspace
from testkit.labels import write_labels
from testkit.paths import ROOT

STALLING_CLI = textwrap.dedent("""
    import sys
    sys.path.insert(0, "tests")
    import models.catalog
    from mirage_tui import cli
    from testkit.arena import StallingJudge

    models.catalog.load_generator = lambda name, **opts: StallingJudge()
    sys.exit(cli.main(sys.argv[1:]))
""")

INTERRUPTED = "mirage-tui: interrupted; run the same command again to resume"


@pytest.fixture
def db(tmp_path):
    path = run_workspace(tmp_path)
    store = Store(path)
    write_labels(store, tmp_path, "people", n=8)
    store.close()
    return path


@pytest.mark.parametrize("command", [
    ["arena", "judge", "r", "--judge", "fake"],
    ["judge", "calibrate", "--judge", "fake", "--labels", "people", "--boot", "20"],
], ids=["arena judge", "judge calibrate"])
def test_a_second_ctrl_c_ends_a_hung_judging_at_once_with_130(db, command):
    proc = subprocess.Popen([sys.executable, "-c", STALLING_CLI, *command, "--db", str(db)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "stalled"
        proc.send_signal(signal.SIGINT)
        said = []
        while not said or "mirage-tui: cancelling" not in said[-1]:
            said.append(proc.stderr.readline())
            assert said[-1], "".join(said)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)    # a guard against a hang, not a measure
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1] == INTERRUPTED and err.count("interrupted") == 1, err
    assert "Traceback" not in err
