"""Answers cut at the token limit (and while thinking) and reasoning tokens, counted from a
run's stored rows: the store's counts, the Inspector's ``cut`` filter, one item's reasoning,
the report's replies table and compare's warning."""

from __future__ import annotations

import pytest
from testkit.toy_run import A, B, build_toy

from engine.results.inspector import count_items_for, item_detail, items_for
from engine.results.replies import cut_rate_warning, reply_table
from engine.results.report import build_report
from engine.results.text import format_report
from engine.runs.lookup import load_run
from engine.runs.tally import cut_totals, cut_words
from engine.store import Store
from engine.store.items import cut_counts


def _think(store: Store, system: str, setting: str, qid: str, *, cut: bool = False,
           thinking: bool = False, tokens: int = 0) -> None:
    """Make one toy item's generation a reasoning model's (tests write rows directly)."""
    with store.write() as db:
        db.conn.execute(
            "UPDATE generations SET finish_reason = ?, thinking_cut = ?, reasoning = ?, "
            "reasoning_tokens = ? WHERE key = ?",
            ("length" if cut else "stop", int(thinking), "hmm " * tokens if tokens else "",
             tokens, f"{system}|{setting}|{qid}"))


@pytest.fixture
def toy(tmp_path):
    return build_toy(Store(tmp_path / "toy.db"))


def test_a_run_with_no_cut_and_no_reasoning_reports_as_before(toy):
    run = load_run(toy, "toy-run")
    assert reply_table(toy, run.id) == []
    assert "replies" not in build_report(toy, run, n_boot=50).as_json()
    assert "Replies" not in format_report(build_report(toy, run, n_boot=50))
    assert cut_totals(toy, run.id) == (0, 0)
    assert cut_words(0, 0) == "0 cut at the token limit"
    assert count_items_for(toy, run, cut="limit") == 0


def test_cut_answers_counted_everywhere(toy):
    run = load_run(toy, "toy-run")
    _think(toy, A, "base", "q1", cut=True, thinking=True, tokens=40)
    _think(toy, A, "oracle", "q2", cut=True, tokens=10)
    _think(toy, A, "mixed", "q3", tokens=20)
    _think(toy, B, "base", "q0", cut=True)
    counts = cut_counts(toy, run.id)
    assert counts[A][1:] == (2, 1) and counts[B][1:] == (1, 0)
    assert cut_totals(toy, run.id) == (3, 1)
    assert cut_words(3, 1) == "3 cut at the token limit (1 while thinking)"

    limit = items_for(toy, run, cut="limit")
    assert {(r.system, r.setting, r.query_id) for r in limit} == {
        (A, "base", "q1"), (A, "oracle", "q2"), (B, "base", "q0")}
    assert [(r.system, r.setting) for r in items_for(toy, run, cut="thinking")] == [(A, "base")]
    assert count_items_for(toy, run, cut="thinking", system=B) == 0
    with pytest.raises(ValueError, match="unknown cut filter 'nope'"):
        items_for(toy, run, cut="nope")

    detail = item_detail(toy, run, A, "q1")
    base = next(s for s in detail.settings if s.setting == "base")
    assert (base.reasoning, base.reasoning_tokens, base.thinking_cut) == ("hmm " * 40, 40, True)

    table = {e.system: e for e in reply_table(toy, run.id, n_boot=50)}
    a, b = table[A], table[B]
    assert (a.n, a.cut, a.cut_while_thinking, a.reasoning) == (34, 2, 1, 3)
    assert a.reasoning_tokens.n == 34
    assert a.reasoning_tokens.value == pytest.approx(70 / 34)
    assert a.cut_rate.lo < 2 / 34 < a.cut_rate.hi
    assert (b.cut, b.cut_while_thinking, b.reasoning_tokens.value) == (1, 0, 0.0)
    report = build_report(toy, run, n_boot=50)
    assert report.as_json()["replies"] == [r.as_json()
                                           for r in reply_table(toy, run.id, n_boot=50)]
    text = format_report(report)
    assert "Replies: answers cut at the token limit" in text
    line = next(ln for ln in text.splitlines() if ln.startswith(A) and "2 (" in ln)
    assert line.split()[-1] == "34"


def test_compare_warns_when_cut_rates_differ():
    counts = {"a": (20, 0, 0), "b": (20, 12, 11), "c": (20, 1, 0)}
    warning = cut_rate_warning("a", "b", counts)
    assert warning == ("answers cut at the token limit differ: a 0/20 (0 while "
                       "thinking), b 12/20 (11 while thinking); the difference may be the "
                       "token budget's, not the models' (raise --max-tokens)")
    assert cut_rate_warning("a", "a", counts) is None               # none cut on either side
    assert cut_rate_warning("b", "c", counts) is not None           # intervals apart
    assert cut_rate_warning("c", "c", counts) is None               # the same rate
    assert cut_rate_warning("a", "c", counts) is not None           # some against none


