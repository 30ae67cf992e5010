"""What every importer produces, and the errors it raises.

An importer only *parses and validates*: it reads files and returns a :class:`ParsedDataset`
held in memory, or raises :class:`DatasetFormatError` naming the file, the record and the
field. Nothing touches the database until parsing has fully succeeded; then
:func:`engine.datasets.importing.import_path` writes everything in one transaction. That is what makes
every import all-or-nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from engine.jobs import StepCount


class DatasetFormatError(ValueError):
    """A dataset file that cannot be imported, with where and why, in one line."""

    def __init__(self, path: str | Path, message: str, record: str | int | None = None,
                 field: str | None = None):
        self.path = str(path)
        self.record = record
        self.field = field
        # one line, whatever a library's own error adds (pyarrow's end in a newline)
        message = " ".join(str(message).split())
        self.reason = message
        where = self.path
        if record is not None:
            where += f": record {record}"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")


@dataclass
class QueryRecord:
    query_id: str
    text: str
    answers: list[str]
    language: str | None = None
    source: str | None = None
    reference_answer: str | None = None
    reference_citations: Any = None
    metadata: dict | None = None


@dataclass
class ChunkRecord:
    chunk_id: str
    text: str
    title: str | None = None
    language: str | None = None
    metadata: dict | None = None

    @property
    def content_hash(self) -> str:
        return text_hash(self.text)


@dataclass
class PoolRecord:
    query_id: str
    chunk_id: str
    position: int | None
    support: int
    is_oracle: bool = False
    support_source: str = "label"


@dataclass
class ParsedDataset:
    kind: str  # 'qa', 'collection' or 'labels' (human pairwise labels)
    format: str
    queries: list[QueryRecord] = field(default_factory=list)
    chunks: list[ChunkRecord] = field(default_factory=list)
    pool: list[PoolRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    description: str | None = None
    label_pairs: list = field(default_factory=list)   # kind 'labels': formats.pairwise_labels


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- reading files

SNIFF_BYTES = 64 * 1024


def nonempty_size(path: Path) -> int:
    """The file's size, or a clear error when it is missing or empty."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise DatasetFormatError(path, "file not found") from None
    if size == 0:
        raise DatasetFormatError(path, "the file is empty")
    return size


def read_head(path: Path, size: int = 4096) -> bytes:
    """The first ``size`` bytes of a file, for format sniffing (``b""`` when unreadable)."""
    try:
        with path.open("rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def folder_files(path: Path, pattern: str, missing: str,
                 accept: Callable[[Path], bool] | None = None) -> list[Path]:
    """A folder's files matching ``pattern`` (and ``accept``), sorted; ``[path]`` for a file.
    A folder without any is a :class:`DatasetFormatError` saying ``missing``."""
    if not path.is_dir():
        return [path]
    found = sorted(p for p in path.glob(pattern) if p.is_file() and (accept is None or accept(p)))
    if not found:
        raise DatasetFormatError(path, missing)
    return found


def read_text(path: Path) -> str:
    """A whole file as text, with a clear error for an empty file or a wrong encoding.

    The first 64 KiB are checked before the rest is read, so a large binary file is refused
    at once instead of after reading it all.
    """
    size = nonempty_size(path)
    with path.open("rb") as fh:
        head = fh.read(SNIFF_BYTES)
        _check_utf8(path, head, partial=size > SNIFF_BYTES)
        rest = fh.read()
    data = head + rest
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(
            path, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} "
            "(re-save the file as UTF-8)") from None
    if not text.strip():
        raise DatasetFormatError(path, "the file contains only whitespace")
    return text


def _check_utf8(path: Path, head: bytes, partial: bool) -> None:
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DatasetFormatError(path, "the file is UTF-16 encoded; re-save it as UTF-8")
    if b"\x00" in head:
        offset = head.index(b"\x00")
        raise DatasetFormatError(
            path, f"binary data (a NUL byte at offset {offset}): not a text dataset file")
    try:
        head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # a multi-byte character cut by the sniff window is fine
        if partial and exc.start >= len(head) - 3 and exc.reason == "unexpected end of data":
            return
        raise DatasetFormatError(
            path, f"not UTF-8 text: byte 0x{head[exc.start]:02x} at offset {exc.start} "
            "(re-save the file as UTF-8)") from None


