"""The CLI at its edges: hostile dataset text is shown, not obeyed; storage faults are one
line and exit 1; a closed pipe ends quietly; Ctrl-C stops a run waiting on a slow endpoint at
once (the requests in flight cut, the stored items whole); an endpoint's check prints what it
measured; a key written into a generator's URL is used but never stored or shown."""

import base64
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from testkit.openai_server import fake_openai_server
from testkit.paths import ROOT
from testkit.runs import mirage_cli

from engine.runs.lookup import load_run
from engine.store import Store

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


def slow_run(db, url: str) -> list[str]:
    return [*mirage_cli(), "run", "--db", str(db), "--dataset", "demo", "--generator",
            f"{url}#slow", "--settings", "base", "--sample", "6", "--concurrency", "2",
            "--name", "slow"]


def wait_for_requests(proc, server, count: int) -> None:
    deadline = time.monotonic() + 180
    while server.chats < count:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never sent its requests"
        time.sleep(0.05)


def wait_for_stored(proc, db, name: str, count: int) -> None:
    """Until ``count`` of the run's items are stored (the first one's scoring loads the
    language detectors: seconds on a loaded machine, so no fixed pause)."""
    deadline = time.monotonic() + 180
    while True:
        reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        try:
            (stored,) = reader.execute("SELECT COUNT(*) FROM run_items ri JOIN runs r "
                                       "ON r.id = ri.run_id WHERE r.name = ?", (name,)).fetchone()
        finally:
            reader.close()
        if stored >= count:
            return
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"the run never stored {count} items"
        time.sleep(0.05)


def whole_items(db, name: str) -> list[tuple]:
    """The run's items; each stored one with its generation and scores (else it fails)."""
    store = Store(db)
    try:
        run = load_run(store, name)
        items = [tuple(r) for r in store.query(
            "SELECT ri.generation_key, ri.error, g.key, (SELECT COUNT(*) FROM scores s "
            "WHERE s.generation_key = ri.generation_key AND s.query_rowid = ri.query_rowid) "
            "FROM run_items ri JOIN runs r ON r.id = ri.run_id LEFT JOIN generations g "
            "ON g.key = ri.generation_key WHERE r.name = ?", (name,))]
        assert all(key and error is None and found == key and scores > 0
                   for key, error, found, scores in items), items
        return [run.status, len(items)]
    finally:
        store.close()


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_stops_a_run_waiting_on_a_slow_endpoint_at_once(demo, presses):
    db = demo.path
    demo.close()
    with fake_openai_server(models=("slow",)) as server:
        server.quick, server.hold = 2, threading.Event()      # two answers, then none
        proc = subprocess.Popen(slow_run(db, server.url), cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        wait_for_requests(proc, server, 4)        # 2 answered, 2 waiting on the server
        wait_for_stored(proc, db, "slow", 2)
        for _ in range(presses):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.02)
        # it ends while the server still holds the two answers (never sent: no wait for them)
        out, err = proc.communicate(timeout=120)
        # a second press that lands while Python is already exiting (its handlers reset) ends
        # it by the signal itself: a shell reads that as 130 too
        assert proc.returncode == 130 or (presses == 2 and proc.returncode == -signal.SIGINT), \
            (proc.returncode, err)
        assert "Traceback" not in err
        assert whole_items(db, "slow") == ["cancelled", 2]
        # it resumes: only the four items left are asked for
        asked = server.chats
        server.hold.set()
        again = subprocess.run(slow_run(db, server.url), cwd=ROOT,
                               capture_output=True, text=True, timeout=300,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert again.returncode == 0, again.stderr
        assert server.chats - asked == 4 and whole_items(db, "slow") == ["done", 6]


def test_models_check_of_an_endpoint_prints_what_it_measured(tmp_path):
    with fake_openai_server(models=("m",)) as server:
        out = cli("models", "check", f"{server.url}#m", "--db", tmp_path / "w.db")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "m: ok (generator, http" in out.stdout
    assert "prompt: " in out.stdout and "speed not reported" in out.stdout


def test_a_key_in_a_generator_url_is_used_never_stored_or_shown(demo):
    db = demo.path
    demo.close()
    with fake_openai_server(models=("m",)) as server:
        spec = server.url.replace("http://", "http://u:sk-secret@") + "#m"
        out = cli("run", "--db", db, "--dataset", "demo", "--generator", spec, "--settings",
                  "base", "--sample", "2")
        listed = cli("runs", "list", "--db", db)
        checked = cli("models", "check", spec, "--db", db)          # recorded in the workspace
        sent = {auth for path, auth in server.seen if path == "/v1/chat/completions"}
    assert out.returncode == 0, out.stderr
    assert checked.returncode == 0 and "sk-secret" not in checked.stdout + checked.stderr
    assert checked.stderr.count("credentials written into the URL") == 1
    assert sent == {"Basic " + base64.b64encode(b"u:sk-secret").decode()}
    assert "sk-secret" not in out.stdout + out.stderr + listed.stdout
    assert out.stderr.count("credentials written into the URL") == 1
    # the summary names the system by its URL (it was "http::")
    assert f"EM_loose: {server.url}#m: base " in out.stdout
    for path in db.parent.glob(db.name + "*"):
        assert b"sk-secret" not in path.read_bytes(), path
def test_line_breaks_in_names_and_questions_cannot_forge_a_list_row(toy, monkeypatch):
    """A run name, a dataset name or a question holding a line break is shown escaped, on its
    own row; ``--json`` still says exactly what is stored."""
    # wide enough for the row whatever $COLUMNS the suite runs with (narrower, the widest
    # cell wraps at its spaces: a deliberate layout, tests/cli/test_tables_fit_columns_cli.py)
    monkeypatch.setenv("COLUMNS", "200")
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