def test_exports_carry_reasoning_in_its_own_columns_only_when_a_run_has_it(toy, tmp_path):
    from engine.results.export import export_rows, export_run, iter_view_rows

    run = load_run(toy, "toy-run")
    columns, _ = export_rows(toy, run)
    assert "reasoning" not in columns
    _think(toy, A, "base", "q1", cut=True, thinking=True, tokens=3)
    columns, rows = export_rows(toy, run)
    at = columns.index("response")
    assert columns[at + 1:at + 4] == ["reasoning", "reasoning_tokens", "thinking_cut"]
    row = next(r for r in rows if (r["system"], r["setting"], r["query_id"]) == (A, "base", "q1"))
    assert (row["response"], row["reasoning"], row["reasoning_tokens"], row["thinking_cut"]) == \
        ("I do not know.", "hmm hmm hmm ", 3, True)
    other = next(r for r in rows if r["system"] == B)
    assert (other["reasoning"], other["reasoning_tokens"], other["thinking_cut"]) == ("", 0, False)
    view_columns, view = iter_view_rows(toy, run, {"cut": "thinking"})
    assert view_columns == columns
    assert [(r["system"], r["setting"], r["reasoning_tokens"]) for r in view] == [(A, "base", 3)]
    export_run(toy, run, "jsonl", tmp_path / "run.jsonl")
    assert '"reasoning": "hmm hmm hmm ", "reasoning_tokens": 3, "thinking_cut": true' in \
        (tmp_path / "run.jsonl").read_text()
    export_run(toy, run, "csv", tmp_path / "run.csv")
    assert ",response,reasoning,reasoning_tokens,thinking_cut," in \
        (tmp_path / "run.csv").read_text().splitlines()[0]


def test_resplit_keeps_an_older_runs_inline_thinking_apart_and_rescores(toy):
    from engine.results.resplit import resplit_run

    run = load_run(toy, "toy-run")
    key = f"{B}|base|q1"                      # scored wrong: "I do not know."
    with toy.write() as db:
        db.conn.execute("UPDATE generations SET text = ? WHERE key = ?",
                        ("<think>\nThe gold is ans1 surely.\n</think>\n\nIt is ans1.", key))
        db.conn.execute("UPDATE generations SET text = ?, finish_reason = 'length' "
                        "WHERE key = ?", ("<think>Let me think about", f"{B}|base|q2"))

    def stored(k):
        return tuple(toy.query("SELECT text, reasoning, reasoning_tokens, thinking_cut FROM "
                               "generations WHERE key = ?", (k,))[0])

    def em(k, q):
        return toy.query("SELECT value FROM scores WHERE generation_key = ? AND query_rowid = ? "
                         "AND metric = 'em_loose'", (k, q))[0][0]

    assert em(key, 101) == 0.0
    done = resplit_run(toy, "toy-run")
    assert (done.split, done.cut_while_thinking, done.rescored) == (2, 1, 2)
    assert done.checked == 61 - 1            # every generation but the failed item's
    assert stored(key) == ("It is ans1.", "The gold is ans1 surely.", 8, 0)
    assert em(key, 101) == 1.0               # scored on the answer now
    assert stored(f"{B}|base|q2") == ("", "Let me think about", 6, 1)
    assert em(f"{B}|base|q2", 102) == 0.0
    assert cut_totals(toy, run.id) == (1, 1)
    # a second resplit changes nothing
    again = resplit_run(toy, "toy-run")
    assert (again.split, again.rescored) == (0, 0)
    assert stored(key) == ("It is ans1.", "The gold is ans1 surely.", 8, 0)


def test_compare_says_when_the_two_sides_were_cut_at_unlike_rates(toy):
    from engine.results.paired import compare_pair
    from engine.results.paired_text import format_comparison
    from engine.results.pairing import pair, side_runs

    sides = (f"toy-run:{A}", f"toy-run:{B}")
    alike = compare_pair(toy, pair(toy, *sides, side_runs(toy, *sides)), n_boot=50, n_perm=99)
    assert alike.cut_warning is None and "cut_warning" not in alike.as_json()
    for qid in ("q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7"):
        _think(toy, B, "mixed", qid, cut=True, thinking=True, tokens=5)
    c = compare_pair(toy, pair(toy, *sides, side_runs(toy, *sides)), n_boot=50, n_perm=99)
    assert c.cut_warning.startswith("answers cut at the token limit differ: A 0/")
    assert "B 8/" in c.cut_warning and "(8 while thinking)" in c.cut_warning
    assert c.as_json()["cut_warning"] == c.cut_warning
    assert f"Warning: {c.cut_warning}." in format_comparison(c)


def test_the_run_page_shows_reasoning_folded_and_the_replies_table(toy):
    import re

    from engine.results.html.assets import REASONING_SCRIPT, SCRIPT
    from engine.results.html.items import unpack
    from engine.results.html.run_page import run_page

    run = load_run(toy, "toy-run")
    plain = run_page(toy, run, n_boot=50)
    assert SCRIPT in plain and "Reasoning (" not in plain and "Replies cut" not in plain
    _think(toy, A, "base", "q1", cut=True, thinking=True, tokens=3)
    page = run_page(toy, run, n_boot=50)
    assert REASONING_SCRIPT in page and "<h2>Replies cut and reasoning</h2>" in page
    packed = re.search(r'id="item-data">([^<]*)<', page)
    items = unpack(packed.group(1).strip())["items"]
    thought = [i for i in items if "rs" in i]
    assert [(i["rs"], i["rt"], i["tc"], i["r"]) for i in thought] == \
        [("hmm hmm hmm ", 3, 1, "I do not know.")]


def test_judges_see_the_answers_never_the_reasoning(toy):
    from engine.arena.judging.plan import load_answers

    run = load_run(toy, "toy-run")
    _think(toy, A, "base", "q1", tokens=3)                  # reasoning "hmm hmm hmm "
    answers = load_answers(toy, run.id)
    texts = [text for by in answers.values() for text, _ in by.values()]
    assert texts and not any("hmm" in t for t in texts)
    assert "I do not know." in texts
