"""Issue 35, item 4: a full or closed standard output ends every command in one line and a
non-zero exit, never a traceback (``judge list --json > /dev/full`` ended in ``OSError: [Errno
28] No space left on device``); a closed pipe still ends quietly
(tests/cli/test_cli_faults.py)."""

from __future__ import annotations

import os
import subprocess

import pytest

from testkit.paths import ROOT
from testkit.runs import mirage_cli

COMMANDS = [("judge", "list", "--json"), ("arena", "list", "toy-run"),
            ("runs", "list", "--json"), ("data", "list")]


def _shell(args, db, redirect: str) -> subprocess.CompletedProcess:
    line = " ".join([*mirage_cli(), *args, "--db", str(db)]) + " " + redirect
    return subprocess.run(["bash", "-c", line], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_full_stdout_is_one_line(toy, args):
    done = _shell(args, toy.path, "> /dev/full")
    assert done.returncode == 1, done.stderr
    assert done.stderr == ("mirage-tui: error: cannot write to standard output: No space "
                           "left on device\n"), done.stderr


def test_a_closed_stdout_is_one_line(toy):
    done = _shell(("data", "list"), toy.path, ">&-")
    assert done.returncode == 1, done.stderr
    assert done.stderr == "mirage-tui: error: cannot write to standard output: it is closed\n"
