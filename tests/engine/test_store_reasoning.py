"""Reasoning kept beside the answer in the store: a workspace written before the reasoning
columns opens, its generations read unchanged with no reasoning."""

from __future__ import annotations

import sqlite3

from engine.store import MIGRATIONS, Store
from engine.store.migrations import schema


def test_an_older_workspace_opens_and_reads_unchanged(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    before = [m for m in MIGRATIONS if m[0] < "m017_reasoning"]
    monkeypatch.setattr(schema, "MIGRATIONS", before)
    conn = sqlite3.connect(path, isolation_level=None)
    schema.migrate(conn)
    conn.execute(
        "INSERT INTO generations (key, model_key, model_name, prompt, params, text, "
        "prompt_tokens, completion_tokens, prompt_tokens_evaluated, seconds, finish_reason, "
        "device, created_at) VALUES ('k', 'mk', 'm', 'p', '{}', "
        "'<think>x</think> Paris', 5, 9, 5, 0.5, 'stop', 'cpu', '2026-01-01 00:00:00')")
    conn.close()
    monkeypatch.undo()

    store = Store(path)
    assert "m017_reasoning" in [r[0] for r in store.query("SELECT name FROM _migrations")]
    row = store.query("SELECT text, completion_tokens, finish_reason, reasoning, "
                      "reasoning_tokens, thinking_cut FROM generations WHERE key = 'k'")[0]
    # the stored text is as it was (re-split only when asked), with no reasoning
    assert tuple(row) == ("<think>x</think> Paris", 9, "stop", "", 0, 0)
