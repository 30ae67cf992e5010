"""Human pairwise labels: people's verdicts on two answers to one query (a dataset of kind
``labels``, the ground truth ``mirage-tui judge calibrate`` reads a judge against).

Two layouts, one reader:

- **RAGChecker meta-evaluation** (``ragchecker-meta``; amazon-science/RAGChecker
  ``data/meta_evaluation/human_labeled_data.json``): a JSON list of ``{instance_id, dataset,
  query_id, query, gt_answer, model1: {model_name, response}, model2: {...},
  correctness_label, completeness_label, overall_label}``. Each row is one annotator's labels
  on one pair; the rows sharing an ``instance_id`` are the pair's annotators, numbered in file
  order (``annotator 1``, ``annotator 2``: the file names nobody). ``model1`` is answer A.
  The domain is the ``dataset`` after its last ``/`` (``robustqa/fiqa`` → ``fiqa``).
- **Plain** (``pairwise-labels``): JSON lines or CSV with the columns ``query, reference?,
  answer_a, answer_b, label, annotator?, aspect?, domain?, pair_id?, note?``. Rows with the
  same ``pair_id`` (or, without one, the same query and answers) are one pair. ``aspect``
  defaults to ``overall``. A row repeated exactly (same pair, annotator, aspect and label) is
  dropped and counted. A row without an ``annotator`` names nobody: its label counts in the
  pair's mean, but it is no annotator (stored as :data:`UNNAMED` ``k`` per pair and aspect), so
  it neither adds to the annotators counted nor makes a pair one the human ceiling rests on.

One person is one annotator however the name is spelled: names are compared by
:func:`annotator_key` (Unicode NFKC, case-folded, invisible format characters dropped, blanks
collapsed), so ``alice``, ``Alice``, `` alice `` and ``ＡＬＩＣＥ`` are one person, stored under
the first spelling the file gives (outer blanks trimmed).

A label runs from -2 (answer A much better) to 2 (answer B much better), 0 a tie; ``A``,
``B`` and ``tie`` are read as -1, 1 and 0. Anything else, a missing field, a pair id reused for
another query or answers, or one annotator labelling one pair and aspect twice is refused with
the file, the record and the field. So is a CSV whose header names a column twice, a row with
more or fewer cells than the header, a column or an aspect that is a misspelt known one
(``annotater``, ``Overal``: did-you-mean; another column is warned as not read, another aspect
kept as one of its own and warned), and a file with no labelled pair at all. The import is all
or nothing like every other.

RAGChecker's records are its annotators by the file's own layout, so two identical records of
one instance are two people agreeing (54 of the 392 in the public file), never a duplicate.
"""

from __future__ import annotations

import csv
import io
import json
import math
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.datasets.formats.base import (DatasetFormatError, ParsedDataset, iter_jsonl,
                                          load_json, read_head, read_text, require_str)
from engine.jobs import StepCount
from engine.suggest import did_you_mean

FORMAT = "pairwise-labels"
RAGCHECKER_FORMAT = "ragchecker-meta"
ASPECTS = ("correctness", "completeness", "overall")
COLUMNS = ("query", "reference", "answer_a", "answer_b", "label", "annotator", "aspect",
           "domain", "pair_id", "note")
"""The plain layout's columns (JSON lines: its keys)."""
_WORD_LABELS = {"a": -1, "b": 1, "tie": 0}
UNNAMED = "(no annotator)"
"""The stored name of a label whose row named no annotator (``(no annotator) 1``, ...): no file
annotator may start with it."""


def annotator_key(name: str) -> str:
    """Who ``name`` is, for counting people: NFKC, case-folded (NFKC again after it), format
    characters (zero-width spaces, joiners) dropped and every run of blanks one space, trimmed.
    Two spellings with one key are one person."""
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return " ".join(text.split())


@dataclass
class LabelRecord:
    annotator: str
    aspect: str
    label: int
    note: str | None = None


@dataclass
class PairRecord:
    pair_id: str
    query: str
    answer_a: str
    answer_b: str
    reference: str | None = None
    domain: str | None = None
    metadata: dict | None = None
    labels: list[LabelRecord] = field(default_factory=list)


# --------------------------------------------------------------------------- detection

def is_ragchecker(path: Path) -> bool:
    head = read_head(path)
    return (path.is_file() and head.lstrip().startswith(b"[") and b'"instance_id"' in head
            and b'"model1"' in head)


