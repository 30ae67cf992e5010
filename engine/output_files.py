"""Every file the tool writes for the user (HTML pages, CSV, JSON lines, JSON) goes through here.

One rule, :func:`output_file`: the text goes to a temporary file in the target's folder, which
is renamed over the target only when everything was written and flushed to disk, and only when
the target is a regular file or does not exist yet. A device (``/dev/full``, ``/dev/null``), a
FIFO, a socket or a folder at the path, or a symlink to one, is refused before anything is
written: renaming over it would replace the device node or the pipe with a regular file, and
writing into it is not what an export means.

Nothing is ever written through a link. A symbolic link at the path (to a regular file, to
another link, or dangling) is itself replaced by the new file: the rename replaces the
directory entry, never what the link points to, so a link planted in a shared folder cannot
turn an export into a write over another file (:func:`link_target` names where it pointed, for
the command line's note). Links in the folders of the path are followed: those are folders the
user named. A file the user may not write is never replaced, even by root (whom ``os.access``
always lets write): a file without a write bit for its owner when the user owns it, without
any write bit at all, or that ``os.access`` says is not writable, is refused
(``... is read-only (mode 0444)``). A file with other names (hard links, ``st_nlink`` > 1) is
refused too: replacing one name would leave the others holding the old text. The temporary
file is created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` beside the target, so nothing there
(a link raced in included) is opened, and renamed over the target atomically. A write error (a full disk, a file-size limit, an
I/O error) removes the temporary file and leaves the target as it was. Every refusal and
every failure is an :class:`OutputFileError`: one line naming the path and the cause. A path
whose folder does not exist is refused (``no folder F; create it first``), never created: a
typo must not make folders, as ``--db`` refuses one. The path ``-`` (:data:`STDOUT`) is
standard output: the text is written there as it is made, with no temporary file.

A file the user keeps and the tool never replaces (a run file saved from New run, the default
config.toml) is written by :func:`write_new_text`: nothing is written when anything is at the
path, even if it appears while the text is written.

Overwriting (:func:`refuse_existing`): the command line writes over a file that is already
there only when asked (``--force``); the one check runs before any work, for every file a
command would write, so a refused command writes nothing. The app asks instead
(:func:`existing_outputs`: what a write would replace; :func:`free_path`: another name to
suggest), and writes over a file only when the user said to replace it.

CSV cells (:func:`csv_cell`): a text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return is written with a single quote in front (OWASP's rule against formula
injection: a spreadsheet would run ``=HYPERLINK(...)`` or ``=cmd|...`` from a dataset's text
or a model's reply). Only text is neutralised: a number written as a number (``-0.5``, an int
or a float) is not a formula and stays as it is, so numeric columns keep their values. JSON
and JSON lines are written untouched (nothing evaluates them).
"""

from __future__ import annotations

import csv
import errno
import json
import os
import secrets
import shutil
import stat
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet may read as the start of a formula (OWASP, CSV injection)."""


STDOUT = "-"
"""The output path that means standard output (``-o -``)."""


class OutputFileError(ValueError):
    """An output file could not be written; the message is one line naming the path."""


class OutputFileExists(OutputFileError):
    """A write that keeps what is there (:func:`write_new_text`) found something at the path;
    nothing was written."""


def _link_new(tmp: Path, target: Path, path: Path) -> None:
    """Publish ``tmp`` at ``target`` only if nothing is there: a hard link, which fails when
    something is; an exclusive create where the file system has no hard links."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise OutputFileExists(f"{path} exists already; not overwritten") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        try:
            with open(tmp, "rb") as src, open(target, "xb") as dst:
                shutil.copyfileobj(src, dst)
        except FileExistsError:
            raise OutputFileExists(f"{path} exists already; not overwritten") from None


def is_stdout(out: str | os.PathLike | None) -> bool:
    """Whether ``out`` is :data:`STDOUT` (``-``) rather than a file."""
    return out is not None and os.fspath(out) == STDOUT


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell: None is empty, a bool 0/1, a list or dict JSON text, a text
    that a spreadsheet would read as a formula gets a leading ``'``; numbers stay numbers."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False)
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_writer(fh: IO[str]):
    """A CSV writer with RFC 4180's ``\\r\\n`` rows (the csv module's default): with ``\\n``
    alone, Python 3.11 leaves a cell holding a bare ``\\r`` unquoted and a reader splits the
    row there."""
    return csv.writer(fh)


