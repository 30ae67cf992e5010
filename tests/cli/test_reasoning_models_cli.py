"""Reasoning models through the CLI, as a user runs them against an OpenAI-compatible server:
the reasoning stand-in (:mod:`testkit.reasoning_server`) answers each demo question with its gold
answer after ~120 words of thinking, one model id per reply shape (no thinking, ``<think>``
inline, ``reasoning_content``, ``reasoning``, a template-opened ``</think>``, ``[THINK]``,
gpt-oss channels, thinking only counted in ``usage``).

- The same right answers score the same EM_strict, F1 and BERGEN metrics in every shape, and
  the arena (``reference:answer-match``) ranks them as ties.
- The reasoning is kept: in the JSONL and CSV exports and in the HTML page's items.
- With a budget too small to finish thinking, the plan warns (once the model's replies showed
  it thinks), and every cut answer is counted and named as cut while thinking in the run's
  summary and its report (text and JSON); a model that does not think is not cut.
"""

from __future__ import annotations

import csv
import json
import re

import pytest

from engine.datasets.demo_pool import ensure_demo
from engine.results.html.items import unpack
from engine.store import Store
from testkit.paths import ROOT
from testkit.reasoning_server import SHAPES, reasoning_server
from testkit.runs import cli_run, mirage_cli, run_together
from testkit.store import copy_workspace, idle_machine_load

SAMPLE = 6
SCORED = ("em_loose", "em_strict", "f1_mirage", "bergen_match", "bergen_em", "bergen_f1",
          "char3_recall")
THINKING = [m for m in SHAPES if m != "plain"]
SHOWN = [m for m in THINKING if m != "think-hidden"]
"""The shapes whose thinking the server sends (think-hidden's is only counted)."""


@pytest.fixture(scope="module")
def server():
    with reasoning_server() as state:
        yield state


def _systems(server, models) -> str:
    return ",".join(f"{server.url}#{m}" for m in models)


@pytest.fixture(scope="module")
def shapes_template(server, tmp_path_factory):
    """A workspace with run ``shapes``: every reply shape on SAMPLE demo questions, oracle,
    with room to finish thinking (made once, never written: tests take a copy); and its run
    command's output."""
    db = tmp_path_factory.mktemp("reasoning-cli") / "w.db"
    with pytest.MonkeyPatch.context() as monkeypatch:      # as built inside a test
        idle_machine_load(monkeypatch)
        store = Store(db)
        ensure_demo(store)
        store.close()
    done = cli_run("--dataset", "demo", "--generator", _systems(server, SHAPES),
                   "--settings", "oracle", "--sample", str(SAMPLE), "--max-tokens", "1000",
                   "--name", "shapes", db=db)
    assert done.returncode == 0, done.stderr
    return db, done.stdout


@pytest.fixture
def shapes(shapes_template, tmp_path):
    db, out = shapes_template
    return copy_workspace(db, tmp_path / "w.db"), out


def _cli(*args, db):
    return [*mirage_cli(), *args, "--db", str(db)]


def _ok(done) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def _model(system: str) -> str:
    return system.split("#", 1)[1].split("/", 1)[0].split(" | ", 1)[0]


def test_the_same_answers_score_the_same_in_every_reply_shape(shapes):
    db, out = shapes
    assert f"0 errors, 0 truncated, 0 cut at the token limit)" in out
    report = json.loads(_ok(run_together(_cli("report", "shapes", "--json", db=db),
                                         cwd=ROOT)[0]))
    scores = {_model(system): {m: per["oracle"][m]["value"] for m in SCORED}
              for system, per in report["metrics"].items()}
    assert sorted(scores) == sorted(SHAPES)
    assert scores["plain"]["em_strict"] == 1.0 and scores["plain"]["bergen_em"] == 1.0
    for model in THINKING:
        assert scores[model] == scores["plain"], model
    replies = {_model(r["system"]): r for r in report["replies"]}
    assert all(r["cut"] == 0 and r["n"] == SAMPLE for r in replies.values())
    assert replies["plain"]["reasoning"] == replies["think-hidden"]["reasoning"] == 0
    for model in THINKING:
        assert replies[model]["reasoning"] == (SAMPLE if model in SHOWN else 0), model
        assert replies[model]["reasoning_tokens"]["value"] > 100, model