def _is_plain(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() not in (".jsonl", ".csv"):
        return False
    head = read_head(path)
    return b"answer_a" in head and b"answer_b" in head and b"label" in head


def files(path: Path) -> list[Path]:
    return [path]


def default_name(path: Path) -> str:
    return path.stem


# --------------------------------------------------------------------------- fields

def parse_label(path: Path, record: Any, value: Any, key: str = "label") -> int:
    """-2..2 from a label cell (an int, its text, or A / B / tie). A refusal quotes the cell as
    written (a CSV's ``7``, not the float it was read as)."""
    shown = repr(value)
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in _WORD_LABELS:
            return _WORD_LABELS[text.lower()]
        shown = text[:20]
        try:
            value = float(text)
        except ValueError:
            raise DatasetFormatError(path, f"expected -2..2 or A / B / tie, got {text[:20]!r}",
                                     record=record, field=key) from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value) or not -2 <= value <= 2:
        raise DatasetFormatError(path, f"expected an integer from -2 to 2, got {shown}",
                                 record=record, field=key)
    return int(value)


def _optional_str(path: Path, record: Any, obj: dict, key: str) -> str | None:
    value = obj.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise DatasetFormatError(path, f"expected a string, got {type(value).__name__}",
                                 record=record, field=key)
    return value


class _Pairs:
    """Pairs by id, checking that an id always names the same text and that no annotator
    labels one pair and aspect twice (an exact repeat is dropped and counted instead).
    ``unnamed_are_people``: a row without an annotator is one more annotator of its pair
    (RAGChecker's layout), else it names nobody (:data:`UNNAMED`)."""

    def __init__(self, path: Path, unnamed_are_people: bool = False):
        self.path = path
        self.unnamed_are_people = unnamed_are_people
        self.pairs: dict[str, PairRecord] = {}
        self.first: dict[str, Any] = {}
        self.seen: set[tuple[str, str | None, str, int]] = set()
        self.repeats = 0
        self.spelling: dict[str, str] = {}      # annotator_key -> the first spelling

    def add(self, record: Any, pair: PairRecord, labels: list[tuple[str | None, str, int,
                                                                    str | None]]) -> None:
        known = self.pairs.get(pair.pair_id)
        if known is None:
            self.pairs[pair.pair_id] = known = pair
            self.first[pair.pair_id] = record
        else:
            for name in ("query", "answer_a", "answer_b"):
                if getattr(known, name) != getattr(pair, name):
                    raise DatasetFormatError(
                        self.path, f"pair {pair.pair_id!r} has another {name} here than at "
                        f"record {self.first[pair.pair_id]}", record=record, field=name)
        taken = {(lab.annotator, lab.aspect) for lab in known.labels}
        for annotator, aspect, label, note in labels:
            annotator = self._person(annotator)
            if annotator is not None and annotator_key(annotator).startswith(
                    annotator_key(UNNAMED)):
                raise DatasetFormatError(self.path, f"{UNNAMED!r} is kept for rows that name "
                                         "no annotator", record=record, field="annotator")
            if not self.unnamed_are_people:
                repeat = (pair.pair_id, annotator, aspect, label)
                if repeat in self.seen:
                    self.repeats += 1
                    continue
                self.seen.add(repeat)
            if annotator is None:
                prefix = "annotator " if self.unnamed_are_people else f"{UNNAMED} "
                annotator = prefix + str(1 + sum(1 for lab in known.labels if lab.aspect
                                                 == aspect and lab.annotator.startswith(prefix)))
            if (annotator, aspect) in taken:
                raise DatasetFormatError(
                    self.path, f"{annotator!r} already labelled pair {pair.pair_id!r} on "
                    f"{aspect!r} with another label", record=record, field="annotator")
            taken.add((annotator, aspect))
            known.labels.append(LabelRecord(annotator, aspect, label, note))

    def _person(self, annotator: str | None) -> str | None:
        """The stored spelling of ``annotator``: the first one this file gave that person
        (:func:`annotator_key`); None for a name of blanks or invisible characters only."""
        if annotator is None:
            return None
        key = annotator_key(annotator)
        if not key:
            return None
        return self.spelling.setdefault(key, annotator.strip())

    def parsed(self, fmt: str) -> ParsedDataset:
        if not self.pairs:              # a header alone, an empty list: a dataset of nothing
            raise DatasetFormatError(self.path, "no labelled pair in the file (nothing under "
                                     "the header, or an empty list); nothing imported")
        out = ParsedDataset(kind="labels", format=fmt)
        out.label_pairs = list(self.pairs.values())
        labels = [lab for p in out.label_pairs for lab in p.labels]
        unnamed = sum(1 for lab in labels if lab.annotator.startswith(UNNAMED))
        out.counts = {"pairs": len(out.label_pairs), "labels": len(labels),
                      "annotators": len({lab.annotator for lab in labels
                                         if not lab.annotator.startswith(UNNAMED)}),
                      "aspects": len({lab.aspect for lab in labels}),
                      "domains": len({p.domain for p in out.label_pairs if p.domain})}
        if unnamed:
            out.counts["unnamed_labels"] = unnamed
            out.warnings.append(f"{unnamed} label(s) name no annotator: each counts in its "
                                "pair's mean label, none as an annotator (the human ceiling "
                                "rests on pairs with two named annotators)")
        if self.repeats:
            out.counts["repeats_dropped"] = self.repeats
            out.warnings.append(f"{self.repeats} repeated row(s) dropped (same pair, "
                                "annotator, aspect and label as an earlier row)")
        out.description = (f"{len(out.label_pairs)} answer pairs, {len(labels)} human labels")
        empty = sum(1 for p in out.label_pairs if not p.answer_a.strip() or not p.answer_b.strip())
        if empty:
            out.warnings.append(f"{empty} pair(s) with an empty answer (kept: a system that "
                                "said nothing is judged as such)")
        return out


