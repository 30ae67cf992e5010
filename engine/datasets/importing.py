"""Import a dataset file or folder into the store: detect, hash, parse, write atomically.

Re-importing content already in the store (same content hash, same format) writes nothing.
A different content under an existing name becomes that name's next version. An import is a
:class:`~engine.jobs.Job` of one step (parse, then one transaction) that reports its parse
progress as :class:`~engine.jobs.JobEvent`; its errors are raised as they are.

A JSON string may spell a lone surrogate (``"\ud800"``), which no UTF-8 column can hold: the
parsed dataset is checked before the write (:func:`check_storable`), and the error names the
file, the record and the field instead of a codec's complaint from inside SQLite.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from engine.datasets.formats import FORMATS, detect_format, get_importer
from engine.datasets.formats.base import DatasetFormatError, ParsedDataset
from engine.jobs import Job, JobEvent, Progress
from engine.store import Store
from engine.store import datasets as stored
from engine.store.labels import insert_label_pairs
from engine.text_safety import visible_line


NOTHING_STORED = "cancelled; nothing was stored"


@dataclass
class ImportResult:
    dataset: str            # name
    version: int
    dataset_id: int
    format: str
    outcome: str            # 'imported' or 'unchanged'
    counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.dataset}@{self.version}"


def content_hash(files: list[Path], root: Path) -> tuple[str, int]:
    """sha256 over the files an importer reads (names relative to root, then bytes)."""
    digest = hashlib.sha256()
    total = 0
    for path in sorted(files):
        rel = path.name if path == root else str(path.relative_to(root))
        digest.update(rel.encode() + b"\0")
        with path.open("rb") as fh:
            while block := fh.read(1 << 20):
                digest.update(block)
                total += len(block)
        digest.update(b"\0")
    return digest.hexdigest(), total


def import_path(store: Store, path: str | Path, *, format: str | None = None,
                name: str | None = None, progress: Progress | None = None, cancel=None,
                min_interval: float = 0.0) -> ImportResult | None:
    """Import ``path`` (module docstring). ``progress`` receives the parse's progress as
    :class:`~engine.jobs.JobEvent` (at most one per ``min_interval`` seconds; 0: all of
    them), and the last one when the import ends. ``cancel`` (an Event or a callable) is
    checked while the parser reports and before the write: a cancelled import stores nothing
    and returns None."""
    return _Importing(store, Path(path).expanduser(), format, name, progress, cancel,
                      min_interval).run()


class _Importing(Job):
    kind = "import"
    raises = True

    def __init__(self, store, path, format, name, progress, cancel, min_interval):
        super().__init__(progress, cancel, min_interval)
        self.store, self.path, self.format, self.name = store, path, format, name
        self.done, self.total, self.what = 0, None, None
        self.result: ImportResult | None = None

    def work(self) -> None:
        try:
            self._work()
        except OSError as exc:          # a name too long, no permission, a file gone meanwhile
            raise DatasetFormatError(exc.filename or self.path,
                                     f"cannot read it ({exc.strerror or exc})") from None

    def _work(self) -> None:
        store, path = self.store, self.path
        if not path.exists():
            raise DatasetFormatError(path, "no such file or folder")
        if not path.is_file() and not path.is_dir():    # reading a FIFO would wait forever
            raise DatasetFormatError(path, "neither a file nor a folder (a FIFO, a device?)")
        _check_name(path)
        fmt = self.format or detect_format(path)
        if fmt not in FORMATS:
            raise DatasetFormatError(path, f"unknown format {fmt!r} (known: "
                                           f"{', '.join(FORMATS)})")
        importer = get_importer(fmt)
        files = importer.files(path)
        for file in files:
            _check_name(file)
        digest, nbytes = content_hash(files, path if path.is_dir() else path.parent)
        name = self.name or importer.default_name(path)

        row = stored.dataset_by_content(store, digest, fmt)
        if row is not None:
            self.result = ImportResult(row["name"], row["version"], row["id"], fmt,
                                       "unchanged", counts=dataset_counts(store, row["id"]))
            return

        started = time.perf_counter()
        watched = self.progress is not None or self.cancel is not None
        parsed = importer.parse(path, steps=self.parse_steps if watched else None)
        self.check_cancel(NOTHING_STORED)
        check_storable(parsed, files[0] if len(files) == 1 else path)
        dataset_id, version = write_dataset(store, parsed, name=name, content_hash=digest,
                                            path=path, nbytes=nbytes,
                                            seconds=time.perf_counter() - started)
        self.result = ImportResult(name, version, dataset_id, fmt, "imported",
                                   counts=_counts(parsed), warnings=parsed.warnings,
                                   seconds=time.perf_counter() - started)

    def parse_steps(self, done: int, total: int | None, what: str) -> None:
        """The parser's steps, as the job's events; a cancel stops the parse here."""
        self.check_cancel(NOTHING_STORED)
        self.done, self.total, self.what = done, total, what
        self.emit()

    def event(self, status: str, message: str | None) -> JobEvent:
        return JobEvent(kind=self.kind, name=self.path.name, status=status, done=self.done,
                        total=self.total, new=self.done, working_on=self.what,
                        message=message)

    def summary(self, status: str, message: str | None) -> ImportResult | None:
        return self.result


def _check_name(path: Path) -> None:
    """Refuse a file name that is not UTF-8 (the system's bytes, decoded with surrogates): it
    could be neither stored nor shown as the dataset's source."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError as exc:
        byte = os.fsencode(str(path)[exc.start:exc.end])[:1]
        raise DatasetFormatError(path, f"the name is not UTF-8 text (byte 0x{byte.hex()}); "
                                       "rename it to import it") from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _bad_text(value) -> str | None:
    """The first lone surrogate in ``value`` (a string, or strings inside lists and dicts)."""
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        return None if found is None else f"\\u{ord(found.group()):04x}"
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, (list, tuple)):
        return next((bad for bad in map(_bad_text, value) if bad), None)
    return None


