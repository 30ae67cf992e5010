"""``mirage-tui compare``: the paired comparison as text, JSON and CSV, the CI gate and the
refusals, on the scripted-run workspace (tests/testkit/scripted_runs.py) through the real
command line (the refusals through its ``main`` in process)."""

from __future__ import annotations

import csv
import json
import sys

import pytest
from testkit.runs import cli_main, run_together


def compare_command(db, *args) -> list[str]:
    return [sys.executable, "-m", "mirage_tui.cli", "compare", "--db", str(db), *args]


def clis(db, *calls):
    """``mirage-tui compare --db DB ARGS`` for each ``args`` of ``calls``, each a process,
    started together (independent)."""
    return run_together(*[compare_command(db, *args) for args in calls])


def test_text_json_csv(db, tmp_path):
    out, js_out = clis(db, ("alpha:fake-a/mirage@1", "alpha:fake-b/mirage@1", "--n-boot", "500",
                            "--csv", str(tmp_path / "items.csv")),
                       ("alpha:fake-b/mirage@1", "beta", "--n-boot", "200", "--json"))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "18 shared items (6 queries)" in text
    row = next(line for line in text.splitlines()
               if line.startswith("em_loose") and " mixed " in line)
    assert "33.3" in row and "66.7" in row and "+33.3 pp [" in row and "0.500" in row
    assert "No clear difference on em_loose (mixed): +33.3 pp" in text
    assert "Item diff on em_loose: 4 wrong → right, 2 right → wrong" in text
    assert "010 → 111 ×1" in text and text.count("power: ") == 1
    with open(tmp_path / "items.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 18 and {"a_em_loose", "b_em_loose"} <= set(rows[0])
    js = json.loads(js_out.stdout)
    assert js["b"]["system"] == "fake-a/mirage@1" and js["shared_items"] == 18
    assert js["verdict"].endswith("18 shared items")


def test_fail_if_worse_gate(db):
    # B = fake-a is worse than fake-b on em_loose (mixed) by 33 points, but with 6 queries the
    # difference is not significant: the gate does not fire
    out, bad = clis(db, ("alpha:fake-b/mirage@1", "alpha:fake-a/mirage@1", "--n-boot", "200",
                         "--fail-if-worse", "em_loose:2"),
                    ("alpha", "alpha", "--fail-if-worse", "em_loose"))
    assert out.returncode == 0 and "FAIL" not in out.stdout
    assert bad.returncode == 1 and "METRIC:DELTA" in bad.stderr


def test_refusals(db, capsys):
    """In process (the command's ``main``): refused before anything is compared."""
    code, _, err = cli_main(capsys, "compare", "--db", db, "alpha", "beta:nobody")
    assert code == 1 and "2 systems; say which" in err
    code, _, err = cli_main(capsys, "compare", "--db", db, "alpha", "nope")
    assert code == 1 and "no run named 'nope'" in err


@pytest.mark.parametrize("delta", ["nan", "inf", "-inf", "NaN"])
def test_a_gate_that_could_never_fire_is_refused(db, delta, capsys):
    code, _, err = cli_main(capsys, "compare", "--db", db, "alpha", "alpha", "--fail-if-worse",
                            f"em_loose:{delta}")
    assert code == 1 and err.count("\n") == 1, err
    assert f"DELTA must be a finite number of points, got '{delta}'" in err
