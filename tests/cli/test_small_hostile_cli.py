"""Small hostile inputs, each answered in one line or the behaviour a user expects, driven
through the CLI: a bad ``MIRAGE_*`` value refused before a run row exists; a line break in an
output name shown escaped; ``MIRAGE_DB=/dev/null`` and a FIFO called what they are (not a full
disk); an empty (0-byte) workspace file the user named refused; a workspace that cannot be
written opened for reading (said once) with every write refused in one line; SIGTERM said in
one line with the work left resumable; ``data show`` of a labels dataset showing its pairs,
people and labels, ``--limit`` honoured."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

from engine.store import Store
from testkit.paths import ROOT
from testkit.runs import mirage_cli
from testkit.signals import stopped_by


def cli(*args, env=None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*mirage_cli(), *args], capture_output=True, text=True, timeout=180,
                          env={**os.environ, **(env or {})}, **kw)


def one_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 1, (done.stdout, done.stderr)
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("mirage-tui: error: ") and "Traceback" not in done.stderr
    return line


# --------------------------------------------------------------------------- environment

def test_a_bad_environment_value_leaves_no_failed_run(answered_path):
    done = cli("run", "--dataset", "demo", "--generator", "smollm2", "--settings", "base",
               "--sample", "1", "--name", "envcheck", "--db", str(answered_path),
               env={"MIRAGE_HOST_GRACE": "abc"})
    line = one_error(done)
    assert "$MIRAGE_HOST_GRACE='abc': expected a number of seconds" in line, line
    runs = json.loads(cli("runs", "list", "--json", "--db", str(answered_path)).stdout)
    assert [r["name"] for r in runs] == ["r"]          # no `envcheck`, failed or otherwise


# --------------------------------------------------------------------------- output names

def test_a_line_break_in_an_output_name_is_shown_escaped(answered_path, tmp_path):
    page = tmp_path / "a\nb\x1b[2J.html"
    done = cli("report", "r", "--html", str(page), "--db", str(answered_path))
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.strip().splitlines()
    assert line.startswith("wrote the run report to ") and "a\\nb\\x1b[2J.html" in line
    assert page.exists()
    csv = tmp_path / "x\ny.csv"
    done = cli("export", "r", "--format", "csv", "-o", str(csv), "--db", str(answered_path))
    assert done.returncode == 0, done.stderr
    assert "x\\ny.csv (header: " in done.stdout and "x\ny" not in done.stdout + done.stderr


# --------------------------------------------------------------------------- workspace files

def test_dev_null_and_a_fifo_are_not_workspace_files(tmp_path):
    line = one_error(cli("data", "list", env={"MIRAGE_DB": "/dev/null"}))
    assert line == ("mirage-tui: error: /dev/null: is a character device, not a workspace "
                    "file; give the path of a workspace file (a new name makes one)")
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    line = one_error(cli("data", "list", "--db", str(fifo)))
    assert "is a FIFO (named pipe), not a workspace file" in line and "full" not in line


def test_an_empty_workspace_file_the_user_named_is_refused_and_left_alone(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    line = one_error(cli("data", "list", "--db", str(empty)))
    assert line == (f"mirage-tui: error: {empty}: is an empty file (0 bytes), not a mirage-tui "
                    "workspace; give another name for a new workspace, or delete the file to "
                    "make one there")
    assert empty.stat().st_size == 0
    fresh = tmp_path / "fresh.db"                       # a new name still makes one
    assert cli("data", "list", "--db", str(fresh)).returncode == 0 and fresh.stat().st_size


def test_commands_started_together_on_a_new_workspace_all_open_it(tmp_path):
    """SQLite makes a new file empty and writes its first page a moment later: a second
    command opening the same new workspace then saw a 0-byte file and refused it as a stray
    one (seen with four `run --config` started at once). A young empty file that gets its first
    page is another command's workspace being made; an old empty one is still refused at once,
    a young one that stays empty after the grace."""
    import time

    from testkit.runs import run_together

    import threading

    new = tmp_path / "new.db"
    done = run_together(*[[*mirage_cli(), "runs", "list", "--db", str(new)] for _ in range(4)],
                        cwd=ROOT)
    assert [d.returncode for d in done] == [0] * 4, [d.stderr for d in done]
    # the race made certain: the file is there and empty when the command looks (it starts in
    # about a second), and another process's Store writes its first page a second later
    making = tmp_path / "making.db"
    making.write_bytes(b"")
    other = threading.Timer(2.0, lambda: Store(making).close())
    other.start()
    try:
        opened = cli("data", "list", "--db", str(making))
    finally:
        other.join()
    assert opened.returncode == 0, opened.stderr
    old = tmp_path / "old.db"
    old.write_bytes(b"")
    os.utime(old, (time.time() - 60, time.time() - 60))
    assert "is an empty file (0 bytes)" in one_error(cli("data", "list", "--db", str(old)))
    young = tmp_path / "young.db"
    young.write_bytes(b"")
    assert "is an empty file (0 bytes)" in one_error(cli("data", "list", "--db", str(young)))
    assert young.stat().st_size == 0


READ_ONLY_CLI = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, "tests")
    real = os.access
    # root may write a 0444 file; a read-only mount refuses root too: stand for one here
    os.access = lambda path, mode, **kw: False if mode & os.W_OK else real(path, mode, **kw)
    from mirage_tui import cli
    sys.exit(cli.main(sys.argv[1:]))
""")


