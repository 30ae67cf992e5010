"""``mirage-tui run --concurrency N --max-errors …`` as a user types it: the setting reaches
the run header, a second session with another concurrency resumes the same run, a bad budget
is named, and ``report`` shows the requests in flight."""

from __future__ import annotations

import json
import subprocess

from testkit.paths import ROOT
from testkit.runs import SMOL, cli_run, mirage_cli

from engine.datasets.demo_pool import ensure_demo
from engine.store import Store


def test_cli_concurrency_is_a_run_setting_recorded_in_the_header(tmp_path):
    db = tmp_path / "w.db"
    ensure_demo(Store(db))
    args = ("--dataset", "demo", "--generator", SMOL, "--settings", "base", "--sample", "2",
            "--max-tokens", "4", "--threads", "1", "--name", "c")
    bad = cli_run(*args, "--max-errors", "lots", db=db)
    assert bad.returncode == 1 and "max_errors: expected a count" in bad.stderr
    first = cli_run(*args, "--concurrency", "2", "--json", db=db)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["generated"] == 2
    # another concurrency is the same run: it resumes (nothing left to do), it is not refused
    second = cli_run(*args, "--concurrency", "3", "--max-errors", "5%", "--json", db=db)
    assert second.returncode == 0, second.stderr
    summary = json.loads(second.stdout)
    assert summary["cached"] == 2 and summary["generated"] == 0 and summary["errors"] == 0
    header = json.loads(Store(db).query("SELECT header FROM runs")[0][0])
    assert header["concurrency"] == {SMOL: 2} == header["sessions"][0]["concurrency"]
    assert len(header["sessions"]) == 2
    report = subprocess.run([*mirage_cli(), "report", "c", "--db", str(db)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    assert f"Requests in flight: {SMOL} 2" in report.stdout
