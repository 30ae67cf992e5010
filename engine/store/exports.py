"""The cursors an export of a run reads (:mod:`engine.results.export`): the run's items with
their queries and generations, and their score rows, in one order so two cursors walk side by
side; for an inspector view, the scores of a page of items by generation key."""

from __future__ import annotations

import sqlite3
from typing import Iterable, Iterator

from engine.store.database import Store

GENERATION_COLUMNS = ("model_name", "prompt", "prompt_tokens", "completion_tokens",
                      "prompt_tokens_evaluated", "seconds", "finish_reason", "device",
                      "reasoning", "reasoning_tokens", "thinking_cut")
"""The generation's columns an export carries, by name (the last three only for a run
with reasoning: :func:`run_has_reasoning`)."""

VIEW_EXTRA = "ri.context, q.answers, " + ", ".join(f"g.{c}" for c in GENERATION_COLUMNS)
"""What an export of an inspector view reads beside the view's own columns."""


def export_items(store: Store, run_id: int, rank: str) -> Iterator[sqlite3.Row]:
    """The run's items with their query and generation, ordered by system, query and
    ``rank`` (a setting-rank expression over ``ri.setting``), as a cursor."""
    return store.iterate(
        "SELECT ri.system, ri.setting, ri.query_rowid, ri.generation_key, ri.truncated, "
        "ri.error, ri.context, q.query_id, q.language, q.source, q.text AS query, q.answers, "
        + ", ".join(f"g.{c}" for c in GENERATION_COLUMNS) + ", g.text AS response "
        "FROM run_items ri JOIN queries q ON q.id = ri.query_rowid "
        "LEFT JOIN generations g ON g.key = ri.generation_key "
        f"WHERE ri.run_id = ? ORDER BY ri.system, ri.query_rowid, {rank}", (run_id,))


def run_has_reasoning(store: Store, run_id: int) -> bool:
    """Whether any of the run's generations holds reasoning or was cut while thinking."""
    return bool(store.query(
        "SELECT 1 FROM run_items ri JOIN generations g ON g.key = ri.generation_key "
        "WHERE ri.run_id = ? AND (g.reasoning != '' OR g.reasoning_tokens > 0 "
        "OR g.thinking_cut = 1) LIMIT 1", (run_id,)))


def export_scores(store: Store, run_id: int, rank: str) -> Iterator[sqlite3.Row]:
    """The score rows of the run's items (``system, query_rowid, setting, metric, value,
    detail``) in :func:`export_items`' order, as a cursor."""
    return store.iterate(
        "SELECT ri.system, ri.query_rowid, ri.setting, s.metric, s.value, s.detail "
        "FROM run_items ri JOIN scores s ON s.generation_key = ri.generation_key "
        "AND s.query_rowid = ri.query_rowid WHERE ri.run_id = ? "
        f"ORDER BY ri.system, ri.query_rowid, {rank}", (run_id,))


def scores_of_generations(store: Store, keys: Iterable[str]) -> Iterator[sqlite3.Row]:
    """Every score row (``generation_key, query_rowid, metric, value, detail``) of the
    generations among ``keys``."""
    return store.query_in("SELECT generation_key, query_rowid, metric, value, detail "
                          "FROM scores WHERE generation_key IN ({marks})", keys)