# --------------------------------------------------------------------------- readers

def parse_ragchecker(path: Path, steps: StepCount | None = None) -> ParsedDataset:
    rows = load_json(path, list, "a list of labelled pairs (RAGChecker meta-evaluation)")
    pairs = _Pairs(path, unnamed_are_people=True)
    for index, obj in enumerate(rows):
        if steps and index % 100 == 0:
            steps(index, len(rows), "pairs")
        if not isinstance(obj, dict):
            raise DatasetFormatError(path, f"expected an object, got {type(obj).__name__}",
                                     record=index)
        if obj.get("instance_id") is None:
            raise DatasetFormatError(path, "missing", record=index, field="instance_id")
        answers = []
        for side in ("model1", "model2"):
            model = obj.get(side)
            if not isinstance(model, dict):
                raise DatasetFormatError(path, "expected an object {model_name, response}",
                                         record=index, field=side)
            # an empty answer is a system that said nothing: a fact to judge, kept (and counted)
            answers.append((require_str(path, f"{index} {side}", model, "response",
                                        allow_empty=True),
                            _optional_str(path, index, model, "model_name")))
        dataset = _optional_str(path, index, obj, "dataset")
        pair = PairRecord(
            pair_id=str(obj["instance_id"]), query=require_str(path, index, obj, "query"),
            answer_a=answers[0][0], answer_b=answers[1][0],
            reference=_optional_str(path, index, obj, "gt_answer"),
            domain=dataset.rsplit("/", 1)[-1] if dataset else None,
            metadata={"dataset": dataset, "query_id": _optional_str(path, index, obj, "query_id"),
                      "model_a": answers[0][1], "model_b": answers[1][1]})
        labels = []
        for aspect in ASPECTS:
            key = f"{aspect}_label"
            if key not in obj:
                raise DatasetFormatError(path, "missing", record=index, field=key)
            labels.append((None, aspect, parse_label(path, index, obj[key], key), None))
        pairs.add(index, pair, labels)
    if steps:
        steps(len(rows), len(rows), "done")
    return pairs.parsed(RAGCHECKER_FORMAT)


def _plain_rows(path: Path):
    if path.suffix.lower() == ".jsonl":
        for lineno, obj in iter_jsonl(path, unique_keys=True):
            yield f"at line {lineno}", obj
        return
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    rows = _csv_rows(path, reader)
    header = reader.fieldnames or []
    missing = {"query", "answer_a", "answer_b", "label"} - set(header)
    if missing:
        raise DatasetFormatError(path, f"the header has no {', '.join(sorted(missing))} "
                                       "column", record="header")
    for index, name in enumerate(header):
        if name in header[:index]:
            raise DatasetFormatError(path, f"the column is there twice (columns "
                                     f"{header.index(name) + 1} and {index + 1}): which one "
                                     "counts?", record="header", field=name)
    for obj in rows:
        record = f"at line {reader.line_num}"
        if None in obj:                 # DictReader keeps the cells past the header there
            raise DatasetFormatError(path, f"{len(header) + len(obj[None])} cells, the header "
                                     f"has {len(header)} columns (an unquoted comma?)",
                                     record=record, field=f"column {len(header) + 1}")
        short = [name for name in header if obj[name] is None]
        if short:
            raise DatasetFormatError(path, f"{len(header) - len(short)} cells, the header has "
                                     f"{len(header)} columns (a quote never closed?)",
                                     record=record, field=short[0])
        yield record, obj


