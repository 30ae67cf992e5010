"""Each importer on small files written here: MIRAGE (JSON and parquet), BEIR, LFRQA, wiki.
Pools, support labels and oracles round-trip through engine.datasets.catalog.get_query."""

import json

import pytest

from engine.datasets.catalog import get_dataset, get_query
from engine.datasets.formats import detect_format
from engine.datasets.formats.base import DatasetFormatError, text_hash
from engine.datasets.importing import import_path
from testkit.mirage import (SHARED_CHUNK, mirage_pool, mirage_records, write_mirage,
                           write_mirage_parquet)


def _pool_view(detail):
    return [(e.position, e.chunk_id, e.title, e.text, e.language, e.support, e.is_oracle,
             e.support_source) for e in detail.pool]


# --------------------------------------------------------------------------- MIRAGE

def test_mirage_three_files_round_trip(store, tmp_path):
    records = mirage_records()
    pool, _ = mirage_pool(records)
    folder = write_mirage(tmp_path / "mirage-small", records)
    assert detect_format(folder) == "mirage"
    assert detect_format(folder / "dataset.json") == "mirage"

    result = import_path(store, folder)
    assert result.outcome == "imported" and result.label == "mirage-small@1"
    # 20 pool entries, one text shared by two queries: 19 distinct chunks, 20 pool rows
    assert result.counts["queries"] == 4
    assert result.counts["pool_entries_in_file"] == 20
    assert result.counts["distinct_chunks"] == result.counts["chunks"] == 19
    assert result.counts["pool_entries"] == 20
    assert result.counts["oracles"] == 4
    assert any("20 pool entries hold 19 distinct chunk texts" in w for w in result.warnings)

    for i, rec in enumerate(records):
        q = get_query(store, "mirage-small", rec["query_id"])
        assert q.text == rec["query"] and q.answers == rec["answer"]
        assert q.language == "en" and q.source == rec["source"]
        assert q.metadata == {"doc_name": rec["doc_name"], "doc_url": rec["doc_url"],
                              "num_doc_labels": rec["num_doc_labels"]}
        assert [e.position for e in q.pool] == [0, 1, 2, 3, 4]
        assert [e.text for e in q.pool] == [p["doc_chunk"] for p in pool[5 * i:5 * i + 5]]
        assert [e.support for e in q.pool] == [1, 0, 1, 0, 0]
        assert [e.is_oracle for e in q.pool] == [True, False, False, False, False]
        assert {e.support_source for e in q.pool} == {"label"}
        assert all(e.chunk_id == "h:" + text_hash(e.text)[:16] for e in q.pool)
        assert q.pool[1].title == rec["doc_name"]

    # the shared text is one chunk with two pool rows
    shared = store.query("SELECT id FROM chunks WHERE text = ?", (SHARED_CHUNK,))
    assert len(shared) == 1
    assert store.query("SELECT COUNT(*) FROM pool WHERE chunk_rowid = ?",
                       (shared[0]["id"],))[0][0] == 2


def test_mirage_oracle_marks_support(store, tmp_path):
    """An oracle chunk labelled support 0 in the pool is marked supporting, with a warning."""
    records = mirage_records(2)
    pool, oracle = mirage_pool(records)
    pool[0]["support"] = 0
    result = import_path(store, write_mirage(tmp_path / "m", records, pool=pool))
    assert any("oracle chunk(s) had support 0" in w for w in result.warnings)
    q = get_query(store, "m", records[0]["query_id"])
    assert q.pool[0].is_oracle and q.pool[0].support == 1


def test_mirage_parquet_matches_json_form(store, tmp_path):
    records = mirage_records()
    write_mirage(tmp_path / "json-form", records)
    parquet = write_mirage_parquet(tmp_path / "hub" / "data" / "train-00000-of-00001.parquet",
                                   records)
    assert detect_format(parquet) == "mirage-parquet"

    from_json = import_path(store, tmp_path / "json-form")
    from_parquet = import_path(store, parquet)
    assert from_parquet.format == "mirage-parquet"
    assert from_parquet.dataset == "hub"  # a hub shard is named after its repository folder
    for key in ("queries", "chunks", "pool_entries", "pool_entries_in_file", "distinct_chunks",
                "oracles"):
        assert from_parquet.counts[key] == from_json.counts[key], key
    for rec in records:
        a = get_query(store, "json-form", rec["query_id"])
        b = get_query(store, "hub", rec["query_id"])
        assert (a.text, a.answers, a.language, a.source, a.metadata) == \
               (b.text, b.answers, b.language, b.source, b.metadata)
        assert _pool_view(a) == _pool_view(b)
    # the same chunk texts, hence the same vector keys, in both datasets
    hashes = [{r[0] for r in store.query(
        "SELECT content_hash FROM chunks WHERE dataset_id = ?", (d.dataset_id,))}
        for d in (from_json, from_parquet)]
    assert hashes[0] == hashes[1]


