"""Bad input is refused with a message naming the file, the record and the field, and nothing
of the failed import is written: the store's rows are exactly what they were, and a dataset
imported earlier is intact."""

import codecs
import json
import os
import re

import pytest

from engine.datasets.catalog import get_dataset, get_query
from engine.datasets.formats.base import SNIFF_BYTES, DatasetFormatError, ParsedDataset, PoolRecord
from engine.datasets.importing import import_path, write_dataset
from testkit.mirage import mirage_pool, mirage_records, write_mirage, write_mirage_parquet
from testkit.paths import SHARED_DATA


@pytest.fixture
def existing(store, counts):
    """A store that already holds a dataset; yields a check that it is untouched."""
    import_path(store, SHARED_DATA / "xquad" / "xquad.en.json")
    before = counts(store)

    def unchanged():
        assert counts(store) == before
        summary = get_dataset(store, "xquad.en")
        assert (summary.version, summary.queries, summary.chunks) == (1, 1190, 240)
        assert len(get_query(store, "xquad.en", "en/56beb4343aeaaa14008c925b").pool) == 5
        assert not store.conn.in_transaction

    return unchanged


def refused(store, path, *parts, **kwargs) -> DatasetFormatError:
    """Import path, expect a DatasetFormatError whose message contains every part."""
    with pytest.raises(DatasetFormatError) as info:
        import_path(store, path, **kwargs)
    message = str(info.value)
    for part in parts:
        assert part in message, f"{part!r} not in {message!r}"
    return info.value


def _write_json(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=1), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- JSON structure