def _csv_rows(path: Path, reader: csv.DictReader):
    """The reader's rows, its header read first (``reader.fieldnames`` is set on return); what
    the csv module refuses (a cell over its size limit) is a :class:`DatasetFormatError`."""
    def refused(exc: csv.Error) -> DatasetFormatError:
        return DatasetFormatError(path, f"not readable as CSV ({exc})",
                                  record=f"after line {reader.line_num}")

    try:
        reader.fieldnames
    except csv.Error as exc:
        raise refused(exc) from None

    def rows():
        while True:
            try:
                yield next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise refused(exc) from None
    return rows()


def _checked_columns(path: Path, record: Any, obj: dict, unread: set[str]) -> None:
    """Refuse a column that is a misspelt known one (``annotater``: its cells would be lost
    unseen); collect the other columns nobody reads in ``unread`` (warned once)."""
    for key in obj:
        if key in COLUMNS or key in unread:
            continue
        hint = did_you_mean(str(key), COLUMNS)
        if hint:
            raise DatasetFormatError(path, f"not a column of this layout{hint} (columns: "
                                     f"{', '.join(COLUMNS)})", record=record, field=str(key))
        unread.add(str(key))


def _aspect(path: Path, record: Any, obj: dict) -> str:
    """The row's aspect (``overall`` when it names none), lower case; one that is a misspelt
    known aspect (``Overal``) is refused: it would become an aspect of its own."""
    aspect = " ".join((_optional_str(path, record, obj, "aspect") or "overall").lower().split())
    hint = did_you_mean(aspect, ASPECTS) if aspect not in ASPECTS else ""
    if hint:
        raise DatasetFormatError(path, f"unknown aspect {aspect[:40]!r}{hint} (known: "
                                 f"{', '.join(ASPECTS)}; another name is an aspect of its "
                                 "own)", record=record, field="aspect")
    return aspect


def parse(path: Path, steps: StepCount | None = None) -> ParsedDataset:
    pairs = _Pairs(path)
    unread: set[str] = set()
    for record, obj in _plain_rows(path):
        _checked_columns(path, record, obj, unread)
        query = require_str(path, record, obj, "query")
        a = require_str(path, record, obj, "answer_a", allow_empty=True)
        b = require_str(path, record, obj, "answer_b", allow_empty=True)
        if obj.get("label") is None or obj.get("label") == "":
            raise DatasetFormatError(path, "missing", record=record, field="label")
        label = parse_label(path, record, obj["label"])
        pair_id = _optional_str(path, record, obj, "pair_id") or \
            json.dumps([query, a, b], ensure_ascii=False)
        pair = PairRecord(pair_id, query, a, b,
                          reference=_optional_str(path, record, obj, "reference"),
                          domain=_optional_str(path, record, obj, "domain"))
        aspect = _aspect(path, record, obj)
        pairs.add(record, pair, [(_optional_str(path, record, obj, "annotator"), aspect, label,
                                  _optional_str(path, record, obj, "note"))])
    parsed = pairs.parsed(FORMAT)
    if unread:
        names = ", ".join(name or repr(name) for name in sorted(unread))   # '' of a last comma
        parsed.warnings.append(f"column(s) not read: {names} (the layout's columns: "
                               f"{', '.join(COLUMNS)})")
    other = sorted({lab.aspect for pair in parsed.label_pairs for lab in pair.labels}
                   - set(ASPECTS))
    if other:
        parsed.warnings.append(f"aspect(s) of their own: {', '.join(other)} (beside "
                               f"{', '.join(ASPECTS)})")
    # text-made ids are long; number them in file order instead, skipping any number an
    # explicit pair_id of the same file already uses
    taken = {pair.pair_id for pair in parsed.label_pairs if not pair.pair_id.startswith("[")}
    number = 0
    for pair in parsed.label_pairs:
        if pair.pair_id.startswith("["):
            number += 1
            while f"pair-{number}" in taken:
                number += 1
            pair.pair_id = f"pair-{number}"
    return parsed


def detect(path: Path) -> bool:
    return _is_plain(path)

