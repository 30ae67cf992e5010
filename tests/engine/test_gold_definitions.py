"""The retrieval gold definition as a recorded choice (engine.metrics.definitions): ``oracle``
(the rows the file marks supporting, MIRAGE's definition) against ``oracle+answer-match`` (plus
the siblings the SQuAD importer marks because they contain an answer), on the real XQuAD data
and in a run's report; and the correct-language variant a report picks."""

from __future__ import annotations

import json

import pytest
from testkit.paths import SHARED_DATA
from testkit.toy_run import RET, A

from engine.datasets.importing import import_path
from engine.metrics.definitions import DefinitionError
from engine.runs.lookup import load_run
from engine.results.report import build_report
from engine.results.text import format_report
from engine.retrieval import answer_match_rows, gold_chunks, retrieval_report_for

XQUAD_EN = SHARED_DATA / "xquad" / "xquad.en.json"
LABEL = "pool-order#00000000"
N_BOOT = 200


@pytest.fixture
def xquad(store):
    import_path(store, XQUAD_EN, name="xq-en")
    dataset_id = store.query("SELECT id FROM datasets WHERE name = 'xq-en'")[0][0]
    # a retriever that ranks each query's own pool in pool order (the window of five
    # paragraphs of its article), stored as the real retriever stores rankings
    pools: dict[int, list[int]] = {}
    for q, c in store.query("SELECT p.query_rowid, p.chunk_rowid FROM pool p JOIN queries q "
                            "ON q.id = p.query_rowid WHERE q.dataset_id = ? "
                            "ORDER BY p.query_rowid, p.position", (dataset_id,)):
        pools.setdefault(q, []).append(c)
    with store.write() as db:
        db.conn.executemany("INSERT INTO retrievals VALUES (?, ?, ?)",
                            [(LABEL, q, json.dumps([[c, 1.0 - r / 10] for r, c in
                                                    enumerate(chunks)]))
                             for q, chunks in pools.items()])
    return store, dataset_id, pools


def test_the_store_tells_file_labels_from_answer_matches(xquad):
    store, dataset_id, _ = xquad
    assert answer_match_rows(store, dataset_id) == 192          # the importer's warning
    oracle = gold_chunks(store, dataset_id, "oracle")
    widened = gold_chunks(store, dataset_id, "oracle+answer-match")
    assert len(oracle) == len(widened) == 1190
    assert all(len(chunks) == 1 for chunks in oracle.values())  # the question's paragraph
    assert all(oracle[q] <= widened[q] for q in oracle)
    assert sum(len(c) for c in widened.values()) - 1190 == 192
    assert sum(1 for c in widened.values() if len(c) > 1) == 131
    assert gold_chunks(store, dataset_id) == oracle              # the default is the file's
    with pytest.raises(DefinitionError):
        gold_chunks(store, dataset_id, "everything")


def test_both_definitions_on_xquad_give_the_recall_each_defines(xquad):
    store, dataset_id, pools = xquad
    oracle = retrieval_report_for(store, "xq-en", LABEL, n_boot=N_BOOT)
    widened = retrieval_report_for(store, "xq-en", LABEL, n_boot=N_BOOT,
                                   gold="oracle+answer-match")
    assert (oracle["gold"], widened["gold"]) == ("oracle", "oracle+answer-match")
    assert oracle["answer_match_rows"] == widened["answer_match_rows"] == 192
    # by hand: R@1 is the share of each query's gold at rank 1, averaged over queries
    sets = {d: gold_chunks(store, dataset_id, d) for d in ("oracle", "oracle+answer-match")}
    for report, definition in ((oracle, "oracle"), (widened, "oracle+answer-match")):
        gold = sets[definition]
        for k in (1, 3):
            expected = sum(len(set(pools[q][:k]) & gold[q]) / len(gold[q])
                           for q in pools) / len(pools)
            assert report["metrics"][f"r@{k}"].value == pytest.approx(expected)
        assert report["metrics"]["r@5"].value == pytest.approx(1.0)   # the whole pool
    # the widened set differs, and so do the numbers: more relevant chunks to find at k < 5,
    # and more relevant chunks among the five
    assert oracle["metrics"]["r@1"].value != widened["metrics"]["r@1"].value
    assert widened["metrics"]["p@5"].value > oracle["metrics"]["p@5"].value
    assert oracle["metrics"]["p@5"].value == pytest.approx(0.2)