def test_truncated_json(store, existing, tmp_path):
    folder = write_mirage(tmp_path / "m", with_pool=False)
    data = (folder / "dataset.json").read_bytes()
    (folder / "dataset.json").write_bytes(data[: len(data) // 2])
    err = refused(store, folder, "dataset.json", "truncated JSON")
    assert err.path.endswith("dataset.json")
    existing()


def test_truncated_doc_pool(store, existing, tmp_path):
    folder = write_mirage(tmp_path / "m")
    data = (folder / "doc_pool.json").read_bytes()
    (folder / "doc_pool.json").write_bytes(data[:-40])
    refused(store, folder, "doc_pool.json", "truncated JSON")
    existing()


def test_record_without_a_query(store, existing, tmp_path):
    records = mirage_records()
    del records[2]["query"]
    qid = records[2]["query_id"]
    refused(store, write_mirage(tmp_path / "m", records),
            "dataset.json: record 2 (query_id " + qid + "), field 'query': missing")
    existing()


def test_record_without_a_query_lfrqa(store, existing, tmp_path):
    path = tmp_path / "annotations_fiqa_with_citation.jsonl"
    path.write_text(json.dumps({"qid": 1, "question": "q?", "answer": "a"}) + "\n"
                    + json.dumps({"qid": 2, "answer": "a"}) + "\n")
    refused(store, path, "annotations_fiqa_with_citation.jsonl: record at line 2 (qid 2), "
            "field 'question': missing")
    existing()


@pytest.mark.parametrize("answer, kind", [({"text": "journalist"}, "dict"), (None, None),
                                          (["ok", {"x": 1}], "item 1 is dict")])
def test_answer_not_a_list_or_string(store, existing, tmp_path, answer, kind):
    records = mirage_records()
    records[1]["answer"] = answer
    qid = records[1]["query_id"]
    err = refused(store, write_mirage(tmp_path / "m", records),
                  f"dataset.json: record 1 (query_id {qid}), field 'answer'",
                  kind or "missing")
    assert err.field == "answer" and err.record == f"1 (query_id {qid})"
    existing()


def test_answer_not_a_list_or_string_parquet(store, existing, tmp_path):
    """A parquet column is typed: an 'answer' column of structs is refused at its first row."""
    records = mirage_records()
    for rec in records:
        rec["answer"] = {"text": rec["answer"][0], "aliases": rec["answer"][1:]}
    qid = records[0]["query_id"]
    refused(store, write_mirage_parquet(tmp_path / "m.parquet", records),
            f"m.parquet: record row 0 (query_id {qid}), field 'answer'",
            "expected a string or a list of strings, got dict")
    existing()


def test_squad_paragraph_without_context(store, existing, tmp_path):
    doc = json.loads((SHARED_DATA / "xquad" / "xquad.en.json").read_text(encoding="utf-8"))
    doc["data"] = doc["data"][:2]
    del doc["data"][1]["paragraphs"][3]["context"]
    path = _write_json(tmp_path / "xquad.xx.json", doc)
    err = refused(store, path, "xquad.xx.json: record data[1].paragraphs[3], field 'context': "
                  "missing")
    assert err.field == "context"
    existing()


# --------------------------------------------------------------------------- duplicate ids

def test_duplicate_query_ids_mirage(store, existing, tmp_path):
    records = mirage_records()
    records[3]["query_id"] = records[0]["query_id"]
    qid = records[0]["query_id"]
    refused(store, write_mirage(tmp_path / "m", records, with_pool=False),
            f"dataset.json: record 3 (query_id {qid}), field 'query_id': duplicate query_id",
            "first at record 0")
    existing()


def test_duplicate_query_ids_parquet(store, existing, tmp_path):
    records = mirage_records()
    records[2]["query_id"] = records[1]["query_id"]
    refused(store, write_mirage_parquet(tmp_path / "m.parquet", records),
            "m.parquet: record row 2 (query_id", "field 'query_id': duplicate")
    existing()


def test_duplicate_qids_lfrqa(store, existing, tmp_path):
    path = tmp_path / "annotations_science_with_citation.jsonl"
    rows = [{"qid": q, "question": "q?", "answer": "a"} for q in ("a", "b", "a")]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    refused(store, path, "annotations_science_with_citation.jsonl: record at line 3 (qid a), "
            "field 'qid': duplicate qid 'a' (first at line 1)")
    existing()


def test_duplicate_ids_squad(store, existing, tmp_path):
    doc = json.loads((SHARED_DATA / "xquad" / "xquad.en.json").read_text(encoding="utf-8"))
    doc["data"] = doc["data"][:1]
    qas = doc["data"][0]["paragraphs"][0]["qas"]
    qas[1]["id"] = qas[0]["id"]
    refused(store, _write_json(tmp_path / "xquad.xx.json", doc), "duplicate question id",
            "xx/" + qas[0]["id"], "record 1")
    existing()


def test_duplicate_doc_ids_beir(store, existing, tmp_path):
    folder = _beir(tmp_path / "b")
    with (folder / "corpus.jsonl").open("a") as fh:
        fh.write(json.dumps({"_id": "d1", "title": "", "text": "again"}) + "\n")
    refused(store, folder, "corpus.jsonl: record at line 4 (id d1), field '_id': duplicate "
            "document id 'd1' (first at line 1)")
    existing()


# --------------------------------------------------------------------------- broken pools

def _oracle_off_pool(i: int, text: str):
    """The small MIRAGE set with query i's oracle pointing at a chunk (text) in no pool."""
    records = mirage_records()
    pool, oracle = mirage_pool(records)
    qid = records[i]["query_id"]
    oracle[qid] = dict(oracle[qid], doc_chunk=text)
    return records, pool, oracle, qid


def test_mirage_oracle_not_in_pool(store, existing, tmp_path):
    records, pool, oracle, qid = _oracle_off_pool(1, "A chunk that is in no pool.")
    err = refused(store, write_mirage(tmp_path / "m", records, pool=pool, oracle=oracle),
                  f"oracle.json: record '{qid}', field 'doc_chunk'",
                  "a pool that points at a missing chunk")
    assert err.path.endswith("oracle.json")
    existing()


def test_mirage_oracle_for_an_unknown_query(store, existing, tmp_path):
    records = mirage_records()
    pool, oracle = mirage_pool(records)
    oracle["no-such-query"] = dict(oracle[records[0]["query_id"]], mapped_id="no-such-query")
    refused(store, write_mirage(tmp_path / "m", records, pool=pool, oracle=oracle),
            "oracle.json: record 'no-such-query'", "is not in dataset.json")
    existing()


def test_mirage_oracle_not_in_pool_parquet(store, existing, tmp_path):
    records, pool, oracle, qid = _oracle_off_pool(3, "Nowhere in the pool.")
    refused(store, write_mirage_parquet(tmp_path / "m.parquet", records, pool, oracle),
            f"m.parquet: record row 3 (query_id {qid}), field 'oracle.doc_chunk'",
            "a pool that points at a missing chunk")
    existing()


def test_mirage_pool_entry_of_another_query(store, existing, tmp_path):
    records = mirage_records()
    pool, oracle = mirage_pool(records)
    pool[7]["mapped_id"] = records[0]["query_id"]  # index 7 belongs to query 1
    refused(store, write_mirage(tmp_path / "m", records, pool=pool, oracle=oracle),
            "doc_pool.json: record 7, field 'mapped_id'",
            f"this entry is in the pool of query {records[1]['query_id']!r}")
    existing()


def test_mirage_pool_of_the_wrong_size(store, existing, tmp_path):
    records = mirage_records()
    pool, oracle = mirage_pool(records)
    refused(store, write_mirage(tmp_path / "m", records, pool=pool[:-1], oracle=oracle),
            "doc_pool.json: has 19 entries; expected 5 per query")
    existing()


def test_mirage_oracle_without_pool(store, existing, tmp_path):
    folder = write_mirage(tmp_path / "m")
    (folder / "doc_pool.json").unlink()
    refused(store, folder, "oracle.json", "doc_pool.json is not")
    existing()


def _beir(folder):
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "\n".join(json.dumps({"_id": f"d{i}", "title": "t", "text": f"Document number {i}."})
                  for i in (1, 2, 3)) + "\n")
    (folder / "queries.jsonl").write_text(
        "\n".join(json.dumps({"_id": f"q{i}", "text": f"Question {i}?"}) for i in (1, 2)))
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n"
                                               "q2\td2\t1\n")
    return folder