def load_json(path: Path, expected: type | None = None, what: str = "") -> Any:
    """The file's JSON value, refusing text that is not JSON with where it breaks; with
    ``expected``, a value of that type (``what`` says which in the error: "a list of ...")."""
    value = _parse_json(path)
    if expected is not None and not isinstance(value, expected):
        raise DatasetFormatError(path, f"expected {what}, got {type(value).__name__}")
    return value


def _parse_json(path: Path) -> Any:
    text = read_text(path)
    first = text.lstrip()[:1]
    if first not in ("[", "{"):
        raise DatasetFormatError(path, f"not JSON: it starts with {text.lstrip()[:20]!r}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # an unterminated string runs to the end of the text: the file was cut inside it
        truncated = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        what = "truncated JSON (the file ends early)" if truncated \
            else f"invalid JSON: {exc.msg.removesuffix(' at')}"
        raise DatasetFormatError(path, f"{what} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:              # json recurses once per nested list or object
        raise DatasetFormatError(path, "invalid JSON: nested too deeply") from None


def each_file(paths: list[Path], steps: StepCount | None) -> Iterator[Path]:
    """``paths`` one by one for a multi-file import, reporting ``steps(i, n, name)`` before
    each file and ``(n, n, "done")`` after the last."""
    for index, file in enumerate(paths):
        if steps:
            steps(index, len(paths), file.name)
        yield file
    if steps:
        steps(len(paths), len(paths), "done")


class _KeyTwice(Exception):
    def __init__(self, key: str):
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise _KeyTwice(key)
        out[key] = value
    return out


def iter_jsonl(path: Path, unique_keys: bool = False) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSON-lines file. ``unique_keys``:
    an object naming a key twice is refused (JSON keeps the last one silently), as a CSV
    header naming a column twice is."""
    text = read_text(path)
    hook = _unique_pairs if unique_keys else None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, object_pairs_hook=hook)
        except _KeyTwice as twice:
            raise DatasetFormatError(path, "the key is there twice in one object: which one "
                                     "counts?", record=f"at line {lineno}",
                                     field=twice.key) from None
        except json.JSONDecodeError as exc:
            raise DatasetFormatError(path, f"invalid JSON at column {exc.colno}: {exc.msg}",
                                     record=f"at line {lineno}") from None
        except RecursionError:
            raise DatasetFormatError(path, "invalid JSON: nested too deeply",
                                     record=f"at line {lineno}") from None
        if not isinstance(obj, dict):
            raise DatasetFormatError(path, f"expected a JSON object, got {type(obj).__name__}",
                                     record=f"at line {lineno}")
        yield lineno, obj


# --------------------------------------------------------------------------- field checks

def require_str(path: Path, record: Any, obj: dict, key: str, *, allow_empty: bool = False) -> str:
    if key not in obj or obj[key] is None:
        raise DatasetFormatError(path, "missing", record=record, field=key)
    value = obj[key]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key.endswith("id"):
        value = str(value)
    if not isinstance(value, str):
        raise DatasetFormatError(path, f"expected a string, got {type(value).__name__}",
                                 record=record, field=key)
    if not allow_empty and not value.strip():
        raise DatasetFormatError(path, "empty", record=record, field=key)
    return value


def answers_list(path: Path, record: Any, value: Any, key: str = "answer") -> list[str]:
    """Gold answers: a string or a list of strings (numbers are accepted as their text)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, list):
        out = []
        for i, item in enumerate(value):
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                item = str(item)
            if not isinstance(item, str):
                raise DatasetFormatError(
                    path, f"item {i} is {type(item).__name__}, expected a string",
                    record=record, field=key)
            out.append(item)
        return out
    raise DatasetFormatError(path, f"expected a string or a list of strings, got "
                             f"{type(value).__name__}", record=record, field=key)


def check_unique(path: Path, ids: list[str], what: str) -> None:
    seen: dict[str, int] = {}
    for index, ident in enumerate(ids):
        if ident in seen:
            raise DatasetFormatError(
                path, f"duplicate {what} {ident!r} (first at record {seen[ident]})",
                record=index)
        seen[ident] = index


def contains_answer(text: str, answers: list[str]) -> bool:
    low = text.lower()
    return any(a.strip() and a.strip().lower() in low for a in answers)
