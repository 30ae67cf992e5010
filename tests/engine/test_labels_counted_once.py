"""Labels are counted once (issue 35, item 2): an exact repeat of a label row is dropped and
counted, a row that names no annotator is no annotator, and the human ceiling rests only on
pairs with two distinct named annotators, saying how many."""

import json

import pytest

from engine.arena.trust.calibrate import calibrate_judge, latest_calibration
from engine.arena.trust.rankings import ceiling_text, judge_rankings
from engine.datasets.formats.base import DatasetFormatError
from engine.datasets.importing import import_path
from engine.datasets.labels import load_label_pairs
from testkit.arena import ScriptedJudge
from testkit.labels import import_rows
from testkit.paths import SHARED_DATA


def _row(i, label=1, **kw):
    return {"query": f"q{i}", "answer_a": "short", "answer_b": "a longer answer",
            "label": label, **kw}


def _import(store, tmp_path, name, rows):
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return import_path(store, path, name=name)


def test_ten_thousand_copies_of_one_row_are_one_label(store, tmp_path):
    rows = [_row(0)] * 10_000 + [_row(i) for i in range(1, 30)]
    result = _import(store, tmp_path, "copies", rows)
    assert result.counts["pairs"] == 30 and result.counts["labels"] == 30
    assert result.counts["repeats_dropped"] == 9_999
    assert result.counts["annotators"] == 0 and result.counts["unnamed_labels"] == 30
    assert any("9999 repeated row(s) dropped" in w for w in result.warnings)
    (first, *_) = load_label_pairs(store, "copies")
    assert first.aspect_labels("overall") == [1] and first.annotator_labels("overall") == []


def test_named_repeats_dropped_a_changed_label_refused(store, tmp_path):
    rows = [_row(0, annotator="ann"), _row(0, annotator="ann"), _row(0, 2, annotator="bob")]
    result = _import(store, tmp_path, "named", rows)
    assert (result.counts["labels"], result.counts["annotators"]) == (2, 2)
    assert result.counts["repeats_dropped"] == 1
    with pytest.raises(DatasetFormatError, match="already labelled pair .* another label"):
        _import(store, tmp_path, "changed", [_row(0, annotator="ann"),
                                             _row(0, -1, annotator="ann")])
    with pytest.raises(DatasetFormatError, match="kept for rows that name no annotator"):
        _import(store, tmp_path, "reserved", [_row(0, annotator="(no annotator) 1")])


def test_unnamed_rows_that_differ_are_still_no_annotators(store, tmp_path):
    # one source writing 1, 2, 1, 2 ... without a name is not two people
    result = _import(store, tmp_path, "alt", [_row(0, 1 + k % 2) for k in range(100)])
    assert result.counts["labels"] == 2 and result.counts["annotators"] == 0
    [pair] = load_label_pairs(store, "alt")
    assert sorted(pair.aspect_labels("overall")) == [1, 2]
    assert pair.annotator_labels("overall") == []


def test_ragchecker_identical_records_are_two_people_agreeing(store):
    result = import_path(store, SHARED_DATA / "ragchecker-meta" / "human_labeled_pairs.json")
    assert result.counts["labels"] == 392 * 3 and "repeats_dropped" not in result.counts
    pairs = load_label_pairs(store, "human_labeled_pairs")
    assert all(len(p.annotator_labels("overall")) == 2 for p in pairs)


def _longer_wins(s):
    one, two = s["Answer 1"], s["Answer 2"].split("\n\n")[0]
    return "1" if len(one) > len(two) else "2"


def test_the_ceiling_needs_two_named_annotators_and_says_on_how_many_pairs(store, tmp_path):
    rows = [_row(0)] * 10_000 + [_row(i) for i in range(1, 30)]
    rows += [_row(k, 1, annotator=who) for k in (40, 41, 42) for who in ("ann", "bob")]
    import_rows(store, tmp_path, "mixed", rows)
    calibrate_judge(store, "mixed", ScriptedJudge(_longer_wins, name="fake-judge"), n_boot=50)
    ceiling = latest_calibration(store, "fake-judge").estimate("human_sign_agreement")
    assert (ceiling.value, ceiling.n) == (1.0, 3)           # the three named pairs, not 1
    (ranking,) = judge_rankings(store)
    assert ceiling_text(ranking.human_ceiling) == "100.0% n=3"


def test_no_pair_with_two_annotators_no_ceiling(store, tmp_path):
    import_rows(store, tmp_path, "copies", [_row(0)] * 10_000 + [_row(i) for i in range(1, 30)])
    calibrate_judge(store, "copies", ScriptedJudge(_longer_wins, name="fake-judge"), n_boot=50)
    (ranking,) = judge_rankings(store)
    assert ranking.human_ceiling.value is None and ceiling_text(ranking.human_ceiling) == "- n=0"


def test_a_csv_label_out_of_range_is_quoted_as_written(store, tmp_path):
    path = tmp_path / "sheet.csv"
    path.write_text("query,answer_a,answer_b,label\nq,a,b,7\n")
    with pytest.raises(DatasetFormatError, match=r"from -2 to 2, got 7$"):
        import_path(store, path)