def test_the_arena_ranks_every_reply_shape_as_ties(shapes):
    db, _ = shapes
    judged = run_together(_cli("arena", "judge", "shapes", "--judge", "reference:answer-match",
                               db=db), cwd=ROOT)[0]
    _ok(judged)
    ratings = json.loads(_ok(run_together(_cli("arena", "ratings", "shapes", "--json", db=db),
                                          cwd=ROOT)[0]))
    systems = ratings["systems"]
    assert sorted(_model(s["system"]) for s in systems) == sorted(SHAPES)
    assert {s["rank"] for s in systems} == {1}
    assert len({s["elo"] for s in systems}) == 1
    assert all(s["ties"] == s["battles"] > 0 and s["wins"] == s["losses"] == 0
               for s in systems)


def test_the_reasoning_is_in_the_exports_and_the_page(shapes, tmp_path):
    db, _ = shapes
    jsonl, table, page = tmp_path / "r.jsonl", tmp_path / "r.csv", tmp_path / "r.html"
    for done in run_together(
            _cli("export", "shapes", "--format", "jsonl", "-o", str(jsonl), db=db),
            _cli("export", "shapes", "--format", "csv", "-o", str(table), db=db),
            _cli("report", "shapes", "--html", str(page), db=db), cwd=ROOT):
        _ok(done)
    rows = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    items = [r for r in rows if r["type"] == "item"]
    assert len(items) == SAMPLE * len(SHAPES)
    answers = {r["query_id"]: r["response"] for r in items if _model(r["system"]) == "plain"}
    for r in items:
        assert r["response"] == answers[r["query_id"]]           # the answer, apart
        assert "</think>" not in r["response"] and "<|" not in r["response"]
        if _model(r["system"]) == "plain":
            assert (r["reasoning"], r["reasoning_tokens"]) == ("", 0)
        elif _model(r["system"]) == "think-hidden":
            assert r["reasoning"] == "" and r["reasoning_tokens"] > 100
        else:
            assert r["reasoning"].startswith("Okay, the user asks: "), r["reasoning"][:80]
            assert r["reasoning"].rstrip(".").endswith(f"So the answer is {r['response']}")
            assert r["reasoning_tokens"] > 100 and not r["thinking_cut"]
    with table.open(encoding="utf-8", newline="") as fh:
        cells = list(csv.DictReader(fh))
    assert {c["reasoning"] for c in cells if _model(c["system"]) == "think-field"} == \
        {r["reasoning"] for r in items if _model(r["system"]) == "think-field"}
    html = page.read_text(encoding="utf-8")
    packed = re.search(r'id="item-data">([^<]*)<', html)
    shown = unpack(packed.group(1).strip())["items"]
    thought = [i for i in shown if i.get("rs")]
    assert len(thought) == SAMPLE * len(SHOWN)
    assert all(i["rs"].startswith("Okay, the user asks: ") and i["rt"] > 100 for i in thought)


def test_a_budget_too_small_to_finish_thinking_is_warned_counted_and_named(shapes, server):
    db, _ = shapes
    cut = ["plain", "think-inline", "think-field", "think-reasoning", "think-bracket",
           "think-harmony"]
    args = ("--dataset", "demo", "--generator", _systems(server, cut), "--settings", "oracle",
            "--sample", str(SAMPLE), "--max-tokens", "20", "--name", "cut")
    plan = _ok(cli_run(*args, "--dry-run", db=db))
    for model in cut[1:]:        # its replies in run shapes thought: the plan says so
        assert re.search(rf"warning: \S+#{model}: .*too small to finish thinking", plan), plan
    assert not re.search(r"warning: \S+#plain:", plan)

    out = _ok(cli_run(*args, db=db))
    thinking = SAMPLE * (len(cut) - 1)
    assert f"{thinking} cut at the token limit ({thinking} while thinking)" in out, out
    text, as_json = run_together(_cli("report", "cut", db=db),
                                 _cli("report", "cut", "--json", db=db), cwd=ROOT)
    replies = {_model(r["system"]): r for r in json.loads(_ok(as_json))["replies"]}
    assert (replies["plain"]["cut"], replies["plain"]["cut_while_thinking"]) == (0, 0)
    for model in cut[1:]:
        assert (replies[model]["cut"], replies[model]["cut_while_thinking"]) == \
            (SAMPLE, SAMPLE), model
    words = _ok(text)
    assert "while" in words and "thinking" in words and "cut at the" in words.lower()
    report = json.loads(_ok(as_json))
    for system, per in report["metrics"].items():
        em = per["oracle"]["em_strict"]["value"]
        assert em == (1.0 if _model(system) == "plain" else 0.0), system
