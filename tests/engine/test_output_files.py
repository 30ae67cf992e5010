"""The one writer of output files (engine/output_files.py): what is at the path decides whether
it is replaced, a failed write leaves nothing behind, and CSV text cannot become a formula."""

from __future__ import annotations

import csv
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from engine.output_files import (OutputFileError, OutputFileExists, csv_cell, link_target,
                                 output_file, write_new_text, write_csv,
                                 write_jsonl, write_text)
from testkit.paths import ROOT


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_new_and_regular_targets_are_replaced_keeping_the_mode(tmp_path):
    out = tmp_path / "sub" / "page.html"
    with pytest.raises(OutputFileError, match=f"^no folder {out.parent}; create it first$"):
        write_text(out, "one")                  # a typo never makes folders (issue 35)
    assert not out.parent.exists()
    out.parent.mkdir()
    write_text(out, "one")
    assert out.read_text() == "one"
    out.chmod(0o640)
    write_text(out, "two")
    assert out.read_text() == "two" and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert _leftovers(out.parent) == []


@pytest.mark.parametrize("points_to", ["a file", "a link to a file", "nothing", "itself"])
def test_a_symlink_at_the_path_is_replaced_never_its_target(tmp_path, points_to):
    """Nothing is written through a link: the link itself becomes the new file, and what it
    pointed to (a file, through a chain of links, or nothing) is left as it was."""
    real = tmp_path / "elsewhere" / "passwd"
    real.parent.mkdir()
    real.write_text("root:x:0:0\n")
    real.chmod(0o444)
    before = real.stat()
    link = tmp_path / "link.csv"
    middle = tmp_path / "middle"
    middle.symlink_to(real)
    link.symlink_to({"a file": real, "a link to a file": middle,
                     "nothing": tmp_path / "elsewhere" / "new-file",
                     "itself": link}[points_to])
    assert link_target(link) is not None
    write_text(link, "new")
    assert not link.is_symlink() and link.read_text() == "new"
    assert real.read_text() == "root:x:0:0\n" and real.stat().st_ino == before.st_ino
    assert sorted(p.name for p in real.parent.iterdir()) == ["passwd"]   # nothing created
    assert middle.is_symlink() and _leftovers(tmp_path) == []
    assert link_target(link) is None


def test_a_link_in_the_folders_of_the_path_is_followed(tmp_path):
    """A folder the user named may be a link: the file is written inside what it points to."""
    (tmp_path / "real").mkdir()
    (tmp_path / "via").symlink_to(tmp_path / "real")
    write_text(tmp_path / "via" / "out.csv", "x")
    assert (tmp_path / "real" / "out.csv").read_text() == "x"


def test_a_read_only_file_is_never_replaced_even_by_root(tmp_path):
    """The mode bits decide, not ``os.access`` alone (root passes it): a 0444 file, and one
    whose owner (the user) has no write bit, are refused in one line and left as they were."""
    for mode in (0o444, 0o464, 0o400):
        out = tmp_path / f"locked-{mode:o}.csv"
        out.write_text("keep")
        out.chmod(mode)
        with pytest.raises(OutputFileError) as info:
            write_csv(out, ["a"], [[1]])
        assert str(info.value) == (f"{out} is read-only (mode {mode:04o}); not replaced: make "
                                   "it writable (chmod u+w) or write to another path")
        assert out.read_text() == "keep" and stat.S_IMODE(out.stat().st_mode) == mode
    assert _leftovers(tmp_path) == []


def test_a_file_with_other_names_is_not_replaced(tmp_path):
    """A hard link: replacing one name would leave the other with the old contents."""
    out = tmp_path / "out.csv"
    out.write_text("keep")
    os.link(out, tmp_path / "other-name")
    with pytest.raises(OutputFileError, match=r"has 2 names \(hard links\); not replaced"):
        write_text(out, "new")
    assert out.read_text() == "keep" == (tmp_path / "other-name").read_text()


def test_the_temporary_file_never_follows_a_link_raced_in(tmp_path, monkeypatch):
    """A link put at the temporary name before it is made (a guessed name) is not followed:
    another name is taken, and what the link points to is left as it was."""
    from engine import output_files

    victim = tmp_path / "victim"
    victim.write_text("keep")
    names = iter(["aaaaaaaa", "bbbbbbbb"])
    monkeypatch.setattr(output_files.secrets, "token_hex", lambda n: next(names))
    (tmp_path / ".out.csv.aaaaaaaa.tmp").symlink_to(victim)
    write_text(tmp_path / "out.csv", "new")
    assert (tmp_path / "out.csv").read_text() == "new" and victim.read_text() == "keep"


