"""SQuAD v1.1 / XQuAD JSON -> a MIRAGE-style pool.

Each question's pool is the paragraphs of its article (XQuAD has exactly five per article),
in article order; the paragraph it was asked on is the oracle (``support=1``). A sibling
paragraph that also contains a gold answer string (case-insensitive) is marked supporting
too, with ``support_source='answer-match'``, and the import report counts them. This is
MIRAGE's "top-5 chunks by title" construction (``../shared/docs/METRICS.md`` §1 and the data
README). An article with more than five paragraphs gives each question the window of five
consecutive paragraphs around its own, so every pool has MIRAGE's size.

Every gold answer must be in the paragraph it was asked on (a span of it, as in SQuAD; case
and blanks forgiven): one that is not is refused with the file, the question and the answer.
An ``answer_start`` that does not point at its text is counted and warned (it is not used).

The language comes from the file name (``xquad.de.json`` -> ``de``) or a top-level
``language`` field. A folder imports every SQuAD-shaped ``*.json`` in it as one multilingual
dataset; ids are prefixed with the language (``de/56beb4343aeaaa14008c925b``) because XQuAD
reuses the same ids across its parallel languages.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.datasets.formats.base import (ChunkRecord, DatasetFormatError, ParsedDataset,
                                          PoolRecord, QueryRecord, answers_list,
                                          check_unique, contains_answer, each_file,
                                          folder_files, load_json, read_head, require_str)
from engine.jobs import StepCount

FORMAT = "squad"
POOL_SIZE = 5
_LANG_IN_NAME = re.compile(r"\.([a-z]{2,3}(?:[-_][A-Za-z]{2,4})?)\.json$")


def _looks_like_squad(path: Path) -> bool:
    head = read_head(path)
    return head.lstrip().startswith(b"{") and b'"data"' in head and (
        b'"paragraphs"' in head or b'"title"' in head or b'"version"' in head)


def files(path: Path) -> list[Path]:
    return folder_files(path, "*.json", "no SQuAD-layout *.json files in this folder",
                        _looks_like_squad)


def detect(path: Path) -> bool:
    if path.is_dir():
        return any(_looks_like_squad(p) for p in path.glob("*.json"))
    return path.suffix == ".json" and _looks_like_squad(path)


def default_name(path: Path) -> str:
    return path.name if path.is_dir() else path.name.removesuffix(".json")


def _language_of(path: Path, doc: dict) -> str | None:
    lang = doc.get("language") if isinstance(doc, dict) else None
    if isinstance(lang, str) and lang.strip():
        return lang.strip()
    match = _LANG_IN_NAME.search(path.name)
    return match.group(1).lower() if match else None


def parse(path: Path, steps: StepCount | None = None) -> ParsedDataset:
    out = ParsedDataset(kind="qa", format=FORMAT)
    paths = files(path)
    languages: list[str] = []
    for file in each_file(paths, steps):
        lang = _parse_file(file, out)
        languages.append(lang or "?")
    if len(paths) > 1 and len(set(languages)) < len(languages):
        raise DatasetFormatError(path, "two files map to the same language "
                                 f"({', '.join(languages)}); import them separately")
    check_unique(path, [q.query_id for q in out.queries], "question id")
    out.description = f"SQuAD-layout pool from {len(paths)} file(s): {', '.join(languages)}"
    return out


def _parse_file(path: Path, out: ParsedDataset) -> str | None:
    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise DatasetFormatError(path, "expected an object with a 'data' list (SQuAD layout)",
                                 field="data")
    lang = _language_of(path, doc)
    if lang is None:
        out.warnings.append(f"{path.name}: no language in the file name or the file; "
                            "queries are stored without one")
    prefix = f"{lang}/" if lang else f"{path.stem}/"
    derived = skipped = misplaced = 0
    for a_index, article in enumerate(doc["data"]):
        where = f"data[{a_index}]"
        if not isinstance(article, dict) or not isinstance(article.get("paragraphs"), list):
            raise DatasetFormatError(path, "expected an article with a 'paragraphs' list",
                                     record=where, field="paragraphs")
        title = article.get("title") if isinstance(article.get("title"), str) else None
        chunk_ids = []
        contexts = []
        for p_index, para in enumerate(article["paragraphs"]):
            p_where = f"{where}.paragraphs[{p_index}]"
            if not isinstance(para, dict):
                raise DatasetFormatError(path, "expected an object", record=p_where)
            context = require_str(path, p_where, para, "context")
            chunk_id = f"{prefix}{a_index:04d}/{p_index}"
            out.chunks.append(ChunkRecord(chunk_id, context, title=title, language=lang))
            chunk_ids.append(chunk_id)
            contexts.append(context)
        for p_index, para in enumerate(article["paragraphs"]):
            qas = para.get("qas", [])
            if not isinstance(qas, list):
                raise DatasetFormatError(path, "expected a list",
                                         record=f"{where}.paragraphs[{p_index}]", field="qas")
            lo = max(0, min(p_index - POOL_SIZE // 2, len(chunk_ids) - POOL_SIZE))
            window = range(lo, min(len(chunk_ids), lo + POOL_SIZE))
            for q_index, qa in enumerate(qas):
                q_where = f"{where}.paragraphs[{p_index}].qas[{q_index}]"
                if not isinstance(qa, dict):
                    raise DatasetFormatError(path, "expected an object", record=q_where)
                qid = require_str(path, q_where, qa, "id")
                question = require_str(path, f"{q_where} (id {qid})", qa, "question")
                raw = qa.get("answers")
                if raw is None:
                    raise DatasetFormatError(path, "missing", record=f"{q_where} (id {qid})",
                                             field="answers")
                answers = _answer_texts(path, f"{q_where} (id {qid})", raw)
                misplaced += _check_in_passage(path, f"{q_where} (id {qid})", raw,
                                               contexts[p_index])
                if not answers:
                    skipped += 1  # SQuAD 2.0 unanswerable: nothing to score against
                    continue
                query_id = prefix + qid
                out.queries.append(QueryRecord(
                    query_id, question, answers, language=lang, source=title,
                    metadata={"parallel_id": qid, "file": path.name}))
                for position, c_index in enumerate(window):
                    own = c_index == p_index
                    match = not own and contains_answer(contexts[c_index], answers)
                    derived += match
                    out.pool.append(PoolRecord(
                        query_id, chunk_ids[c_index], position, int(own or match),
                        is_oracle=own, support_source="label" if own else (
                            "answer-match" if match else "label")))
        out.counts["articles"] = out.counts.get("articles", 0) + 1
    if derived:
        out.warnings.append(
            f"{path.name}: {derived} sibling paragraph(s) contain a gold answer string and are "
            "marked supporting (support_source='answer-match')")
    if skipped:
        out.warnings.append(f"{path.name}: {skipped} question(s) without answers were skipped")
    if misplaced:
        out.warnings.append(f"{path.name}: {misplaced} answer(s) whose answer_start does not "
                            "point at their text (the text is elsewhere in the passage; the "
                            "offset is not used)")
        out.counts["answer_start_off"] = out.counts.get("answer_start_off", 0) + misplaced
    out.counts["answer_match_support"] = out.counts.get("answer_match_support", 0) + derived
    return lang


def _check_in_passage(path: Path, where: str, raw, context: str) -> int:
    """Refuse a gold answer that is nowhere in the paragraph it was asked on (SQuAD's answers
    are spans of it: another text is a mistake of the file, and would be scored as gold); the
    number of answers found but not at their ``answer_start`` (warned, not refused: the
    offset is not used). Case and runs of blanks are forgiven; every real XQuAD answer is at
    its offset exactly."""
    listed = isinstance(raw, list)
    folded = None
    off = 0
    for i, ans in enumerate(raw if listed else [raw]):
        key = f"answers[{i}].text" if isinstance(ans, dict) else \
            f"answers[{i}]" if listed else "answers"
        texts = ans.get("text") if isinstance(ans, dict) else ans
        for text in texts if isinstance(texts, list) else [texts]:
            text = str(text)
            if not text.strip():
                continue
            if text not in context:
                folded = folded if folded is not None else " ".join(context.casefold().split())
                if " ".join(text.casefold().split()) not in folded:
                    raise DatasetFormatError(
                        path, f"the answer {text[:40]!r} is not in the paragraph it was asked "
                        "on", record=where, field=key)
            start = ans.get("answer_start") if isinstance(ans, dict) else None
            if isinstance(start, int) and not isinstance(start, bool) and \
                    context[start:start + len(text)] != text:
                off += 1
    return off


def _answer_texts(path: Path, where: str, raw) -> list[str]:
    if isinstance(raw, list) and all(isinstance(a, dict) for a in raw):
        texts = []
        for i, ans in enumerate(raw):
            if "text" not in ans:
                raise DatasetFormatError(path, f"answers[{i}] has no 'text'", record=where,
                                         field="answers")
            texts.extend(answers_list(path, where, ans["text"], key=f"answers[{i}].text"))
    else:
        texts = answers_list(path, where, raw, key="answers")
    seen: list[str] = []
    for t in texts:
        if t.strip() and t not in seen:
            seen.append(t)
    return seen
