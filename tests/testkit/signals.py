"""A long CLI command stopped by a signal as a user (or a job scheduler) stops it: the command
runs in a real process whose judge stalls inside a call after saying ``stalled`` on stdout; the
signal is sent then (the test waits on that line, not on a clock), and, ``twice``, once more
after the process said ``marker`` on stderr."""

from __future__ import annotations

import subprocess
import sys

from testkit.paths import ROOT


def stopped_by(script: str, command: list[str], signum: int, *, twice: bool = False,
               marker: str = "") -> tuple[int, str]:
    """Run ``python -c script *command``; once it says ``stalled``, send ``signum`` (again
    after ``marker`` when ``twice``); its exit status and all it wrote on stderr."""
    proc = subprocess.Popen([sys.executable, "-c", script, *command], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "stalled"
        proc.send_signal(signum)
        said = []
        while twice and (not said or marker not in said[-1]):
            said.append(proc.stderr.readline())
            assert said[-1], "".join(said)
        if twice:
            proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)    # a guard against a hang, not a measure
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, "".join(said) + err
