"""Every command that writes a file for the user, through the real command line on the
hand-made run of :mod:`testkit.toy_run`: a device, FIFO or folder at the path is refused in one
line and left as it was, a write cut short by a file-size limit is one line and leaves no
partial file, and CSV text cells cannot become spreadsheet formulas."""

from __future__ import annotations

import csv
import json
import os
import resource
import stat
import subprocess
import sys

import pytest

from testkit.paths import ROOT
from testkit.toy_run import A, B


def cli(db, *args, limit: int | None = None):
    """The command in a subprocess; ``limit``: under ``ulimit -f`` (bytes). Such a process
    writes no bytecode: Python writes a .pyc in one unchecked write(), so a size limit would
    leave a truncated one in __pycache__ for every later process to fail on."""
    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if limit:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([sys.executable, "-m", "mirage_tui.cli", *map(str, args), "--db",
                           str(db)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          preexec_fn=preexec if limit else None, env=env)


def one_line_error(done, *words):
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("mirage-tui: error: ")
    for w in words:
        assert w in done.stderr, done.stderr


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if ".tmp" in p.name or ".part" in p.name)


@pytest.fixture
def db(toy):
    # the test's own connection stays open, so the CLI only reads the workspace: its -wal and
    # -shm files exist already and a file-size limit meets the output file alone
    return toy.path


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_at_the_path_is_refused_and_stays_a_device(db, tmp_path):
    full = tmp_path / "full"
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))      # what /dev/full is
    one_line_error(cli(db, "report", "toy-run", "--html", full, "--n-boot", "20"),
                   f"{full} is a character device, not a regular file")
    one_line_error(cli(db, "export", "toy-run", "-o", full, "--force"),
                   "is a character device")
    assert stat.S_ISCHR(full.lstat().st_mode) and leftovers(tmp_path) == []


def test_a_fifo_a_symlink_to_one_and_a_folder_are_refused(db, tmp_path):
    fifo = tmp_path / "page.html"
    os.mkfifo(fifo)
    one_line_error(cli(db, "report", "toy-run", "--html", fifo, "--n-boot", "20"),
                   f"{fifo} is a FIFO (named pipe), not a regular file")
    link = tmp_path / "items.csv"
    link.symlink_to(fifo)
    one_line_error(cli(db, "compare", f"toy-run:{A}", f"toy-run:{B}", "--n-boot", "20",
                       "--csv", link), "is a FIFO (named pipe) (via the symlink")
    folder = tmp_path / "battles.jsonl"
    folder.mkdir()
    one_line_error(cli(db, "export", "toy-run", "--format", "jsonl", "-o", folder, "--force"),
                   f"{folder} is a folder")
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and link.is_symlink() and folder.is_dir()
    assert leftovers(tmp_path) == []


def test_a_size_limit_is_one_line_and_leaves_no_partial_file(db, tmp_path):
    """``ulimit -f`` in the command's process; Python ignores SIGXFSZ, so writes fail with
    EFBIG. The earlier files at the targets are left exactly as they were."""
    out = tmp_path / "run.csv"
    out.write_text("earlier\n")
    sidecar = tmp_path / "run.header.json"
    sidecar.write_text("{}\n")
    one_line_error(cli(db, "export", "toy-run", "-o", out, "--force", limit=4096),
                   f"{out}: cannot write: File too large", "nothing was written there")
    assert out.read_text() == "earlier\n" and sidecar.read_text() == "{}\n"
    items = tmp_path / "items.csv"
    one_line_error(cli(db, "compare", f"toy-run:{A}", f"toy-run:{B}", "--n-boot", "20",
                       "--csv", items, limit=512), "cannot write: File too large")
    assert not items.exists() and leftovers(tmp_path) == []
    page = tmp_path / "report.html"
    one_line_error(cli(db, "report", "toy-run", "--html", page, "--n-boot", "20",
                       limit=4096), "cannot write: File too large")
    assert not page.exists() and leftovers(tmp_path) == []


