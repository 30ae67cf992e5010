"""The arena's tables (migration m003): ``arenas`` (one per run and name), ``battles`` (one
judged comparison each) and the ``judgments`` cache (one row per judge call); people's own
verdicts entered in the app (m007: a ``labels`` dataset of format ``app`` per run, its
``label_pairs`` and ``human_labels``); and what judging reads of a run (its answers, its
queries' facts and supporting documents). :mod:`engine.arena` turns rows into battles,
ratings and reports; nothing here decides anything."""

from __future__ import annotations

import json
import sqlite3
from typing import Iterable

import sqlite_utils

from engine.store.database import Store

# --------------------------------------------------------------------------- arenas


def arena_rows(store: Store, run_id: int) -> list[sqlite3.Row]:
    """The run's arenas, oldest first, each with ``n`` (battles), ``pf`` (parse failures)
    and ``unparsed`` (battles without a winner)."""
    return store.query(
        "SELECT a.*, COUNT(b.arena_id) AS n, COALESCE(SUM(b.parse_failures), 0) AS pf, "
        "COALESCE(SUM(b.arena_id IS NOT NULL AND b.winner IS NULL), 0) AS unparsed "
        "FROM arenas a LEFT JOIN battles b ON b.arena_id = a.id WHERE a.run_id = ? "
        "GROUP BY a.id ORDER BY a.id", (run_id,))


def arena_by_name(db: sqlite_utils.Database, run_id: int, name: str) -> sqlite3.Row | None:
    """``id, config, header`` of the run's arena ``name`` (inside a write), or None."""
    return db.conn.execute("SELECT id, config, header FROM arenas WHERE run_id = ? AND "
                           "name = ?", (run_id, name)).fetchone()


def insert_arena(db: sqlite_utils.Database, run_id: int, name: str, mode: str, config: dict,
                 header: str, stamp: str) -> int:
    """A new arena row with its ``header`` text (``engine.arena.header.ArenaHeader``), status
    ``planned``; its id."""
    return db.conn.execute(
        "INSERT INTO arenas (run_id, name, mode, config, header, status, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, 'planned', ?, ?)",
        (run_id, name, mode, json.dumps(config, ensure_ascii=False),
         header, stamp, stamp)).lastrowid


def start_arena(db: sqlite_utils.Database, arena_id: int, config: dict, header: str,
                stamp: str) -> None:
    """The arena's config and header text as this session starts, status ``running``."""
    db.conn.execute("UPDATE arenas SET config = ?, header = ?, status = 'running', "
                    "updated_at = ? WHERE id = ?",
                    (json.dumps(config, ensure_ascii=False), header, stamp, arena_id))


def end_arena(store: Store, arena_id: int, header: str, status: str, stamp: str) -> None:
    """The arena's header text and status as a session ends (one transaction)."""
    with store.write() as db:
        db.conn.execute("UPDATE arenas SET header = ?, status = ?, updated_at = ? "
                        "WHERE id = ?", (header, status, stamp, arena_id))


# --------------------------------------------------------------------------- battles

def battle_states(db: sqlite_utils.Database, arena_id: int) -> list[sqlite3.Row]:
    """``query_rowid, system_a, system_b, winner, parse_failures, detail`` of every stored
    battle of the arena (inside a write: what a resumed judging skips)."""
    return db.conn.execute("SELECT query_rowid, system_a, system_b, winner, "
                           "parse_failures, detail FROM battles WHERE arena_id = ?",
                           (arena_id,)).fetchall()


def save_battle(store: Store, arena_id: int, query_rowid: int, system_a: str, system_b: str,
                winner: str | None, shown: str, judgment_keys: list[str], parse_failures: int,
                refusal: int, detail: dict, created_at: str) -> None:
    """One battle, replacing a stored one of the same query and contestants (one
    transaction: a battle is stored whole or not at all)."""
    with store.write() as db:
        db.conn.execute(
            "INSERT OR REPLACE INTO battles (arena_id, query_rowid, system_a, system_b, "
            "winner, shown, judgment_keys, parse_failures, refusal, detail, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (arena_id, query_rowid, system_a, system_b, winner, shown,
             json.dumps(judgment_keys), parse_failures, refusal,
             json.dumps(detail, ensure_ascii=False), created_at))


def battle_winners(store: Store, arena_id: int) -> list[sqlite3.Row]:
    """``query_rowid, system_a, system_b, winner`` of the arena's battles, by query and
    contestants."""
    return store.query("SELECT query_rowid, system_a, system_b, winner FROM battles "
                       "WHERE arena_id = ? ORDER BY query_rowid, system_a, system_b",
                       (arena_id,))


