"""The importers on the real public data in ../shared/data (always present: no skips)."""

import json
import shutil

import pytest

from engine.datasets.catalog import get_dataset, get_query, list_queries
from engine.datasets.importing import import_path
from testkit.paths import SHARED_DATA

XQUAD_LANGUAGES = ("ar", "de", "en", "es", "hi", "ru", "th", "zh")


def test_shared_data_is_there():
    assert SHARED_DATA.is_dir(), f"the real data is missing: {SHARED_DATA}"


def test_xquad_en(store):
    result = import_path(store, SHARED_DATA / "xquad" / "xquad.en.json")
    assert result.format == "squad" and result.outcome == "imported"
    assert result.counts["queries"] == 1190
    assert result.counts["chunks"] == 240
    assert result.counts["articles"] == 48
    assert result.counts["pool_entries"] == 1190 * 5
    summary = get_dataset(store, "xquad.en")
    assert (summary.queries, summary.chunks, summary.languages) == (1190, 240, {"en": 1190})
    assert store.query("SELECT COUNT(DISTINCT title) FROM chunks")[0][0] == 48
    # every query's pool: exactly five entries, exactly one of them the oracle
    shapes = store.query(
        "SELECT COUNT(*) AS n, SUM(is_oracle) AS oracles, MIN(position) AS lo, "
        "MAX(position) AS hi FROM pool GROUP BY query_rowid")
    assert len(shapes) == 1190
    assert {tuple(r) for r in shapes} == {(5, 1, 0, 4)}
    oracle_support = store.query("SELECT DISTINCT support FROM pool WHERE is_oracle = 1")
    assert [r[0] for r in oracle_support] == [1]


def test_xquad_all_languages_as_a_folder(store):
    result = import_path(store, SHARED_DATA / "xquad")
    assert result.counts["queries"] == 9520 and result.counts["chunks"] == 1920
    summary = get_dataset(store, "xquad")
    assert summary.languages == {lang: 1190 for lang in XQUAD_LANGUAGES}
    chunk_langs = dict(store.query("SELECT language, COUNT(*) FROM chunks GROUP BY language"))
    assert chunk_langs == {lang: 240 for lang in XQUAD_LANGUAGES}
    # the parallel set: the same question id in every language
    q = list_queries(store, "xquad", language="de", limit=1)[0]
    de = get_query(store, "xquad", q["query_id"])
    en = get_query(store, "xquad", "en/" + de.metadata["parallel_id"])
    assert en.metadata["parallel_id"] == de.metadata["parallel_id"]
    assert len(de.pool) == len(en.pool) == 5


def test_mirage_dataset_json_alone(store):
    result = import_path(store, SHARED_DATA / "mirage")
    assert result.format == "mirage" and result.dataset == "mirage"
    assert result.counts["queries"] == 7560
    assert result.counts["chunks"] == 0 and result.counts["pool_entries"] == 0
    assert any("the pool is missing" in w and "doc_pool.json" in w for w in result.warnings)
    summary = get_dataset(store, "mirage")
    assert summary.sources == {"naturalqa": 3578, "popqa": 3075, "triviaqa": 584, "ifqa": 248,
                               "drop": 75}
    assert summary.languages == {"en": 7560}
    first = json.loads((SHARED_DATA / "mirage" / "dataset.json").read_text())[0]
    q = get_query(store, "mirage", first["query_id"])
    assert q.text == first["query"] and q.answers == first["answer"]
    assert q.metadata == {"doc_name": first["doc_name"], "doc_url": first["doc_url"],
                          "num_doc_labels": first["num_doc_labels"]}
    # the file itself is detected the same way, and is the same content: nothing new
    again = import_path(store, SHARED_DATA / "mirage" / "dataset.json")
    assert again.outcome == "unchanged" and again.label == "mirage@1"


# Line counts of the shipped files (wc -l): one record per line, no blank lines.
LFRQA_LINES = {"fiqa": 3570, "lifestyle": 2198, "science": 1404}