def _kind(mode: int) -> str:
    for test, words in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                        (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "not a regular file"


def writable_target(out: str | os.PathLike) -> Path:
    """The path that writing ``out`` replaces: ``out`` itself, never what a symlink there
    points to (module docstring). Refused (:class:`OutputFileError`) when what is there, or
    what a symlink there points to, is not a regular file; when the folder is missing; when
    the file there is read-only (:func:`_read_only`) or has other names (hard links)."""
    path = Path(out)
    try:
        info = os.lstat(path)               # the entry itself: a link is not followed
    except FileNotFoundError:
        folder = path.parent
        if not folder.is_dir():
            raise OutputFileError(f"no folder {folder}; create it first" if not
                                  os.path.lexists(folder) else f"{path}: {folder} is not a "
                                  "folder") from None
        return path
    except OSError as exc:
        raise OutputFileError(f"{path}: cannot write here: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        try:
            pointed = os.stat(path)         # a link to a FIFO is refused as a FIFO is
        except OSError:                     # dangling, or a loop: the link is replaced
            return path
        if not stat.S_ISREG(pointed.st_mode):
            raise OutputFileError(f"{path} is {_kind(pointed.st_mode)} (via the symlink "
                                  f"{path}), not a regular file; give the path of a file to "
                                  "write")
        return path
    if not stat.S_ISREG(info.st_mode):
        raise OutputFileError(f"{path} is {_kind(info.st_mode)}, not a regular file; "
                              "give the path of a file to write")
    if _read_only(path, info):
        raise OutputFileError(f"{path} is read-only (mode {stat.S_IMODE(info.st_mode):04o}); "
                              "not replaced: make it writable (chmod u+w) or write to "
                              "another path")
    if info.st_nlink > 1:
        raise OutputFileError(f"{path} has {info.st_nlink} names (hard links); not replaced: "
                              "the other names would keep the old contents; remove it first "
                              "or write to another path")
    return path


def _read_only(path: Path, info: os.stat_result) -> bool:
    """Whether the user may not write the regular file ``path``: judged by its mode bits as
    well as ``os.access``, which lets root write anything."""
    mode = info.st_mode
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return True
    if hasattr(os, "geteuid") and info.st_uid == os.geteuid() and not mode & stat.S_IWUSR:
        return True
    return not os.access(path, os.W_OK)


def link_target(out: str | os.PathLike | None) -> str | None:
    """Where the symbolic link at ``out`` points (as written in the link), or None when no
    link is there: what a replacing write leaves as it was (the link itself is replaced)."""
    if out is None or is_stdout(out) or not os.path.islink(out):
        return None
    try:
        return os.readlink(out)
    except OSError:
        return "?"


def existing_outputs(paths: Iterable[str | os.PathLike | None]) -> list[Path]:
    """The paths among ``paths`` (None and ``-`` skipped) at which a file or a symlink (even a
    dangling one) already is: what writing them would replace. Refused
    (:class:`OutputFileError`, :func:`writable_target`) at the first path where no write may go:
    a device, a FIFO, a folder, a missing folder."""
    found = []
    for out in paths:
        if out is None or is_stdout(out):
            continue
        writable_target(out)
        if os.path.lexists(out):
            found.append(Path(out))
    return found


def refuse_existing(paths: Iterable[str | os.PathLike | None], *,
                    way_out: str = "add --force to overwrite it") -> None:
    """An :class:`OutputFileError` naming the first of ``paths`` (None skipped) at which
    something already is: what no write may replace (:func:`writable_target`: a device, a
    FIFO, a folder) says so, a file or a symlink (even a dangling one) says it exists;
    nothing when every path is free."""
    for out in paths:
        if existing_outputs([out]):
            pointed = link_target(out)
            if pointed is not None:
                raise OutputFileError(f"{out} is a symbolic link to {pointed}; {way_out} "
                                      f"(the link is replaced, {pointed} is left as it was), "
                                      "or write to another path")
            raise OutputFileError(f"{out} exists; {way_out}, or write to another path")


def free_path(out: str | os.PathLike,
              companions: Callable[[Path], Iterable[str | os.PathLike]] = lambda p: ()) -> Path:
    """``out`` with the first ``-2``, ``-3``, ... before its suffix at which neither it nor
    its ``companions(path)`` (files written with it: a CSV's header, a comparison's page)
    exist yet (``report.csv`` -> ``report-2.csv``, then ``report-3.csv``); ``out`` itself when
    all are free. What the app suggests instead of overwriting."""
    path = Path(out)
    stem, suffix = path.stem, path.suffix
    candidate, n = path, 1
    while os.path.lexists(candidate) or any(os.path.lexists(c)
                                            for c in companions(candidate)):
        n += 1
        candidate = path.with_name(f"{stem}-{n}{suffix}")
    return candidate


def _failure(path: Path, exc: OSError) -> OutputFileError:
    cause = exc.strerror or str(exc)
    if exc.errno == errno.EFBIG:
        cause += " (the file reached a size limit: ulimit -f)"
    return OutputFileError(f"{path}: cannot write: {cause}; nothing was written there")


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _temp_beside(target: Path) -> tuple[Path, int]:
    while True:
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            # 0o666 less the umask: the mode a plain open() would have given a new file
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW,
                                0o666)
        except FileExistsError:
            continue


def _keep_mode(fd: int, target: Path) -> None:
    """The new file (open as ``fd``) gets the mode of the regular file it replaces; a link
    replaced, or a new file, keeps the mode it was created with. ``fchmod``: by descriptor,
    so nothing put at the temporary name meanwhile is changed."""
    try:
        kept = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISREG(kept.st_mode):
        os.fchmod(fd, stat.S_IMODE(kept.st_mode))


@contextmanager
def output_file(out: str | os.PathLike, *, newline: str | None = "",
                keep_existing: bool = False) -> Iterator[IO[str]]:
    """A text stream (UTF-8) whose contents replace ``out`` when the block ends without an
    error (module docstring); a missing folder is refused. An error inside the block, or
    while writing, removes the temporary file and leaves ``out`` as it was; OS errors become
    :class:`OutputFileError`. ``-`` is standard output (written as it comes).
    ``keep_existing``: the file is put at ``out`` only if nothing is there by then
    (:class:`OutputFileExists` otherwise; :func:`write_new_text`)."""
    if is_stdout(out):
        yield sys.stdout
        sys.stdout.flush()
        return
    path = Path(out)
    target = writable_target(path)
    try:
        tmp, fd = _temp_beside(target)
    except OSError as exc:
        raise _failure(path, exc) from None
    try:
        try:
            with open(fd, "w", encoding="utf-8", newline=newline) as fh:
                yield fh
                fh.flush()
                if not keep_existing:
                    _keep_mode(fh.fileno(), target)
                os.fsync(fh.fileno())
            if keep_existing:                # nothing at ``out`` is replaced
                _link_new(tmp, target, path)
            else:
                os.replace(tmp, target)      # replaces a link there, never its target
        except OSError as exc:
            raise _failure(path, exc) from None
    finally:
        try:
            os.unlink(tmp)                   # gone already after a replace
        except FileNotFoundError:
            pass


def write_new_text(out: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``out`` only if nothing is there yet (a file the user keeps: a run
    file saved from New run, ``config --init``'s config.toml): :func:`output_file` with
    ``keep_existing``, whose temporary file is hard-linked at ``out``, so that nothing is
    written when anything is at ``out`` by then (no check-then-write race).
    :class:`OutputFileExists` when something is there; other refusals and failures as
    :func:`output_file`."""
    if os.path.lexists(out):
        raise OutputFileExists(f"{out} exists already; not overwritten")
    with output_file(out, newline=None, keep_existing=True) as fh:
        fh.write(text)
    return Path(out)


def write_text(out: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``out`` through :func:`output_file`; returns the path."""
    with output_file(out, newline=None) as fh:
        fh.write(text)
    return Path(out)


def write_csv(out: str | os.PathLike, columns: Iterable[str],
              rows: Iterable[Iterable[Any] | dict[str, Any]]) -> Path:
    """A header row of ``columns`` then one row per item of ``rows`` (a sequence in column
    order, or a dict read by column, a missing key an empty cell), every cell through
    :func:`csv_cell`; returns the path."""
    columns = list(columns)
    with output_file(out) as fh:
        writer = csv_writer(fh)
        writer.writerow([csv_cell(c) for c in columns])
        for row in rows:
            cells = [row.get(c) for c in columns] if isinstance(row, dict) else row
            writer.writerow([csv_cell(v) for v in cells])
    return Path(out)


def write_jsonl(out: str | os.PathLike, rows: Iterable[Any]) -> Path:
    """One JSON value per line (UTF-8, not ASCII-escaped); returns the path."""
    with output_file(out) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return Path(out)