def test_mirage_parquet_without_oracle_column(store, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = mirage_records(2)
    pool, _ = mirage_pool(records)
    rows = [{**rec, "doc_pool": {k: [e[k] for e in pool[5 * i:5 * i + 5]]
                                 for k in ("mapped_id", "doc_name", "doc_chunk", "support")}}
            for i, rec in enumerate(records)]
    path = tmp_path / "no-oracle.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    result = import_path(store, path)
    assert result.counts["pool_entries"] == 10
    assert any("no oracle column" in w for w in result.warnings)
    q = get_query(store, "no-oracle", records[0]["query_id"])
    assert not any(e.is_oracle for e in q.pool) and q.pool[0].support == 1


def test_mirage_answer_as_string(store, tmp_path):
    records = mirage_records(1)
    records[0]["answer"] = "journalist"
    write_mirage(tmp_path / "m", records, with_pool=False)
    import_path(store, tmp_path / "m")
    assert get_query(store, "m", records[0]["query_id"]).answers == ["journalist"]


# --------------------------------------------------------------------------- BEIR

def _write_beir(folder, *, header=True):
    corpus = [
        {"_id": "d1", "title": "Photosynthesis", "text": "Photosynthesis is the process by which "
         "green plants use sunlight to synthesize nutrients from carbon dioxide and water."},
        {"_id": "d2", "title": "Chlorophyll", "text": "Chlorophyll is the green pigment found in "
         "plants that absorbs light energy for photosynthesis."},
        {"_id": "d3", "title": "Mitochondria", "text": "The mitochondrion is an organelle that "
         "generates most of the chemical energy needed to power the cell."},
        {"docid": "d4", "title": "Volcano", "text": "A volcano is a rupture in the crust of a "
         "planet that allows hot lava, ash and gases to escape from below the surface."},
        {"_id": "d5", "title": "", "text": "Plate tectonics describes the large-scale motion of "
         "the plates that make up the Earth's lithosphere.", "metadata": {"url": "x"}},
    ]
    queries = [
        {"_id": "q1", "text": "How do plants make food from sunlight?"},
        {"query_id": "q2", "text": "What produces energy in a cell?"},
        {"_id": "q3", "text": "What are volcanoes?"},
        {"_id": "q4", "text": "A query without any relevance label"},
    ]
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in corpus) + "\n")
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    (folder / "qrels").mkdir()
    test = "q1\td1\t1\nq1\td2\t0\nq2\td3\t2\n"
    (folder / "qrels" / "test.tsv").write_text(
        ("query-id\tcorpus-id\tscore\n" if header else "") + test)
    (folder / "qrels" / "dev.tsv").write_text("q3\td4\t1\nq1\td1\t1\n")  # no header
    return folder


def test_beir_folder_round_trip(store, tmp_path):
    folder = _write_beir(tmp_path / "scifact-mini")
    assert detect_format(folder) == "beir"
    result = import_path(store, folder)
    assert result.counts["queries"] == 4 and result.counts["chunks"] == 5
    assert result.counts["pool_entries"] == 4  # q1-d1 is labelled in both splits: one row
    assert result.counts["qrels_test"] == 3 and result.counts["qrels_dev"] == 2
    assert result.counts["queries_without_qrels"] == 1
    assert "language detected as en by langid (majority of 5 documents)" in result.warnings
    assert any(w.startswith("1 queries have no relevance label") for w in result.warnings)
    assert any("graded score above 1" in w for w in result.warnings)

    q1 = get_query(store, "scifact-mini", "q1")
    assert q1.answers == [] and q1.language == "en"
    assert q1.metadata == {"splits": ["dev", "test"]}  # qrels files are read in name order
    assert [(e.position, e.chunk_id, e.support, e.is_oracle, e.support_source)
            for e in q1.pool] == [(None, "d1", 1, False, "label"),
                                  (None, "d2", 0, False, "label")]
    assert q1.pool[0].title == "Photosynthesis" and q1.pool[0].language == "en"
    q2 = get_query(store, "scifact-mini", "q2")
    assert [(e.chunk_id, e.support) for e in q2.pool] == [("d3", 1)]  # graded 2 -> support 1
    assert get_query(store, "scifact-mini", "q3").pool[0].chunk_id == "d4"  # docid accepted
    q4 = get_query(store, "scifact-mini", "q4")
    assert q4.pool == [] and q4.metadata == {}
    d5 = store.query("SELECT title, metadata FROM chunks WHERE chunk_id = 'd5'")[0]
    assert d5["title"] is None and json.loads(d5["metadata"]) == {"metadata": {"url": "x"}}


