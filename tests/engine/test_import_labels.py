"""Human pairwise labels as a dataset: RAGChecker's meta-evaluation file (the real one) and the
plain JSONL / CSV layout; bad rows refused by file, record and field, nothing written."""

import json

import pytest

from engine.datasets.catalog import DatasetNotFound
from engine.datasets.formats.base import DatasetFormatError
from engine.datasets.importing import import_path
from engine.datasets.labels import load_label_pairs
from testkit.paths import SHARED_DATA

RAGCHECKER = SHARED_DATA / "ragchecker-meta" / "human_labeled_pairs.json"


def test_the_real_ragchecker_file(store):
    result = import_path(store, RAGCHECKER)
    assert result.format == "ragchecker-meta" and result.outcome == "imported"
    assert result.counts["pairs"] == 196
    assert result.counts["labels"] == 392 * 3          # every row, three aspects each
    assert result.counts["annotators"] == 2 and result.counts["domains"] == 7
    assert result.counts["aspects"] == 3
    pairs = load_label_pairs(store, "human_labeled_pairs")
    assert len(pairs) == 196
    # two annotators on every pair and every aspect, kept apart
    assert all(len(p.labels[a]) == 2 for p in pairs for a in ("correctness", "completeness",
                                                              "overall"))
    assert {p.domain for p in pairs} == {"fiqa", "lifestyle", "recreation", "bioasq",
                                         "science", "technology", "writing"}
    raw = json.loads(RAGCHECKER.read_text())
    first = next(p for p in pairs if p.pair_id == str(raw[0]["instance_id"]))
    assert first.answer_a == raw[0]["model1"]["response"]
    assert first.reference == raw[0]["gt_answer"]
    assert first.labels["overall"]["annotator 1"] == raw[0]["overall_label"]
    assert first.labels["overall"]["annotator 2"] == raw[1]["overall_label"]
    assert first.metadata["model_b"] == raw[0]["model2"]["model_name"]
    assert import_path(store, RAGCHECKER).outcome == "unchanged"
    # the catalog counts a labels dataset's answer pairs (not 0 queries, 0 chunks)
    from engine.datasets.catalog import list_datasets

    (summary,) = [d for d in list_datasets(store) if d.kind == "labels"]
    assert (summary.queries, summary.chunks, summary.languages) == (196, 0, {})


def test_plain_jsonl_and_csv(store, tmp_path):
    rows = [{"query": "q1", "answer_a": "x", "answer_b": "y", "label": -2, "annotator": "ann",
             "domain": "d1"},
            {"query": "q1", "answer_a": "x", "answer_b": "y", "label": "tie", "annotator": "bob"},
            {"query": "q1", "answer_a": "x", "answer_b": "y", "label": "B", "aspect":
             "Correctness", "reference": "r"},
            {"query": "q2", "answer_a": "u", "answer_b": "", "label": "1"}]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = import_path(store, path)
    assert result.format == "pairwise-labels"
    assert (result.counts["pairs"], result.counts["labels"]) == (2, 4)
    pairs = load_label_pairs(store, "mine")
    assert pairs[0].labels == {"overall": {"ann": -2, "bob": 0},
                               "correctness": {"(no annotator) 1": 1}}
    assert pairs[0].domain == "d1" and pairs[1].labels == {"overall": {"(no annotator) 1": 1}}

    csv_path = tmp_path / "sheet.csv"
    csv_path.write_text('query,answer_a,answer_b,label,annotator\n'
                        'q,"a, with comma",b,2,p1\nq,"a, with comma",b,1,p2\n')
    import_path(store, csv_path)
    [pair] = load_label_pairs(store, "sheet")
    assert pair.answer_a == "a, with comma" and pair.labels["overall"] == {"p1": 2, "p2": 1}

    # a numbered id never takes an id the file gives another pair
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join(json.dumps(r) for r in [
        {"query": "first", "answer_a": "a", "answer_b": "b", "label": 1},
        {"query": "named", "answer_a": "c", "answer_b": "d", "label": -1, "pair_id": "pair-1"},
    ]) + "\n")
    import_path(store, mixed)
    by_query = {p.query: p.pair_id for p in load_label_pairs(store, "mixed")}
    assert by_query == {"named": "pair-1", "first": "pair-2"}
    with pytest.raises(DatasetNotFound, match="not human pairwise labels"):
        import_path(store, SHARED_DATA / "xquad" / "xquad.en.json")
        load_label_pairs(store, "xquad.en")


@pytest.mark.parametrize("row, record, field, words", [
    ({"query": "q", "answer_a": "a", "answer_b": "b", "label": 3}, "at line 2", "label",
     "from -2 to 2"),
    ({"query": "q", "answer_a": "a", "answer_b": "b", "label": "maybe"}, "at line 2", "label",
     "A / B / tie"),
    ({"query": "q", "answer_a": "a", "answer_b": "b"}, "at line 2", "label", "missing"),
    ({"answer_a": "a", "answer_b": "b", "label": 1}, "at line 2", "query", "missing"),
    ({"query": "q", "answer_a": "a", "answer_b": "b", "label": 2, "annotator": "ann"},
     "at line 2", "annotator", "already labelled"),
    ({"query": "q", "answer_a": "other", "answer_b": "b", "label": 1, "pair_id": "p"},
     "at line 2", "answer_a", "another answer_a"),
])
def test_bad_rows_refused_nothing_written(store, counts, tmp_path, row, record, field, words):
    import_path(store, RAGCHECKER)
    before = counts(store)
    good = {"query": "q", "answer_a": "a", "answer_b": "b", "label": 1, "annotator": "ann",
            "pair_id": "p"}
    if "pair_id" not in row:
        good.pop("pair_id")
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(DatasetFormatError) as info:
        import_path(store, path, format="pairwise-labels")
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    assert f"record {record}" in message and f"field '{field}'" in message and words in message
    assert counts(store) == before


def test_bad_ragchecker_row(store, counts, tmp_path):
    raw = json.loads(RAGCHECKER.read_text())[:4]
    raw[3]["overall_label"] = 7
    path = tmp_path / "meta.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(DatasetFormatError, match=r"record 3, field 'overall_label': expected an "
                                                 r"integer from -2 to 2, got 7"):
        import_path(store, path)
    del raw[3]["model2"]
    raw[3]["overall_label"] = 0
    path.write_text(json.dumps(raw))
    with pytest.raises(DatasetFormatError, match=r"record 3, field 'model2'"):
        import_path(store, path)
    assert counts(store)["datasets"] == 0
