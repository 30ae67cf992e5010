"""``mirage-tui run`` as a user types it: the dry run, the errors it names, the progress lines."""

from __future__ import annotations

import json

from testkit.runs import SMOL
from testkit.runs import cli_run as _cli

from engine.datasets.demo_pool import ensure_demo
from engine.store import Store


def test_cli_dry_run_and_errors(tmp_path):
    db = tmp_path / "w.db"
    ensure_demo(Store(db))
    done = _cli("--dataset", "demo", "--generator", SMOL, "--sample", "4", "--dry-run",
                "--name", "dry", db=db)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "run dry (new)" in out and "4 of 60 queries" in out
    assert "settings: base, mixed, oracle" in out and "items: 12" in out
    assert "assumed 600/70 tok/s" in out and "0 items of this run" in out
    assert Store(db).query("SELECT COUNT(*) FROM runs")[0][0] == 0   # a dry run writes nothing
    bad = _cli("--dataset", "demo", "--generator", "nope", db=db)
    assert bad.returncode == 1 and "generator 'nope'" in bad.stderr
    assert "available generators" in bad.stderr
    missing = _cli("--generator", SMOL, db=db)
    assert missing.returncode == 1 and "--dataset" in missing.stderr
    as_json = _cli("--dataset", "demo", "--generator", SMOL, "--sample", "2", "--dry-run",
                   "--json", db=db)
    data = json.loads(as_json.stdout)
    assert data["count"] == 6 and data["systems"] == [f"{SMOL}/mirage@1"]


def test_progress_printer_lines():
    import io
    from dataclasses import replace

    from engine.runs.events import run_event
    from mirage_tui.cli.progress import ProgressPrinter

    stream = io.StringIO()
    printer = ProgressPrinter(stream, interval=3600)
    event = run_event("r", "running", 3, 12, 1, 2, 0, 0, 40.0, 300.0, 95.0, "s/m@1",
                          "retrieved@3:minilm-l6-v2#abc", 3, {"s/m@1": {"base": (1, 3)}})
    printer(event)
    printer(event)                                   # throttled: not a tty
    printer(replace(event, status="done", done=12))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert "3/12 items, 1 cached, 40 tok/s, ETA 1m35s" in lines[0]
    assert "retrieved@3:minilm-l6-v2" in lines[0] and "#abc" not in lines[0]