def test_lfrqa_all_three_files(store):
    result = import_path(store, SHARED_DATA / "lfrqa")
    assert result.format == "lfrqa"
    assert result.counts["queries"] == sum(LFRQA_LINES.values()) == 7172
    assert result.counts["chunks"] == 0
    for domain, n in LFRQA_LINES.items():
        assert result.counts[f"queries_{domain}"] == n
    summary = get_dataset(store, "lfrqa")
    assert summary.sources == LFRQA_LINES
    assert summary.languages == {"en": 7172}
    assert any("not included" in w for w in result.warnings)
    # four lifestyle records ship an empty 'answer': the cited form stands in (see lfrqa.py)
    assert result.counts["answers_from_citation_text"] == 4
    q = get_query(store, "lfrqa", "fiqa/1093")
    assert q.answers == [] and q.reference_answer.startswith("For current pricing")
    assert q.reference_citations["gold_doc_ids"] == [261024, 99679, 285502, 59687, 359465]
    assert q.reference_citations["answer_with_citation"].startswith(
        "For current pricing on healthcare plans")
    assert q.reference_citations["citation_numbers"][0] == [1]
    blank = store.query("SELECT COUNT(*) FROM queries WHERE TRIM(reference_answer) = ''")
    assert blank[0][0] == 0


def test_lfrqa_one_file(store):
    path = SHARED_DATA / "lfrqa" / "annotations_science_with_citation.jsonl"
    result = import_path(store, path)
    assert result.label == "lfrqa-science@1"
    assert result.counts["queries"] == LFRQA_LINES["science"]
    assert get_dataset(store, "lfrqa-science").sources == {"science": 1404}


# The data README says 26,227 summaries (en 10,033, fr 9,955, es 6,239): that is the number
# of entries in the files. No extract is empty, but some entries are different keys leading
# to the same article (same resolved title, same text: es "San Pablo" and "Pablo de Tarso"),
# 13 in es and 4 in fr. The importer stores each article once (chunk id "{lang}/{title}"),
# keeping the other keys as aliases, so the collection has 17 fewer chunks than entries.
WIKI_CHUNKS = {"en": 10033, "fr": 9955 - 4, "es": 6239 - 13}


def test_wiki_folder(store):
    result = import_path(store, SHARED_DATA / "wiki")
    assert result.format == "wiki-summaries" and result.dataset == "wiki"
    assert result.counts["chunks"] == sum(WIKI_CHUNKS.values()) == 26227 - 17
    assert result.counts["skipped_empty"] == 0 and result.counts["aliases_merged"] == 17
    summary = get_dataset(store, "wiki")
    assert summary.kind == "collection" and summary.queries == 0
    assert summary.languages == WIKI_CHUNKS
    row = store.query("SELECT * FROM chunks WHERE chunk_id = 'en/2001: A Space Odyssey'")[0]
    assert row["title"] == "2001: A Space Odyssey" and row["language"] == "en"
    assert row["text"].startswith(
        json.loads((SHARED_DATA / "wiki" / "summaries_en-us.json").read_text())
        ["2001: A Space Odyssey"]["description"] + "\n2001: A Space Odyssey is a 1968")
    assert json.loads(row["metadata"])["topic"]
    alias = store.query("SELECT metadata FROM chunks WHERE chunk_id = 'es/Pablo de Tarso'")
    assert json.loads(alias[0]["metadata"])["aliases"] == ["San Pablo"]


@pytest.mark.parametrize("rel", ["xquad/xquad.en.json", "mirage", "lfrqa", "wiki"])
def test_reimport_is_a_no_op(store, counts, rel):
    first = import_path(store, SHARED_DATA / rel)
    before = counts(store)
    again = import_path(store, SHARED_DATA / rel)
    assert again.outcome == "unchanged"
    assert (again.dataset_id, again.version) == (first.dataset_id, first.version)
    assert again.counts["queries"] == first.counts["queries"]
    assert again.counts["chunks"] == first.counts["chunks"]
    assert counts(store) == before


def test_modified_copy_becomes_version_2(store, tmp_path, counts):
    first = import_path(store, SHARED_DATA / "xquad" / "xquad.en.json")
    copy = tmp_path / "xquad.en.json"
    doc = json.loads((SHARED_DATA / "xquad" / "xquad.en.json").read_text(encoding="utf-8"))
    qa = doc["data"][0]["paragraphs"][0]["qas"][0]
    qa["question"] = "A changed question?"
    copy.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")

    second = import_path(store, copy)
    assert second.outcome == "imported" and second.label == "xquad.en@2"
    assert get_dataset(store, "xquad.en").version == 2
    assert get_query(store, "xquad.en@2", "en/" + qa["id"]).text == "A changed question?"
    assert get_query(store, "xquad.en@1", "en/" + qa["id"]).text != "A changed question?"
    assert counts(store)["datasets"] == 2 and counts(store)["queries"] == 2 * 1190

    # an unmodified copy elsewhere is the same content: unchanged, whatever its path
    same = tmp_path / "same" / "xquad.en.json"
    same.parent.mkdir()
    shutil.copy(SHARED_DATA / "xquad" / "xquad.en.json", same)
    assert import_path(store, same).label == first.label