@pytest.mark.parametrize("make, words", [
    (lambda p: os.mkfifo(p), "a FIFO (named pipe)"),
    (lambda p: p.mkdir(), "a folder"),
])
def test_fifo_and_folder_are_refused_and_left_alone(tmp_path, make, words):
    target = tmp_path / "out.csv"
    make(target)
    before = target.lstat()
    with pytest.raises(OutputFileError) as info:
        write_csv(target, ["a"], [[1]])
    message = str(info.value)
    assert message == (f"{target} is {words}, not a regular file; give the path of a file "
                       "to write")
    after = target.lstat()
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert _leftovers(tmp_path) == []


def test_a_symlink_to_a_fifo_is_refused(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "report.html"
    link.symlink_to(fifo)
    with pytest.raises(OutputFileError, match=r"is a FIFO \(named pipe\) \(via the symlink"):
        write_text(link, "<html>")
    assert link.is_symlink() and stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_character_device_is_refused_and_stays_a_device(tmp_path):
    full = tmp_path / "full"
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))      # what /dev/full is
    with pytest.raises(OutputFileError, match="is a character device, not a regular file"):
        write_jsonl(full, [{"a": 1}])
    assert stat.S_ISCHR(full.lstat().st_mode)
    with pytest.raises(OutputFileError, match="^/dev/null is a character device"):
        write_text("/dev/null", "x")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_an_error_inside_the_block_leaves_the_target_as_it_was(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text("kept\n")
    with pytest.raises(RuntimeError):
        with output_file(out) as fh:
            fh.write("half")
            raise RuntimeError("boom")
    assert out.read_text() == "kept\n" and _leftovers(tmp_path) == []


def test_a_size_limit_is_one_line_and_leaves_no_partial_file(tmp_path):
    """Under ``ulimit -f`` (SIGXFSZ ignored, as Python does) the write fails with EFBIG."""
    out = tmp_path / "big.csv"
    out.write_text("old\n")
    script = textwrap.dedent(f"""
        import resource, signal, sys
        from engine.output_files import OutputFileError, write_csv
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            write_csv({str(out)!r}, ["text"], [["x" * 100] for _ in range(1000)])
        except OutputFileError as exc:
            print(exc)
            sys.exit(1)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT),
                                                     "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 1, done.stderr
    assert done.stdout == (f"{out}: cannot write: File too large (the file reached a size "
                           "limit: ulimit -f); nothing was written there\n")
    assert out.read_text() == "old\n" and _leftovers(tmp_path) == []


def test_csv_text_cells_that_could_be_formulas_are_neutralised(tmp_path):
    """OWASP's rule on text cells; numbers written as numbers stay numbers."""
    hostile = ['=HYPERLINK("http://x","y")', "=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1)",
               "\tx", "\rx"]
    for text in hostile:
        assert csv_cell(text) == "'" + text
    assert [csv_cell(v) for v in (-0.5, -3, 0, 2.5, True, None, "plain", "a=b", ["-x"])] == \
        [-0.5, -3, 0, 2.5, 1, "", "plain", "a=b", '["-x"]']
    out = write_csv(tmp_path / "c.csv", ["text", "score"],
                    [{"text": t, "score": -1.5} for t in hostile])
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["text"] for r in rows] == ["'" + t for t in hostile]
    assert {r["score"] for r in rows} == {"-1.5"}


def test_json_lines_are_untouched(tmp_path):
    out = write_jsonl(tmp_path / "r.jsonl", [{"q": "=cmd|x", "v": -1}])
    assert out.read_text() == '{"q": "=cmd|x", "v": -1}\n'


def test_a_kept_file_is_written_once_and_never_replaced(tmp_path):
    """write_new_text (New run's saved run file, config --init): written when the path is
    free; a file, or a dangling symlink, at the path is left as it was and named."""
    out = write_new_text(tmp_path / "run.toml", "first\n")
    assert out.read_text() == "first\n"
    with pytest.raises(OutputFileExists, match=r"run.toml exists already; not overwritten"):
        write_new_text(tmp_path / "run.toml", "second\n")
    assert out.read_text() == "first\n"
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(OutputFileExists):
        write_new_text(tmp_path / "dangling", "x")
    assert not (tmp_path / "nowhere").exists()
    with pytest.raises(OutputFileError, match="no folder"):
        write_new_text(tmp_path / "missing" / "run.toml", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "run.toml"]  # no temp


def test_a_kept_file_that_appears_while_written_is_not_replaced(tmp_path, monkeypatch):
    """The check before the write is not the guard: a file made between the check and the
    link stays, and nothing of ours is left behind."""
    import engine.output_files as output_files

    target = tmp_path / "config.toml"
    real_link = os.link

    def someone_else_first(src, dst):
        target.write_text("theirs")
        return real_link(src, dst)

    monkeypatch.setattr(output_files.os, "link", someone_else_first)
    with pytest.raises(OutputFileExists):
        write_new_text(target, "ours")
    assert target.read_text() == "theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]
