"""``mirage-tui report`` and ``compare`` wrap their text to the terminal (``COLUMNS``, else
100): no line wider, every interval whole; ``--json`` unchanged (issue 27: ``report`` printed
174-column lines with COLUMNS=80). On the scripted-run workspace, through the real command
line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from engine.text_fit import cell_len
from testkit.scripted_runs import A, B


def cli(db, columns, *args):
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    out = subprocess.run([sys.executable, "-m", "mirage_tui.cli", *args, "--db", str(db)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


COMMANDS = {"report": ("report", "alpha", "--n-boot", "50"),
            "compare": ("compare", f"alpha:{A}", f"alpha:{B}", "--n-boot", "200")}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_text_within_the_width(db, command):
    wide = cli(db, 400, *COMMANDS[command])
    assert max(cell_len(line) for line in wide.splitlines()) > 80   # there is something to fit
    for columns, width in ((80, 80), (100, 100), (None, 100)):     # piped: 100
        text = cli(db, columns, *COMMANDS[command])
        too_wide = [line for line in text.splitlines() if cell_len(line) > width]
        assert not too_wide, (columns, too_wide)
        # nothing lost: every interval of the wide text is still there, whole
        for interval in {w for w in wide.replace("]", "]\n").split("\n") if "[" in w}:
            assert interval[interval.index("["):] in text, (columns, interval)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_json_unchanged_by_the_width(db, command):
    narrow = json.loads(cli(db, 80, *COMMANDS[command], "--json"))
    wide = json.loads(cli(db, 400, *COMMANDS[command], "--json"))
    assert narrow == wide