def test_beir_qrels_to_a_missing_doc(store, existing, tmp_path):
    folder = _beir(tmp_path / "b")
    with (folder / "qrels" / "test.tsv").open("a") as fh:
        fh.write("q2\td9\t1\n")
    err = refused(store, folder, "test.tsv: record at line 4, field 'corpus-id'",
                  "'d9' is not in corpus.jsonl", "a pool that points at a missing chunk")
    assert err.path.endswith("qrels/test.tsv")
    existing()


def test_beir_qrels_to_a_missing_query(store, existing, tmp_path):
    folder = _beir(tmp_path / "b")
    (folder / "qrels" / "dev.tsv").write_text("q1\td3\t1\nq7\td3\t1\n")
    refused(store, folder, "dev.tsv: record at line 2, field 'query-id'",
            "'q7' is not in queries.jsonl")
    existing()


def test_beir_bad_score(store, existing, tmp_path):
    folder = _beir(tmp_path / "b")
    (folder / "qrels" / "dev.tsv").write_text("q1\td3\thigh\n")
    refused(store, folder, "dev.tsv: record at line 1, field 'score'", "expected a number")
    existing()


# --------------------------------------------------------------------------- encodings, sizes

def test_latin1_bytes(store, existing, tmp_path):
    path = tmp_path / "annotations_fiqa_with_citation.jsonl"
    path.write_bytes(json.dumps({"qid": 1, "question": "Qué pasó?", "answer": "Sí"},
                                ensure_ascii=False).encode("latin-1"))
    err = refused(store, path, "annotations_fiqa_with_citation.jsonl", "not UTF-8 text",
                  "byte 0xe9", "re-save the file as UTF-8")
    assert err.record is None
    existing()


def test_latin1_bytes_after_the_sniff_window(store, existing, tmp_path):
    """A bad byte past the first 64 KiB is still caught, by the full decode."""
    records = mirage_records(1) * 1
    records[0]["query"] = "x" * (SNIFF_BYTES + 100) + "é"
    path = tmp_path / "m" / "dataset.json"
    path.parent.mkdir()
    path.write_bytes(json.dumps(records, ensure_ascii=False).encode("latin-1"))
    refused(store, path, "dataset.json", "not UTF-8 text", "byte 0xe9")
    existing()


def test_utf16_with_bom(store, existing, tmp_path):
    path = tmp_path / "m" / "dataset.json"
    path.parent.mkdir()
    path.write_bytes(codecs.BOM_UTF16_LE
                     + json.dumps(mirage_records()).encode("utf-16-le"))
    refused(store, path, "dataset.json", "UTF-16")
    existing()


def test_utf8_with_bom_is_fine(store, tmp_path):
    path = tmp_path / "m" / "dataset.json"
    path.parent.mkdir()
    path.write_bytes(codecs.BOM_UTF8 + json.dumps(mirage_records()).encode("utf-8"))
    assert import_path(store, path).counts["queries"] == 4


@pytest.mark.parametrize("name, fmt", [
    ("m/dataset.json", None), ("annotations_fiqa_with_citation.jsonl", None),
    ("summaries_en-us.json", None), ("xquad.xx.json", "squad"), ("x.parquet", "mirage-parquet"),
])
def test_empty_file(store, existing, tmp_path, name, fmt):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    refused(store, path, path.name, "the file is empty", format=fmt)
    existing()


def test_whitespace_only_file(store, existing, tmp_path):
    path = tmp_path / "summaries_en-us.json"
    path.write_text("  \n\n ")
    refused(store, path, "summaries_en-us.json", "only whitespace")
    existing()