def check_storable(parsed: ParsedDataset, path: Path) -> None:
    """Refuse text that cannot be stored (a lone surrogate) naming the file, the record and
    the field, before anything is written."""
    records = [("query", q.query_id, q, ("query_id", "text", "answers", "language", "source",
                                         "reference_answer", "reference_citations",
                                         "metadata")) for q in parsed.queries]
    records += [("chunk", c.chunk_id, c, ("chunk_id", "text", "title", "language",
                                          "metadata")) for c in parsed.chunks]
    records += [("pair", p.pair_id, p, ("pair_id", "query", "reference", "answer_a", "answer_b",
                                        "domain", "metadata")) for p in parsed.label_pairs]
    records += [("pair", p.pair_id, lab, ("annotator", "aspect", "note"))
                for p in parsed.label_pairs for lab in p.labels]
    for kind, ident, record, fields in records:
        for name in fields:
            bad = _bad_text(getattr(record, name))
            if bad:
                raise DatasetFormatError(
                    path, f"not valid Unicode: a lone surrogate {bad} (an unpaired "
                    f"\\uD800-\\uDFFF escape); fix or remove it",
                    record=f"{kind} {visible_line(ident)}", field=name)


def _counts(parsed: ParsedDataset) -> dict[str, int]:
    if parsed.kind == "labels":         # pairs and labels only: no queries, chunks or pool
        return dict(parsed.counts)
    counts = {"queries": len(parsed.queries), "chunks": len(parsed.chunks),
              "pool_entries": len(parsed.pool)}
    counts.update(parsed.counts)
    return counts


def _json(value) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def write_dataset(store: Store, parsed: ParsedDataset, *, name: str, content_hash: str,
                  path: Path, nbytes: int, seconds: float) -> tuple[int, int]:
    """Write a parsed dataset as one transaction; returns (dataset id, version)."""
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    with store.write() as db:
        version = stored.next_version(db, name)
        dataset_id = stored.insert_dataset(db, name, version, parsed.kind, parsed.format,
                                           content_hash, now, parsed.description)
        stored.insert_chunks(db, ((dataset_id, c.chunk_id, c.title, c.text, c.language,
                                   c.content_hash, _json(c.metadata)) for c in parsed.chunks))
        stored.insert_queries(db, (
            (dataset_id, q.query_id, q.text, q.language, q.source,
             json.dumps(q.answers, ensure_ascii=False), q.reference_answer,
             _json(q.reference_citations), _json(q.metadata)) for q in parsed.queries))
        if parsed.label_pairs:
            insert_label_pairs(db, (
                ((dataset_id, p.pair_id, p.query, p.reference, p.answer_a, p.answer_b, p.domain,
                  _json(p.metadata)),
                 ((lab.annotator, lab.aspect, lab.label, lab.note) for lab in p.labels))
                for p in parsed.label_pairs))
        if parsed.pool:
            chunk_rowid = stored.chunk_rowids(db, dataset_id)
            query_rowid = stored.query_rowids(db, dataset_id)
            stored.insert_pool(db, ((query_rowid[p.query_id], chunk_rowid[p.chunk_id],
                                     p.position, p.support, int(p.is_oracle), p.support_source)
                                    for p in parsed.pool))
        stored.insert_import(db, dataset_id, str(path.resolve()), parsed.format, content_hash,
                             nbytes, json.dumps(_counts(parsed)),
                             json.dumps(parsed.warnings, ensure_ascii=False), "imported",
                             seconds, now)
    return dataset_id, version


def dataset_counts(store: Store, dataset_id: int) -> dict[str, int]:
    counts = stored.dataset_counts(store, dataset_id)
    if not counts["pairs"]:
        counts.pop("pairs")
    return counts
