"""A reasoning model's replies from the command line: ``runs resplit`` keeps an older run's
inline thinking apart and rescores it, and ``report`` then counts the answers cut while
thinking and the thinking's tokens."""

from __future__ import annotations

import json

import pytest
from testkit.runs import cli_main as main
from testkit.toy_run import B, build_toy

from engine.store import Store


@pytest.fixture
def toy_db(tmp_path, monkeypatch):
    monkeypatch.setenv("MIRAGE_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.delenv("MIRAGE_DB", raising=False)
    path = tmp_path / "toy.db"
    store = build_toy(Store(path))
    with store.write() as db:
        db.conn.execute("UPDATE generations SET text = ? WHERE key = ?",
                        ("<think>\nans1 it is\n</think>\n\nIt is ans1.", f"{B}|base|q1"))
        db.conn.execute("UPDATE generations SET text = ?, finish_reason = 'length' WHERE key = ?",
                        ("<think>Let me think about", f"{B}|base|q2"))
    store.close()
    return path


def test_resplit_then_report(toy_db, capsys):
    # before: one answer cut at the token limit, its thinking inline and not yet told apart
    before = json.loads(main(capsys, "report", "toy-run", "--json", "--db", toy_db)[1])
    b = next(e for e in before["replies"] if e["system"] == B)
    assert (b["cut"], b["cut_while_thinking"], b["reasoning"], b["n"]) == (1, 0, 0, 26)

    code, out, err = main(capsys, "runs", "resplit", "toy-run", "--db", toy_db)
    assert (code, err) == (0, "")
    assert out == ("run toy-run: 2 of 60 stored answers held thinking inline (1 cut while "
                   "thinking): re-split, and 2 items rescored on the answers (`mirage-tui "
                   "report` shows the new numbers)\n")
    code, out, _ = main(capsys, "runs", "resplit", "toy-run", "--json", "--db", toy_db)
    assert json.loads(out) == {"run": "toy-run", "checked": 58, "split": 0,
                               "cut_while_thinking": 0, "rescored": 0}
    code, out, _ = main(capsys, "runs", "resplit", "toy-run", "--db", toy_db)
    assert out.startswith("run toy-run: none of its 58 stored answers holds thinking inline")

    after = json.loads(main(capsys, "report", "toy-run", "--json", "--db", toy_db)[1])
    b = next(e for e in after["replies"] if e["system"] == B)
    assert (b["cut"], b["cut_while_thinking"], b["reasoning"], b["n"]) == (1, 1, 2, 26)
    assert after["accuracy"][B]["base"]["value"] > before["accuracy"][B]["base"]["value"]
    code, out, _ = main(capsys, "report", "toy-run", "--db", toy_db)
    assert "Replies: answers cut at the token limit" in out

    code, _, err = main(capsys, "runs", "resplit", "no-such-run", "--db", toy_db)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "no-such-run" in err