def battles_with_queries(store: Store, arena_id: int) -> list[sqlite3.Row]:
    """Every column of the arena's battles with their query's ``query_id``, ``source`` and
    ``language``, by query and contestants."""
    return store.query(
        "SELECT b.*, q.query_id, q.source, q.language FROM battles b "
        "JOIN queries q ON q.id = b.query_rowid WHERE b.arena_id = ? "
        "ORDER BY b.query_rowid, b.system_a, b.system_b", (arena_id,))


def reference_battle_rows(store: Store, arena_id: int) -> list[sqlite3.Row]:
    """``query_rowid, system_a, system_b, winner, parse_failures, refusal, source`` of the
    arena's battles (a reference arena's report)."""
    return store.query(
        "SELECT b.query_rowid, b.system_a, b.system_b, b.winner, b.parse_failures, "
        "b.refusal, q.source FROM battles b JOIN queries q ON q.id = b.query_rowid "
        "WHERE b.arena_id = ?", (arena_id,))


def query_battles(store: Store, run_id: int, query_rowid: int) -> list[sqlite3.Row]:
    """Every battle on one query in the run's arenas with its arena's ``name, mode,
    config``, by arena (oldest first), then contestants."""
    return store.query(
        "SELECT a.name, a.mode, a.config, b.system_a, b.system_b, b.winner, b.shown, "
        "b.parse_failures, b.detail FROM battles b JOIN arenas a ON a.id = b.arena_id "
        "WHERE a.run_id = ? AND b.query_rowid = ? ORDER BY a.id, b.system_a, b.system_b",
        (run_id, query_rowid))


# --------------------------------------------------------------------------- judgments

def judgment_row(store: Store, key: str) -> sqlite3.Row | None:
    """The cached judge call ``key``, or None."""
    rows = store.query("SELECT * FROM judgments WHERE key = ?", (key,))
    return rows[0] if rows else None


def save_judgment(store: Store, key: str, judge_key: str, judge_name: str | None,
                  template: str | None, fields: dict, label: str | None, probs: dict | None,
                  method: str | None, raw: str | None, parse_failed: bool,
                  fallback_reason: str | None, seconds: float, created_at: str) -> None:
    """One judge call (``probs``: label text -> probability, or None), in its own
    transaction."""
    with store.write() as db:
        db.execute(
            "INSERT OR REPLACE INTO judgments (key, judge_key, judge_name, template, fields, "
            "label, probs, method, raw, parse_failed, fallback_reason, seconds, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, judge_key, judge_name, template,
             json.dumps(fields, ensure_ascii=False, default=str), label,
             None if probs is None else json.dumps(probs), method, raw,
             int(parse_failed), fallback_reason, seconds, created_at))


def judgment_raws(store: Store, keys: Iterable[str]) -> dict[str, str | None]:
    """``{key: raw reply}`` of the cached judge calls among ``keys``."""
    return {j["key"]: j["raw"] for j in store.query_in(
        "SELECT key, raw FROM judgments WHERE key IN ({marks})", sorted(keys))}


# --------------------------------------------------------------------------- human verdicts

def save_app_verdict(store: Store, dataset: str, content_hash: str, description: str,
                     pair_id: str, query: str, domain: str | None, answer_a: str,
                     answer_b: str, annotator: str, label: int, note: str | None,
                     created_at: str) -> None:
    """A person's verdict on one answer pair of the app's labels dataset ``dataset``, in one
    transaction: the dataset (kind ``labels``, format ``app``, next version of the name) and
    the pair are created when missing; the person's earlier label on the pair is replaced."""
    with store.write() as db:
        conn = db.conn
        row = conn.execute("SELECT id FROM datasets WHERE name = ? AND format = 'app' "
                           "ORDER BY version DESC LIMIT 1", (dataset,)).fetchone()
        if row is None:
            version = conn.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM datasets "
                                   "WHERE name = ?", (dataset,)).fetchone()[0]
            dataset_id = conn.execute(
                "INSERT INTO datasets (name, version, kind, format, content_hash, created_at, "
                "description) VALUES (?, ?, 'labels', 'app', ?, ?, ?)",
                (dataset, version, content_hash, created_at, description)).lastrowid
        else:
            dataset_id = row[0]
        found = conn.execute("SELECT id FROM label_pairs WHERE dataset_id = ? AND pair_id = ?",
                             (dataset_id, pair_id)).fetchone()
        if found is None:
            pair_rowid = conn.execute(
                "INSERT INTO label_pairs (dataset_id, pair_id, query, reference, answer_a, "
                "answer_b, domain, metadata) VALUES (?, ?, ?, NULL, ?, ?, ?, NULL)",
                (dataset_id, pair_id, query, answer_a, answer_b, domain)).lastrowid
        else:
            pair_rowid = found[0]
        conn.execute(
            "INSERT OR REPLACE INTO human_labels (pair_rowid, annotator, aspect, label, note, "
            "source, created_at) VALUES (?, ?, 'overall', ?, ?, 'app', ?)",
            (pair_rowid, annotator, label, note, created_at))


