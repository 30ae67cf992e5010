"""What the run estimates read and what a model taught the workspace: model checks
(``model_checks``), stored generations' and judge calls' timings, the machine load a run or an
arena session started under, the sizes of a plan's texts, and contexts an endpoint named when
it refused a prompt (``endpoint_contexts``). The figures are computed in
:mod:`engine.runs.estimates` and :mod:`engine.runs.contexts`."""

from __future__ import annotations

import sqlite3
from typing import Sequence

from engine.store.database import Store, json_column


# --------------------------------------------------------------------------- model checks

def save_model_check(store: Store, model: str, kind: str | None, ok: bool,
                     device: str | None, prompt_tps: float | None, gen_tps: float | None,
                     result: str, at: str) -> None:
    with store.write() as db:
        db.conn.execute(
            "INSERT INTO model_checks (model, kind, ok, device, prompt_tps, gen_tps, result, "
            "checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (model, kind, int(ok), device, prompt_tps, gen_tps, result, at))


def newest_check(store: Store, names: Sequence[str]) -> sqlite3.Row | None:
    """``result, checked_at`` of the newest check stored under any of ``names``."""
    names = tuple(dict.fromkeys(names))
    rows = store.query("SELECT result, checked_at FROM model_checks WHERE model IN "
                       f"({', '.join('?' * len(names))}) ORDER BY checked_at DESC, id DESC "
                       "LIMIT 1", names)
    return rows[0] if rows else None


def checked_models(store: Store) -> list[str]:
    """Every name a model check is stored under."""
    return [r[0] for r in store.query("SELECT DISTINCT model FROM model_checks")]


def newest_checks(store: Store) -> list[sqlite3.Row]:
    """``model, result, checked_at`` of every checked model's newest check."""
    return store.query(
        "SELECT model, result, checked_at FROM model_checks WHERE id IN "
        "(SELECT id FROM model_checks c WHERE c.model = model_checks.model "
        "ORDER BY checked_at DESC, id DESC LIMIT 1)")


def newest_speed_check(store: Store, names: Sequence[str]) -> sqlite3.Row | None:
    """``prompt_tps, gen_tps, device, checked_at, result`` of the newest successful check
    with a generation speed stored under any of ``names``."""
    names = tuple(dict.fromkeys(names))
    rows = store.query(
        "SELECT prompt_tps, gen_tps, device, checked_at, result FROM model_checks WHERE model "
        f"IN ({', '.join('?' * len(names))}) AND ok = 1 AND gen_tps > 0 "
        "ORDER BY checked_at DESC, id DESC LIMIT 1", names)
    return rows[0] if rows else None


# --------------------------------------------------------------------------- generations

def timed_generations(store: Store, model: str, limit: int) -> list[sqlite3.Row]:
    """The newest ``limit`` timed generations of ``model``: ``prompt tokens evaluated,
    completion tokens, seconds, created_at, one run item's setting, the first run that holds
    it (the one that generated it), the prompt's UTF-8 bytes, its tokens`` (newest first, down
    the ``generations_by_model`` index: no scan, no sort)."""
    return store.query(
        "SELECT g.prompt_tokens_evaluated, g.completion_tokens, g.seconds, g.created_at, "
        "(SELECT ri.setting FROM run_items ri WHERE ri.generation_key = g.key LIMIT 1), "
        "(SELECT MIN(ri.run_id) FROM run_items ri WHERE ri.generation_key = g.key), "
        "LENGTH(CAST(g.prompt AS BLOB)), g.prompt_tokens "
        "FROM generations g WHERE g.model_name = ? AND g.seconds > 0 "
        "ORDER BY g.created_at DESC LIMIT ?", (model, limit))


def stored_item_params(store: Store, queries: Sequence[int]) -> list[sqlite3.Row]:
    """``system, setting, query_rowid, params`` of every run item of ``queries`` that holds a
    generation (any run's): what the generation cache may answer a plan's items from."""
    queries = tuple(dict.fromkeys(queries))
    out: list[sqlite3.Row] = []
    for start in range(0, len(queries), 500):         # well within SQLite's variables
        part = queries[start:start + 500]
        out += store.query(
            "SELECT DISTINCT ri.system, ri.setting, ri.query_rowid, g.params FROM run_items ri "
            "JOIN generations g ON g.key = ri.generation_key "
            f"WHERE ri.query_rowid IN ({', '.join('?' * len(part))})", part)
    return out


def run_session_loads(store: Store, run_id: int) -> list:
    """The machine loads the sessions of run ``run_id``'s header recorded
    (:meth:`engine.machine_load.MachineLoad.as_json`, as stored), newest session first."""
    rows = store.query("SELECT header FROM runs WHERE id = ?", (run_id,))
    return session_loads(rows[0][0]) if rows else []


def session_loads(header_text: str | None) -> list:
    """The ``load`` of each session of a run's or an arena's header (JSON text), newest first
    (None for a session without one); empty for a header without sessions."""
    header = json_column(header_text, {})
    sessions = header.get("sessions") if isinstance(header, dict) else None
    return [s.get("load") if isinstance(s, dict) else None
            for s in reversed(sessions if isinstance(sessions, list) else [])]


# --------------------------------------------------------------------------- judge calls

def timed_judgments(store: Store, names: Sequence[str], limit: int) -> list[sqlite3.Row]:
    """The newest ``limit`` timed judge calls of the judge stored under any of ``names``:
    ``fields`` (JSON), ``method``, ``raw`` reply, ``seconds``, ``created_at`` (newest first,
    in the order they were made)."""
    names = tuple(dict.fromkeys(names))
    return store.query(
        "SELECT fields, method, raw, seconds, created_at FROM judgments WHERE judge_name IN "
        f"({', '.join('?' * len(names))}) AND seconds > 0 ORDER BY created_at DESC, rowid DESC "
        "LIMIT ?",
        (*names, limit))


def newest_arena_session_loads(store: Store, names: Sequence[str]) -> list:
    """:func:`session_loads` of the arena last judged by the judge named any of ``names``."""
    names = tuple(dict.fromkeys(names))
    rows = store.query(
        "SELECT header FROM arenas WHERE json_extract(header, '$.judge.name') IN "
        f"({', '.join('?' * len(names))}) ORDER BY updated_at DESC, id DESC LIMIT 1", names)
    return session_loads(rows[0][0]) if rows else []


def text_bytes(store: Store, queries: list[int]) -> tuple[dict[int, int], dict[int, float]]:
    """UTF-8 bytes of each query's text, and the mean bytes of its pool chunks."""
    question = {r[0]: len(r[1].encode("utf-8")) for r in store.query_in(
        "SELECT id, text FROM queries WHERE id IN ({marks})", queries)}
    chunk = {r[0]: r[1] or 0 for r in store.query_in(
        "SELECT p.query_rowid, AVG(LENGTH(CAST(c.text AS BLOB))) FROM pool p "
        "JOIN chunks c ON c.id = p.chunk_rowid WHERE p.query_rowid IN ({marks}) "
        "GROUP BY p.query_rowid", queries)}
    return question, chunk


# --------------------------------------------------------------------------- contexts

def learned_context(store: Store, key: str) -> int | None:
    """The context endpoint ``key`` named in a refusal, if one was kept."""
    rows = store.query("SELECT context_length FROM endpoint_contexts WHERE endpoint = ?",
                       (key,))
    return int(rows[0][0]) if rows else None


def keep_learned_context(store: Store, key: str, tokens: int, message: str, at: str) -> None:
    with store.write() as db:
        db.conn.execute(
            "INSERT INTO endpoint_contexts (endpoint, context_length, message, learned_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (endpoint) DO UPDATE SET context_length = "
            "excluded.context_length, message = excluded.message, "
            "learned_at = excluded.learned_at", (key, tokens, message, at))
