"""Wikipedia lead summaries, a distractor collection: ``summaries_{lang}-{region}.json`` files
holding ``{key: {title, extract, description, topic}}``; a file, or a folder of them.

The dataset is a *collection* (chunks only, no queries), to attach to a dataset and grow its
retrieval pool. A chunk's text follows MIRAGE's chunk style: the short description, a newline,
then the extract (the extract alone when there is no description). The language comes from
the file name (``summaries_en-us.json`` -> ``en``); the chunk id is ``{lang}/{title}``, the
topic goes into the chunk's metadata. Entries with an empty extract are skipped and counted.

Several keys can lead to the same article (``"San Pablo"`` and ``"Pablo de Tarso"`` are both
*Pablo de Tarso*, with the same text): such an entry is stored once, under its article title,
with the other keys kept in the chunk's ``aliases`` metadata and counted in a warning. Two
different texts under one title (not seen in the shipped files) keep both: the second one's
id is ``{lang}/{key}``.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.datasets.formats.base import (ChunkRecord, DatasetFormatError, ParsedDataset,
                                          each_file, folder_files, load_json,
                                          read_head)
from engine.jobs import StepCount

FORMAT = "wiki-summaries"
_NAME = re.compile(r"^summaries_(?P<lang>[a-z]{2,3})(?:[-_](?P<region>[A-Za-z]{2,4}))?\.json$")


def _language_of(path: Path) -> str | None:
    match = _NAME.match(path.name)
    return match.group("lang") if match else None


def _looks_like_wiki(path: Path) -> bool:
    if _NAME.match(path.name):
        return True
    if path.suffix != ".json":
        return False
    head = read_head(path)
    return head.lstrip().startswith(b"{") and b'"extract"' in head and b'"title"' in head


def files(path: Path) -> list[Path]:
    return folder_files(path, "summaries_*.json",
                        "no summaries_{lang}-{region}.json files in this folder")


def detect(path: Path) -> bool:
    if path.is_dir():
        return any(p.is_file() and _NAME.match(p.name) for p in path.glob("summaries_*.json"))
    return path.is_file() and _looks_like_wiki(path)


def default_name(path: Path) -> str:
    if path.is_dir():
        return "wiki"
    lang = _language_of(path)
    return f"wiki-{lang}" if lang else path.stem


def chunk_text(description: str | None, extract: str) -> str:
    description = (description or "").strip()
    return f"{description}\n{extract}" if description else extract


def parse(path: Path, steps: StepCount | None = None) -> ParsedDataset:
    out = ParsedDataset(kind="collection", format=FORMAT)
    paths = files(path)
    per_language: dict[str, int] = {}
    for file in each_file(paths, steps):
        lang = _language_of(file)
        if lang is None:
            out.warnings.append(f"{file.name}: no language in the file name "
                                "(summaries_{lang}-{region}.json): chunks are stored without one")
        n = _parse_file(file, out, lang)
        per_language[lang or "?"] = per_language.get(lang or "?", 0) + n
    for lang, n in per_language.items():
        out.counts[f"chunks_{lang}"] = n
    out.description = "Wikipedia summaries: " + ", ".join(
        f"{lang} {n}" for lang, n in per_language.items())
    return out


def _parse_file(path: Path, out: ParsedDataset, lang: str | None) -> int:
    doc = load_json(path, dict, "an object {title: {title, extract, description, topic}}")
    prefix = f"{lang}/" if lang else f"{path.stem}/"
    by_id: dict[str, ChunkRecord] = {}
    empty = aliases = 0
    for key, entry in doc.items():
        where = repr(key)
        if not isinstance(entry, dict):
            raise DatasetFormatError(path, f"expected an object, got {type(entry).__name__}",
                                     record=where)
        fields = {}
        for name in ("title", "extract", "description", "topic"):
            value = entry.get(name)
            if value is not None and not isinstance(value, str):
                raise DatasetFormatError(path, f"expected a string, got {type(value).__name__}",
                                         record=where, field=name)
            fields[name] = value
        extract = (fields["extract"] or "").strip()
        if not extract:
            empty += 1
            continue
        title = (fields["title"] or "").strip() or key
        text = chunk_text(fields["description"], extract)
        chunk_id = prefix + title
        known = by_id.get(chunk_id)
        if known is not None:
            if known.text == text:
                aliases += 1
                known.metadata.setdefault("aliases", []).append(key)
                continue
            chunk_id = prefix + key
            if chunk_id in by_id:
                raise DatasetFormatError(path, f"chunk id {chunk_id!r} is used twice",
                                         record=where, field="title")
        metadata: dict = {"topic": fields["topic"]} if fields["topic"] else {}
        if key != title:
            metadata["key"] = key
        chunk = ChunkRecord(chunk_id, text, title=title, language=lang, metadata=metadata)
        by_id[chunk_id] = chunk
        out.chunks.append(chunk)
    if empty:
        out.warnings.append(f"{path.name}: {empty} entries with an empty extract were skipped")
    if aliases:
        out.warnings.append(
            f"{path.name}: {aliases} entries lead to an article already imported (same title "
            "and text) and are stored once, their keys kept as the chunk's aliases")
    out.counts["skipped_empty"] = out.counts.get("skipped_empty", 0) + empty
    out.counts["aliases_merged"] = out.counts.get("aliases_merged", 0) + aliases
    if not by_id:
        raise DatasetFormatError(path, "no entries with text")
    return len(by_id)