# --------------------------------------------------------------------------- a run's report

def widen_toy(store) -> None:
    """Chunk 2 of every toy query (not supporting in the file) becomes supporting by answer
    match; odd queries rank it first."""
    with store.write() as db:
        db.conn.execute("UPDATE pool SET support = 1, support_source = 'answer-match' "
                        "WHERE support = 0")


def test_report_computes_both_gold_tables_and_names_the_one_it_shows(toy):
    widen_toy(toy)
    report = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT)
    assert report.definitions.chosen.gold == "oracle"
    assert report.definitions.answer_match_rows == 9
    by_gold = report.retrieval_by_gold
    assert report.retrieval is by_gold["oracle"]
    oracle_r1 = by_gold["oracle"][0].metrics["r@1"].value
    widened_r1 = by_gold["oracle+answer-match"][0].metrics["r@1"].value
    assert oracle_r1 == pytest.approx(4 / 8 * 1 / 2)                 # even queries: c0 of 2
    assert widened_r1 == pytest.approx(1 / 3)                        # every query: 1 of 3
    text = format_report(report)
    assert "Retrieval gold: oracle (chunks marked supporting in the dataset file" in text
    assert "9 answer-match rows not counted" in text
    assert "Correct language: langid" in text and "rule: mirage-tui" in text

    asked = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT, gold="oracle+answer-match")
    assert asked.retrieval[0].metrics["r@1"].value == pytest.approx(widened_r1)
    assert "Retrieval gold: oracle+answer-match" in format_report(asked)
    assert "relevant = the query's gold chunks, oracle+answer-match" in format_report(asked)
    assert asked.as_json()["definitions"]["gold"] == "oracle+answer-match"


def test_the_run_records_the_choice_and_mirage_parity_uses_the_files_gold(toy):
    widen_toy(toy)
    with toy.write() as db:
        db.conn.execute("UPDATE runs SET config = ? WHERE name = 'toy-run'",
                        (json.dumps({"gold": "oracle+answer-match"}),))
    recorded = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT)
    assert recorded.definitions.chosen.gold == "oracle+answer-match"
    mirage = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT, parity="mirage")
    chosen = mirage.definitions.chosen
    assert chosen.gold == "oracle" and chosen.parity == "mirage"
    head = format_report(mirage).split("\n\n")[0].splitlines()   # the header paragraph
    assert "Parity: mirage (fixes gold oracle)" in head
    with pytest.raises(DefinitionError):
        build_report(toy, load_run(toy, "toy-run"), parity="mirage", gold="oracle+answer-match")


def test_report_shows_the_chosen_correct_language_variant(toy):
    # give q0's oracle item of system A a stored BERGEN-rule score that differs from its default
    item = toy.query("SELECT generation_key, query_rowid FROM run_items WHERE system = ? AND "
                     "setting = 'oracle' ORDER BY query_rowid LIMIT 1", (A,))[0]
    with toy.write() as db:
        db.conn.execute("INSERT OR REPLACE INTO scores VALUES (?, ?, "
                        "'correct_language:fasttext:bergen', 0.0, 'fasttext detected en')",
                        tuple(item))
    default = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT)
    bergen = build_report(toy, load_run(toy, "toy-run"), n_boot=N_BOOT, parity="bergen")
    shown = bergen.metrics[A]["oracle"]["correct_language"]
    assert shown.n == 1 and shown.value == 0.0
    assert default.metrics[A]["oracle"]["correct_language"].value == 1.0
    for report in (default, bergen):   # variants never show under their own names
        assert not [m for m in report.metrics[A]["oracle"] if m.startswith("correct_language:")]
    assert bergen.definitions.chosen.language_metric == "correct_language:fasttext:bergen"
    assert any("were scored before correct_language:fasttext:bergen" in n for n in bergen.notes)
    assert "rule: bergen (raw response" in format_report(bergen)
    assert RET in bergen.accuracy[A]
