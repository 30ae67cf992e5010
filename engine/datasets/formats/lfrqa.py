"""LFRQA long-form reference answers (RAG-QA Arena): JSON lines of
``{qid, question, answer, citation_numbers, faithful_answer_w_citation, gold_doc_ids}``.

A file, or a folder of ``annotations_{domain}_with_citation.jsonl`` files (one per domain:
science, fiqa, lifestyle, ...). The domain, taken from the file name, is each query's source.
A folder's query ids are prefixed with the domain (``fiqa/1093``) so that they stay unique
across its files whatever the files hold; a single file keeps its qids as they are.

LFRQA answers are long-form, so a query has no short gold answers (``answers=[]``): the plain
answer is its ``reference_answer`` and the cited form with its citation numbers and gold
document ids is ``reference_citations``. A few records have an empty ``answer`` (four in the
shipped lifestyle file): their reference answer is the cited form with its ``[n]`` marks
removed, flagged in the query's metadata and counted in a warning. The passages the citations
point at are not part of these files, so an import has queries and no chunks (and says so in
a warning).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from engine.datasets.formats.base import (DatasetFormatError, ParsedDataset, QueryRecord,
                                          each_file, folder_files, iter_jsonl, read_head,
                                          require_str)
from engine.jobs import StepCount

FORMAT = "lfrqa"
LANGUAGE = "en"
_NAME = re.compile(r"^annotations_(?P<domain>.+?)_with_citation\.jsonl$")
_CITATION = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")
_KNOWN = ("qid", "question", "answer", "citation_numbers", "faithful_answer_w_citation",
          "gold_doc_ids")


def _domain_of(path: Path) -> str | None:
    match = _NAME.match(path.name)
    return match.group("domain") if match else None


def _looks_like_lfrqa(path: Path) -> bool:
    if _domain_of(path):
        return True
    if path.suffix != ".jsonl":
        return False
    head = read_head(path)
    return head.lstrip().startswith(b"{") and b'"qid"' in head and (
        b'"faithful_answer_w_citation"' in head or b'"gold_doc_ids"' in head)


def files(path: Path) -> list[Path]:
    missing = "no annotations_*_with_citation.jsonl files in this folder (LFRQA layout)"
    if path.is_dir() and not any(path.glob("annotations_*_with_citation.jsonl")):
        return folder_files(path, "*.jsonl", missing, _looks_like_lfrqa)
    return folder_files(path, "annotations_*_with_citation.jsonl", missing)


def detect(path: Path) -> bool:
    if path.is_dir():
        return any(path.glob("annotations_*_with_citation.jsonl"))
    return path.is_file() and _looks_like_lfrqa(path)


def default_name(path: Path) -> str:
    if path.is_dir():
        return path.resolve().name or "lfrqa"
    domain = _domain_of(path)
    return f"lfrqa-{domain}" if domain else path.stem


def parse(path: Path, steps: StepCount | None = None) -> ParsedDataset:
    out = ParsedDataset(kind="qa", format=FORMAT)
    paths = files(path)
    folder = path.is_dir()
    domains: dict[str, int] = {}
    for file in each_file(paths, steps):
        domain = _domain_of(file)
        if domain is None:
            out.warnings.append(f"{file.name}: the domain is not in the file name "
                                "(annotations_{domain}_with_citation.jsonl); using the file's "
                                "name")
            domain = file.stem if folder else None
        if folder and domain in domains:
            raise DatasetFormatError(file, f"a second file for domain {domain!r}")
        prefix = f"{domain}/" if folder else ""
        domains[domain or "?"] = _parse_file(file, out, domain, prefix)
        out.counts[f"queries_{domain or 'unknown'}"] = domains[domain or "?"]
    out.warnings.append("LFRQA ships reference answers only: the passages its citations point at "
                        "(gold_doc_ids) are not included, so this dataset has no chunks")
    out.description = ("LFRQA long-form references: " + ", ".join(
        f"{d} {n}" for d, n in domains.items()))
    return out


def _parse_file(path: Path, out: ParsedDataset, domain: str | None, prefix: str) -> int:
    seen: dict[str, int] = {}
    count = empty_answers = 0
    for lineno, obj in iter_jsonl(path):
        where = f"at line {lineno}"
        qid = require_str(path, where, obj, "qid")
        where = f"at line {lineno} (qid {qid})"
        if qid in seen:
            raise DatasetFormatError(path, f"duplicate qid {qid!r} (first at line {seen[qid]})",
                                     record=where, field="qid")
        seen[qid] = lineno
        question = require_str(path, where, obj, "question")
        answer = require_str(path, where, obj, "answer", allow_empty=True)
        cited = obj.get("faithful_answer_w_citation")
        if cited is not None and not isinstance(cited, str):
            raise DatasetFormatError(path, f"expected a string, got {type(cited).__name__}",
                                     record=where, field="faithful_answer_w_citation")
        derived = False
        if not answer.strip():
            if not (cited or "").strip():
                raise DatasetFormatError(path, "empty (and no faithful_answer_w_citation to "
                                         "take it from)", record=where, field="answer")
            answer, derived = strip_citations(cited), True
            empty_answers += 1
        numbers = _list_or_none(path, where, obj, "citation_numbers")
        gold = _list_or_none(path, where, obj, "gold_doc_ids")
        extra = {k: v for k, v in obj.items() if k not in _KNOWN}
        out.queries.append(QueryRecord(
            prefix + qid, question, [], language=LANGUAGE, source=domain,
            reference_answer=answer,
            reference_citations={"answer_with_citation": cited, "citation_numbers": numbers,
                                 "gold_doc_ids": gold},
            metadata={"qid": obj["qid"], "file": path.name, **extra,
                      **({"reference_answer_from": "faithful_answer_w_citation"}
                         if derived else {})}))
        count += 1
    if not count:
        raise DatasetFormatError(path, "no records (only blank lines)")
    if empty_answers:
        out.warnings.append(
            f"{path.name}: {empty_answers} record(s) have an empty 'answer'; their reference "
            "answer is faithful_answer_w_citation with the [n] citation marks removed")
        out.counts["answers_from_citation_text"] = (
            out.counts.get("answers_from_citation_text", 0) + empty_answers)
    return count


def strip_citations(text: str) -> str:
    """The cited answer without its ``[1]``/``[1, 2]`` marks."""
    lines = (_CITATION.sub("", line).rstrip() for line in text.splitlines())
    return "\n".join(lines).strip()


def _list_or_none(path: Path, where: str, obj: dict, key: str) -> list | None:
    value: Any = obj.get(key)
    if value is not None and not isinstance(value, list):
        raise DatasetFormatError(path, f"expected a list, got {type(value).__name__}",
                                 record=where, field=key)
    return value