def test_100mb_garbage_is_refused_from_its_first_64k(store, existing, tmp_path, monkeypatch):
    """Random bytes: refused as binary by the sniff of the first 64 KiB, before the rest of
    the file is read or decoded (only the content hash reads it all)."""
    path = tmp_path / "garbage" / "dataset.json"
    path.parent.mkdir()
    block = os.urandom(1 << 20)
    with path.open("wb") as fh:
        for _ in range(100):
            fh.write(block)
    assert path.stat().st_size == 100 * (1 << 20)

    # record what the parse reads from the file: it must stop at the 64 KiB sniff
    import engine.datasets.formats.base as base

    reads = []
    real_check = base._check_utf8

    def spy(p, head, partial):
        reads.append(len(head))
        return real_check(p, head, partial)

    monkeypatch.setattr(base, "_check_utf8", spy)
    err = refused(store, path.parent, "dataset.json")
    assert "binary data" in err.reason or "not UTF-8 text" in err.reason
    assert reads == [SNIFF_BYTES]
    offset = int(re.search(r"offset (\d+)", err.reason).group(1))
    assert offset < SNIFF_BYTES
    existing()
    path.unlink()  # pytest keeps recent tmp dirs: do not leave 100 MB behind


def test_garbage_parquet(store, existing, tmp_path):
    path = tmp_path / "x.parquet"
    path.write_bytes(os.urandom(4096))
    refused(store, path, "x.parquet", "not a parquet file", format="mirage-parquet")
    existing()


def test_truncated_parquet(store, existing, tmp_path):
    path = write_mirage_parquet(tmp_path / "m.parquet")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] + b"PAR1")  # the magic, but not a parquet inside
    refused(store, path, "m.parquet", "not a readable parquet file", format="mirage-parquet")
    existing()


def test_parquet_without_the_mirage_columns(store, existing, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "other.parquet"
    pq.write_table(pa.Table.from_pylist([{"a": 1}]), path)
    refused(store, path, "cannot tell this file's format")
    refused(store, path, "other.parquet", "not the MIRAGE parquet layout",
            format="mirage-parquet")
    existing()


# --------------------------------------------------------------------------- JSON lines

def test_non_json_line_in_jsonl(store, existing, tmp_path):
    path = tmp_path / "annotations_fiqa_with_citation.jsonl"
    good = json.dumps({"qid": 1, "question": "q?", "answer": "a"})
    path.write_text(f"{good}\n\nthis is not json\n{good}\n")
    refused(store, path, "annotations_fiqa_with_citation.jsonl: record at line 3",
            "invalid JSON")
    existing()


def test_non_object_line_in_beir_corpus(store, existing, tmp_path):
    folder = _beir(tmp_path / "b")
    with (folder / "corpus.jsonl").open("a") as fh:
        fh.write('["a", "list"]\n')
    refused(store, folder, "corpus.jsonl: record at line 4", "expected a JSON object")
    existing()


def test_wiki_extract_not_a_string(store, existing, tmp_path):
    path = _write_json(tmp_path / "summaries_en-us.json", {
        "A": {"title": "A", "extract": "Fine.", "description": "", "topic": "t"},
        "B": {"title": "B", "extract": ["not", "text"], "description": "", "topic": "t"}})
    refused(store, path, "summaries_en-us.json: record 'B', field 'extract'",
            "expected a string, got list")
    existing()


# --------------------------------------------------------------------------- atomicity

def test_write_failing_midway_leaves_nothing(store, existing, monkeypatch):
    """The pool insert fails after the chunks and queries of the new dataset are written (a
    parsed dataset whose last pool row names an unknown query): all of it is rolled back."""
    import engine.datasets.formats.squad as squad

    real_parse = squad.parse

    def broken_parse(path, steps=None):
        parsed = real_parse(path, steps)
        parsed.pool.append(PoolRecord("no-such-query", parsed.chunks[0].chunk_id, 0, 1))
        return parsed

    monkeypatch.setattr(squad, "parse", broken_parse)
    with pytest.raises(KeyError):
        import_path(store, SHARED_DATA / "xquad" / "xquad.de.json")
    assert not store.query("SELECT 1 FROM datasets WHERE name = 'xquad.de'")
    assert not store.query("SELECT 1 FROM queries WHERE language = 'de'")
    assert not store.query("SELECT 1 FROM chunks WHERE language = 'de'")
    existing()

    # the store is still usable: the same import, unbroken, goes through as version 1
    monkeypatch.setattr(squad, "parse", real_parse)
    assert import_path(store, SHARED_DATA / "xquad" / "xquad.de.json").label == "xquad.de@1"


def test_write_dataset_rolls_back_a_bad_chunk(store, existing, tmp_path):
    """A constraint failing in the chunk insert (two chunks with one id) writes nothing."""
    from engine.datasets.formats.base import ChunkRecord

    parsed = ParsedDataset(kind="collection", format="wiki-summaries",
                           chunks=[ChunkRecord("x", "one"), ChunkRecord("x", "two")])
    import sqlite3

    with pytest.raises(sqlite3.IntegrityError):
        write_dataset(store, parsed, name="dup", content_hash="0" * 64, path=tmp_path,
                      nbytes=0, seconds=0.0)
    existing()