def test_a_workspace_that_cannot_be_written_opens_for_reading(answered_path):
    folder = answered_path.parent
    answered_path.chmod(0o444)
    folder.chmod(0o555)
    try:
        def ro(*args):
            return subprocess.run([sys.executable, "-c", READ_ONLY_CLI, *args, "--db",
                                   str(answered_path)], cwd=ROOT, capture_output=True,
                                  text=True, timeout=180)

        listed = ro("runs", "list")
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.startswith("r ") or "\nr " in listed.stdout or " r " in \
            listed.stdout, listed.stdout
        assert listed.stderr.count("opened for reading only") == 1, listed.stderr
        [note] = listed.stderr.strip().splitlines()
        assert note == (f"mirage-tui: note: {answered_path} cannot be written here: opened "
                        "for reading only (a command that writes is refused)")
        written = ro("runs", "rename", "r", "r2")
        assert written.returncode == 1, written.stderr
        error = written.stderr.strip().splitlines()[-1]
        assert error == (f"mirage-tui: error: {answered_path}: the workspace is read-only here "
                         "(opened for reading only); nothing was written")
    finally:
        folder.chmod(0o755)
        answered_path.chmod(0o644)
    assert Store(answered_path).query("SELECT name FROM runs")[0][0] == "r"


# --------------------------------------------------------------------------- SIGTERM

TERMINABLE_CLI = textwrap.dedent("""
    import sys, threading
    sys.path.insert(0, "tests")
    import models.catalog
    from models.base import RequestCancelled
    from mirage_tui import cli
    from testkit.arena import StallingJudge

    class AbortableJudge(StallingJudge):
        cut = threading.Event()

        def generate(self, prompt, params=None):
            if len(self.calls) >= self.after and "--stall-for-good" not in sys.argv:
                print("stalled", flush=True)
                self.cut.wait()
                raise RequestCancelled("fake: the request was cancelled")
            return super().generate(prompt, params)

        def abort(self):
            self.cut.set()

    judge = AbortableJudge()
    if "--stall-for-good" in sys.argv:
        sys.argv.remove("--stall-for-good")
        judge = StallingJudge()
    models.catalog.load_generator = lambda name, **opts: judge
    sys.exit(cli.main(sys.argv[1:]))
""")


def _terminated(db, *extra, twice=False) -> tuple[int, str]:
    return stopped_by(TERMINABLE_CLI, ["arena", "judge", "r", "--judge", "fake",
                                       "--concurrency", "1", "--db", str(db), *extra],
                      signal.SIGTERM, twice=twice, marker="terminated (SIGTERM)")


def test_sigterm_says_so_in_one_line_and_leaves_the_arena_resumable(answered_path):
    code, err = _terminated(answered_path)
    assert code == 143, err
    lines = [line for line in err.splitlines() if line.strip() and "█" not in line
             and "░" not in line]
    assert lines[-1] == ("mirage-tui: terminated (SIGTERM): stopping; run the same command "
                         "again to resume"), err
    assert err.count("SIGTERM") == 1 and "Traceback" not in err
    arenas = json.loads(cli("arena", "list", "r", "--json", "--db", str(answered_path)).stdout)
    assert [a["status"] for a in arenas] in (["cancelled"], ["interrupted"]), arenas


def test_a_second_sigterm_ends_a_hung_call_at_once_with_143(answered_path):
    code, err = _terminated(answered_path, "--stall-for-good", twice=True)
    assert code == 143, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1] == ("mirage-tui: terminated (SIGTERM); run the same command again to "
                         "resume"), err
    assert "Traceback" not in err


# --------------------------------------------------------------------------- data show

def test_data_show_of_labels_lists_pairs_people_and_labels_up_to_the_limit(tmp_path):
    db, labels = tmp_path / "w.db", tmp_path / "people.jsonl"
    rows = [{"query": f"question {i}?", "answer_a": f"answer a{i}", "answer_b": f"answer b{i}",
             "label": (i % 5) - 2, "annotator": who} for i in range(12) for who in ("ann", "bob")]
    labels.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert cli("data", "import", str(labels), "--db", str(db)).returncode == 0
    done = cli("data", "show", "people", "--limit", "3", "--db", str(db))
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[1].startswith("  12 answer pairs, 24 labels, 2 annotator(s); aspects: overall")
    assert out[2] == "  pair-1  Q: question 0?"
    assert out[3:6] == ["      A: answer a0", "      B: answer b0", "      overall: ann -2, bob -2"]
    assert sum(line.startswith("  pair-") for line in out) == 3
    assert out[-1] == "  … 9 more (--limit N)"
    data = json.loads(cli("data", "show", "people", "--limit", "5", "--json",
                          "--db", str(db)).stdout)
    assert len(data["first_pairs"]) == 5 and data["pairs"] == 12 and data["annotators"] == 2
    assert data["first_pairs"][1]["labels"] == {"overall": {"ann": -1, "bob": -1}}
