"""The CLI at its edges: hostile dataset text is shown, not obeyed; storage faults are one
line and exit 1; a closed pipe ends quietly."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.paths import ROOT

HOSTILE_Q = "What \x1b[2J\x1b]0;pwned\x07 is [bold]this[/bold] \u202eevil?"


def cli(*args, preexec=None):
    return subprocess.run([sys.executable, "-m", "mirage_tui.cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, preexec_fn=preexec,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def hostile_dataset(folder: Path) -> Path:
    path = folder / "hostile.json"
    path.write_text(json.dumps({"data": [{"title": "T\x1b[31m", "paragraphs": [{
        "context": "Context \x1b]0;x\x07 with the answer.", "qas": [{
            "id": "q1", "question": HOSTILE_Q,
            "answers": [{"text": "answer", "answer_start": 20}]}]}]}]}))
    return path


def test_data_show_makes_escapes_visible(tmp_path):
    db = tmp_path / "w.db"
    assert cli("data", "import", hostile_dataset(tmp_path), "--db", db).returncode == 0
    out = cli("data", "show", "hostile", "--db", db)
    assert out.returncode == 0
    assert "\x1b" not in out.stdout and "\u202e" not in out.stdout and "\x07" not in out.stdout
    assert "\\x1b[2J" in out.stdout and "[bold]this[/bold]" in out.stdout
    detail = cli("data", "show", "hostile", "hostile/q1", "--db", db)
    assert "\x1b" not in detail.stdout and "\\x1b]0;x\\x07" in detail.stdout
    as_json = json.loads(cli("data", "show", "hostile", "hostile/q1", "--json", "--db",
                             db).stdout)
    assert as_json["text"] == HOSTILE_Q                  # JSON still says exactly what is stored


def test_storage_faults_are_one_line_and_exit_1(tmp_path):
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"not sqlite " * 400)
    for db, words in ((tmp_path / "typo" / "w.db", "does not exist (a typo?)"),
                      ("/dev/full/x.db", "/dev/full is not a folder"),
                      (notes, "file is not a database")):
        out = cli("data", "list", "--db", db)
        assert out.returncode == 1, out.stderr
        assert out.stderr.count("\n") == 1 and words in out.stderr
        assert out.stderr.startswith(f"mirage-tui: error: {db}: ")
    assert not (tmp_path / "typo").exists()


def _read_only(paths, on: bool) -> None:
    """Make ``paths`` read-only (and back): chmod, or for root, who writes anything anyway,
    the immutable attribute (``chattr``)."""
    for p in paths:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "+i" if on else "-i", str(p)], check=True)
        else:
            os.chmod(p, (0o555 if p.is_dir() else 0o444) if on else 0o755)


@pytest.mark.skipif(os.geteuid() == 0 and not shutil.which("chattr"), reason="needs chattr")
def test_a_read_only_workspace_is_one_line(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "w.db"
    assert cli("data", "list", "--db", db).returncode == 0
    paths = [*folder.iterdir(), folder]
    try:
        _read_only(paths, True)
    except subprocess.CalledProcessError:
        pytest.skip("this file system has no immutable attribute")
    try:
        out = cli("data", "demo", "--db", db)
    finally:
        _read_only(paths, False)
    assert out.returncode == 1, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"mirage-tui: error: {db}: ")
    assert "read-only" in out.stderr or "cannot open" in out.stderr


def test_a_closed_pipe_ends_quietly(tmp_path):
    db = tmp_path / "w.db"
    cli("data", "demo", "--db", db)
    shell = (f"{sys.executable} -m mirage_tui.cli data show demo --limit 60 --db {db} "
             "| head -1")
    out = subprocess.run(["bash", "-o", "pipefail", "-c", shell], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.startswith("demo@1")
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr, out.stderr
    assert out.returncode in (0, 141)


def test_line_breaks_in_names_and_questions_cannot_forge_a_list_row(toy):
    """A run name, a dataset name or a question holding a line break is shown escaped, on its
    own row; ``--json`` still says exactly what is stored."""
    forged = "evil\nfake-run  toy@1  done  61/61"
    with toy.write() as w:
        w.conn.execute("UPDATE runs SET name = ? WHERE name = 'toy-run'", (forged,))
        w.conn.execute("UPDATE datasets SET name = ? WHERE name = 'toy'", ("toy\u2028x",))
        w.conn.execute("UPDATE queries SET text = ? WHERE query_id = 'q0'",
                       ("first line\r\nforged  [en] row",))
    runs = cli("runs", "list", "--db", toy.path)
    assert runs.returncode == 0, runs.stderr
    assert len(runs.stdout.splitlines()) == 2
    assert "evil\\nfake-run  toy@1  done  61/61" in runs.stdout
    assert json.loads(cli("runs", "list", "--json", "--db", toy.path).stdout)[0]["name"] == \
        forged
    datasets = cli("data", "list", "--db", toy.path)
    assert len(datasets.stdout.splitlines()) == 2 and "toy\\u2028x@1" in datasets.stdout
    show = cli("data", "show", "toy\u2028x", "--db", toy.path)
    assert show.returncode == 0, show.stderr
    row = next(line for line in show.stdout.splitlines() if "first line" in line)
    assert row.endswith("first line\\x0d\\nforged  [en] row")
    assert not any(line.startswith("forged") for line in show.stdout.splitlines())