def test_beir_qrels_without_header(store, tmp_path):
    result = import_path(store, _write_beir(tmp_path / "b", header=False))
    assert result.counts["qrels_test"] == 3


def test_beir_without_langid(store, tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_langid(name, *args, **kwargs):
        if name == "langid":
            raise ImportError("no langid here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_langid)
    result = import_path(store, _write_beir(tmp_path / "b"))
    assert any("langid is not installed" in w for w in result.warnings)
    assert get_query(store, "b", "q1").language is None


def test_beir_corpus_only_is_a_collection(store, tmp_path):
    folder = _write_beir(tmp_path / "c")
    (folder / "queries.jsonl").unlink()
    for f in (folder / "qrels").iterdir():
        f.unlink()
    (folder / "qrels").rmdir()
    (folder / "queries.jsonl").write_text("")  # detect needs queries.jsonl or qrels/
    with pytest.raises(DatasetFormatError, match="queries.jsonl: the file is empty"):
        import_path(store, folder)
    (folder / "queries.jsonl").unlink()
    result = import_path(store, folder, format="beir")
    assert get_dataset(store, "c").kind == "collection" and result.counts["chunks"] == 5


# --------------------------------------------------------------------------- LFRQA and wiki

def test_lfrqa_small_file(store, tmp_path):
    path = tmp_path / "annotations_science_with_citation.jsonl"
    rows = [
        {"qid": 7, "question": "Why is the sky blue?", "answer": "Rayleigh scattering.",
         "citation_numbers": [[1]], "faithful_answer_w_citation": "Rayleigh scattering. [1]",
         "gold_doc_ids": [42]},
        {"qid": "s-2", "question": "An empty answer", "answer": "",
         "citation_numbers": [[1], [1, 2]],
         "faithful_answer_w_citation": "First part. [1]\nSecond part [1, 2].",
         "gold_doc_ids": [1, 2]},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    assert detect_format(path) == "lfrqa"
    result = import_path(store, path)
    assert result.label == "lfrqa-science@1" and result.counts["queries"] == 2
    assert any("passages" in w and "not included" in w for w in result.warnings)
    q = get_query(store, "lfrqa-science", "7")  # a single file keeps its qids
    assert q.answers == [] and q.reference_answer == "Rayleigh scattering."
    assert q.source == "science" and q.language == "en" and q.pool == []
    assert q.reference_citations == {"answer_with_citation": "Rayleigh scattering. [1]",
                                     "citation_numbers": [[1]], "gold_doc_ids": [42]}
    empty = get_query(store, "lfrqa-science", "s-2")
    assert empty.reference_answer == "First part.\nSecond part."
    assert empty.metadata["reference_answer_from"] == "faithful_answer_w_citation"


def test_wiki_small_file(store, tmp_path):
    path = tmp_path / "summaries_de-de.json"
    path.write_text(json.dumps({
        "Berlin": {"title": "Berlin", "extract": "Berlin ist die Hauptstadt Deutschlands.",
                   "description": "Hauptstadt von Deutschland", "topic": "Geographie"},
        "Bärlin": {"title": "Berlin", "extract": "Berlin ist die Hauptstadt Deutschlands.",
                   "description": "Hauptstadt von Deutschland", "topic": "Geographie"},
        "Leer": {"title": "Leer", "extract": "  ", "description": "x", "topic": "y"},
        "Ohne": {"title": "Ohne Beschreibung", "extract": "Ein Text.", "description": "",
                 "topic": None},
    }, ensure_ascii=False), encoding="utf-8")
    assert detect_format(path) == "wiki-summaries"
    result = import_path(store, path)
    assert result.label == "wiki-de@1" and result.counts["chunks"] == 2
    assert result.counts["skipped_empty"] == 1 and result.counts["aliases_merged"] == 1
    assert get_dataset(store, "wiki-de").kind == "collection"
    rows = {r["chunk_id"]: r for r in store.query("SELECT * FROM chunks")}
    assert rows["de/Berlin"]["text"] == ("Hauptstadt von Deutschland\n"
                                         "Berlin ist die Hauptstadt Deutschlands.")
    assert rows["de/Berlin"]["language"] == "de"
    assert json.loads(rows["de/Berlin"]["metadata"]) == {"topic": "Geographie",
                                                         "aliases": ["Bärlin"]}
    assert rows["de/Ohne Beschreibung"]["text"] == "Ein Text."
    assert json.loads(rows["de/Ohne Beschreibung"]["metadata"]) == {"key": "Ohne"}


def test_progress_is_reported(store, tmp_path):
    calls = []
    import_path(store, write_mirage(tmp_path / "m"), progress=lambda *a: calls.append(a))
    assert calls and calls[-1][2] == "done"
    assert all(len(c) == 3 for c in calls)