def app_verdict_rows(store: Store, dataset: str, pair_like: str) -> list[sqlite3.Row]:
    """``pair_id, annotator, label, note, created_at, source`` of the labels people entered
    in the app's labels dataset ``dataset`` on pairs whose id is ``LIKE pair_like``, oldest
    first."""
    return store.query(
        "SELECT p.pair_id, l.annotator, l.label, l.note, l.created_at, l.source "
        "FROM human_labels l JOIN label_pairs p ON p.id = l.pair_rowid "
        "JOIN datasets d ON d.id = p.dataset_id WHERE d.name = ? AND d.format = 'app' "
        "AND p.pair_id LIKE ? ORDER BY l.created_at", (dataset, pair_like))


def all_app_verdict_rows(store: Store) -> list[sqlite3.Row]:
    """``dataset, pair_id, query, domain, annotator, label, note, created_at`` of every label
    people entered in the app, in every run's labels dataset (format ``app``), oldest
    first."""
    return store.query(
        "SELECT d.name AS dataset, p.pair_id, p.query, p.domain, l.annotator, l.label, l.note, "
        "l.created_at FROM human_labels l JOIN label_pairs p ON p.id = l.pair_rowid "
        "JOIN datasets d ON d.id = p.dataset_id WHERE d.format = 'app' "
        "ORDER BY l.created_at, d.name, p.pair_id")


# --------------------------------------------------------------------------- what judging reads

def run_answers(store: Store, run_id: int) -> list[sqlite3.Row]:
    """``system, setting, query_rowid, text, no_answer`` of every generated item of the run
    (``no_answer``: the stored ``no_answer`` score, NULL when there is none)."""
    return store.query(
        "SELECT ri.system, ri.setting, ri.query_rowid, g.text, s.value AS no_answer "
        "FROM run_items ri JOIN generations g ON g.key = ri.generation_key "
        "LEFT JOIN scores s ON s.generation_key = ri.generation_key "
        "AND s.query_rowid = ri.query_rowid AND s.metric = 'no_answer' "
        "WHERE ri.run_id = ?", (run_id,))


def run_contestant_rows(store: Store, run_id: int) -> list[tuple]:
    """``(system, setting)`` of every pair of the run with at least one generation."""
    return store.query("SELECT DISTINCT system, setting FROM run_items WHERE run_id = ? "
                       "AND generation_key IS NOT NULL", (run_id,))


def answered_queries(store: Store, run_id: int) -> list[int]:
    """The rowids of the queries the run has a generation for."""
    return [r[0] for r in store.query(
        "SELECT DISTINCT query_rowid FROM run_items WHERE run_id = ? "
        "AND generation_key IS NOT NULL", (run_id,))]


def query_facts(store: Store, rowids: Iterable[int]) -> dict[int, dict]:
    """``{rowid: {id, query_id, text, source, language, reference_answer}}`` of the
    queries."""
    return {r["id"]: dict(r) for r in store.query_in(
        "SELECT id, query_id, text, source, language, reference_answer FROM queries "
        "WHERE id IN ({marks})", sorted(rowids))}


def query_references(store: Store, rowids: Iterable[int]) -> list[sqlite3.Row]:
    """``id, answers, reference_answer`` of the queries (in the order given)."""
    return list(store.query_in("SELECT id, answers, reference_answer FROM queries "
                               "WHERE id IN ({marks})", list(rowids)))


def supporting_chunks(store: Store, rowids: Iterable[int]) -> list[sqlite3.Row]:
    """``query_rowid, chunk_id, title, text`` of each query's supporting pool chunks
    (``support = 1``): by query, the oracle first, then pool order."""
    return list(store.query_in(
        "SELECT p.query_rowid, c.chunk_id, c.title, c.text FROM pool p "
        "JOIN chunks c ON c.id = p.chunk_rowid WHERE p.support = 1 AND "
        "p.query_rowid IN ({marks}) ORDER BY p.query_rowid, p.is_oracle DESC, "
        "p.position IS NULL, p.position, c.id", sorted(rowids)))


def query_answer_rows(store: Store, run_id: int, query_rowid: int) -> list[sqlite3.Row]:
    """``system, setting, text`` of the run's generated items of one query, by system, then
    the order they were planned in."""
    return store.query(
        "SELECT ri.system, ri.setting, g.text FROM run_items ri "
        "JOIN generations g ON g.key = ri.generation_key "
        "WHERE ri.run_id = ? AND ri.query_rowid = ? ORDER BY ri.system, ri.rowid",
        (run_id, query_rowid))


def query_text_source(store: Store, query_rowid: int) -> sqlite3.Row:
    """``text, source`` of one query (IndexError when there is none)."""
    return store.query("SELECT text, source FROM queries WHERE id = ?", (query_rowid,))[0]
