"""``mirage-tui report`` and ``compare`` wrap their text to the terminal (``COLUMNS``, else
100): no line wider, every interval whole; ``--json`` unchanged (issue 27: ``report`` printed
174-column lines with COLUMNS=80). On the scripted-run workspace, through the real command
line."""

from __future__ import annotations

import json
import os
import sys

import pytest

from engine.text_fit import cell_len
from testkit.runs import run_together
from testkit.scripted_runs import A, B


def clis(db, *calls) -> list[str]:
    """The standard output of each ``(columns, args)`` call of ``mirage-tui ARGS --db DB``
    (``COLUMNS`` set to ``columns``, or unset for None), started together."""
    commands, envs = [], []
    for columns, args in calls:
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        if columns is not None:
            env["COLUMNS"] = str(columns)
        commands.append([sys.executable, "-m", "mirage_tui.cli", *args, "--db", str(db)])
        envs.append(env)
    done = run_together(*commands, envs=envs)
    for proc in done:
        assert proc.returncode == 0, proc.stderr
    return [proc.stdout for proc in done]


COMMANDS = {"report": ("report", "alpha", "--n-boot", "50"),
            "compare": ("compare", f"alpha:{A}", f"alpha:{B}", "--n-boot", "200")}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_text_within_the_width(db, command):
    fits = ((80, 80), (100, 100), (None, 100))                       # piped: 100
    wide, *texts = clis(db, *[(columns, COMMANDS[command]) for columns in (400, 80, 100, None)])
    assert max(cell_len(line) for line in wide.splitlines()) > 80   # there is something to fit
    for (columns, width), text in zip(fits, texts):
        too_wide = [line for line in text.splitlines() if cell_len(line) > width]
        assert not too_wide, (columns, too_wide)
        # nothing lost: every interval of the wide text is still there, whole
        for interval in {w for w in wide.replace("]", "]\n").split("\n") if "[" in w}:
            assert interval[interval.index("["):] in text, (columns, interval)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_json_unchanged_by_the_width(db, command):
    args = (*COMMANDS[command], "--json")
    narrow, wide = map(json.loads, clis(db, (80, args), (400, args)))
    assert narrow == wide