def test_csv_text_cells_are_neutralised_and_numbers_kept(toy, tmp_path):
    with toy.write() as w:
        w.conn.execute("UPDATE queries SET text = '=HYPERLINK(\"http://evil\",\"x\")' "
                       "WHERE query_id = 'q0'")
        w.conn.execute("UPDATE generations SET text = '=cmd|'' /C calc''!A0' WHERE key = "
                       "(SELECT generation_key FROM run_items WHERE generation_key IS NOT "
                       "NULL ORDER BY generation_key LIMIT 1)")
    out = tmp_path / "run.csv"
    done = cli(toy.path, "export", "toy-run", "-o", out)
    assert done.returncode == 0, done.stderr
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    queries = {r["query"] for r in rows}
    assert "'=HYPERLINK(\"http://evil\",\"x\")" in queries
    assert not any(q.startswith(("=", "+", "-", "@")) for q in queries)
    assert "'=cmd|' /C calc'!A0" in {r["response"] for r in rows}
    assert {r["em_loose"] for r in rows} <= {"0", "1", "0.0", "1.0", ""}
    jsonl = tmp_path / "run.jsonl"
    assert cli(toy.path, "export", "toy-run", "--format", "jsonl", "-o", jsonl).returncode == 0
    lines = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert '=HYPERLINK("http://evil","x")' in {r.get("query") for r in lines[1:]}


def test_force_replaces_a_symlink_never_what_it_points_to(db, tmp_path):
    """``-o pw.csv --force`` where pw.csv is a link to another file (standing in for
    /etc/passwd), to a link to it, or to nothing: the link becomes the export, the file it
    pointed to keeps its bytes and no file appears where a dangling link pointed; without
    ``--force`` the link is named with its target and nothing is written."""
    elsewhere = tmp_path / "etc"
    elsewhere.mkdir()
    passwd = elsewhere / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    (tmp_path / "hop").symlink_to(passwd)
    links = {"pw.csv": passwd, "pw2.csv": tmp_path / "hop",
             "page.html": elsewhere / "not-there.html"}
    for name, target in links.items():
        (tmp_path / name).symlink_to(target)
    one_line_error(cli(db, "export", "toy-run", "-o", tmp_path / "pw.csv"),
                   f"pw.csv is a symbolic link to {passwd}; add --force",
                   f"{passwd} is left as it was")
    runs = [cli(db, "export", "toy-run", "--format", "jsonl", "-o", tmp_path / "pw.csv",
                "--force"),
            cli(db, "export", "toy-run", "--format", "jsonl", "-o", tmp_path / "pw2.csv",
                "--force"),
            cli(db, "report", "toy-run", "--html", tmp_path / "page.html", "--n-boot", "20",
                "--force")]
    for done, (name, target) in zip(runs, links.items()):
        assert done.returncode == 0, done.stderr
        assert (f"note: {tmp_path / name} is a symbolic link to {target}; the link is "
                f"replaced by the file, {target} is left as it was") in done.stderr
        assert not (tmp_path / name).is_symlink() and (tmp_path / name).stat().st_size > 0
    assert passwd.read_text() == "root:x:0:0:root:/root:/bin/bash\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["passwd"]
    assert (tmp_path / "hop").is_symlink() and leftovers(tmp_path) == []


def test_force_never_replaces_a_read_only_file_or_one_with_other_names(db, tmp_path):
    """A 0444 file (as root too: the mode bits decide) and a file with a second hard link are
    refused in one line, with ``--force``, before any work; both keep their bytes."""
    locked = tmp_path / "locked.csv"
    locked.write_text("keep\n")
    locked.chmod(0o444)
    one_line_error(cli(db, "export", "toy-run", "-o", locked, "--force"),
                   f"{locked} is read-only (mode 0444); not replaced")
    page = tmp_path / "page.html"
    page.write_text("keep\n")
    os.link(page, tmp_path / "other-name.html")
    one_line_error(cli(db, "report", "toy-run", "--html", page, "--n-boot", "20", "--force"),
                   f"{page} has 2 names (hard links); not replaced")
    assert locked.read_text() == "keep\n" and page.read_text() == "keep\n"
    assert stat.S_IMODE(locked.stat().st_mode) == 0o444 and leftovers(tmp_path) == []
