"""The read side of a run's items: its items and their score rows (as rows, or as tuples for
the columns a report reads), its settings, metrics and counts, and what one item opens to (its
query, its generations, the pool, the retrievers' rankings). Rows and plain values only: what
they mean (setting order, metric order, categories) is :mod:`engine.results.records`'."""

from __future__ import annotations

import sqlite3
from typing import Iterable, Sequence

from engine.store.database import Store


def quote_sql(value: str) -> str:
    """``value`` as an SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def rank_case(ranks: dict[str, int], column: str = "ri.setting") -> str:
    """The ``CASE`` expression that gives ``column``'s rank in ``ranks`` (0 for any other)."""
    if not ranks:
        return "0"
    whens = " ".join(f"WHEN {quote_sql(k)} THEN {v}" for k, v in ranks.items())
    return f"CASE {column} {whens} ELSE 0 END"


# ---------------------------------------------------------------- items as rows (load_items)


def item_rows(store: Store, run_id: int) -> list[sqlite3.Row]:
    """Every item of the run with its query's id, language and source (no order)."""
    return store.query(
        "SELECT ri.system, ri.setting, ri.query_rowid, ri.generation_key, ri.truncated, "
        "ri.error, ri.context, q.query_id, q.language, q.source "
        "FROM run_items ri JOIN queries q ON q.id = ri.query_rowid WHERE ri.run_id = ?",
        (run_id,))


def item_score_rows(store: Store, run_id: int, metrics: Sequence[str] | None,
                    details: bool, detail_metric: str) -> list[sqlite3.Row]:
    """The score rows of the run's items (``system, setting, query_rowid, metric, value,
    detail``): every metric, or those in ``metrics``; the detail text of every row when
    ``details``, else of ``detail_metric``'s rows only (NULL for the others)."""
    sql = ("SELECT ri.system, ri.setting, ri.query_rowid, s.metric, s.value, "
           + ("s.detail" if details
              else f"CASE WHEN s.metric = {quote_sql(detail_metric)} THEN s.detail END")
           + " AS detail FROM run_items ri JOIN scores s ON s.generation_key = ri.generation_key "
           "AND s.query_rowid = ri.query_rowid WHERE ri.run_id = ?")
    params: list = [run_id]
    if metrics is not None:
        sql += f" AND s.metric IN ({', '.join('?' for _ in metrics)})"
        params += list(metrics)
    return store.query(sql, tuple(params))


# ---------------------------------------------------------------- items as columns (load_columns)


def column_item_tuples(store: Store, run_id: int) -> list[tuple]:
    """``(rowid, system, setting, query_rowid, has generation, has error, truncated, language,
    source)`` per item, in the run's key order (system, setting, query rowid)."""
    return store.query_tuples(
        "SELECT ri.rowid, ri.system, ri.setting, ri.query_rowid, ri.generation_key IS NOT NULL, "
        "COALESCE(ri.error, '') != '', ri.truncated, q.language, q.source "
        "FROM run_items ri JOIN queries q ON q.id = ri.query_rowid WHERE ri.run_id = ? "
        "ORDER BY ri.system, ri.setting, ri.query_rowid", (run_id,))


def _column_scores(run_id: int, known: Sequence[str],
                   metrics: Sequence[str] | None) -> tuple[str, str, tuple]:
    """``(code expression, FROM ... WHERE ..., params)`` of the run's metric score rows (marker
    rows ``_…`` and arena features ``feat:…`` left out): a metric's code is its 1-based place
    in ``known``, 0 for any other name."""
    code_sql = ("CASE s.metric " + " ".join(f"WHEN {quote_sql(m)} THEN {i}"
                                           for i, m in enumerate(known, start=1)) + " ELSE 0 END")
    where = ("FROM run_items ri JOIN scores s "
             "ON s.generation_key = ri.generation_key AND s.query_rowid = ri.query_rowid "
             "WHERE ri.run_id = ? AND s.metric NOT LIKE '\\_%' ESCAPE '\\' "
             "AND s.metric NOT LIKE 'feat:%'")      # arena features: the surrogate's, not ours
    params: list = [run_id]
    if metrics is not None:
        where += f" AND s.metric IN ({', '.join('?' for _ in metrics)})"
        params += list(metrics)
    return code_sql, where, tuple(params)


def packed_score_tuples(store: Store, run_id: int, known: Sequence[str],
                        metrics: Sequence[str] | None) -> list[tuple]:
    """``(item rowid * 64 + metric code, value)`` per score row of the run (see
    :func:`_column_scores`): two small numbers a row, not a string."""
    code_sql, where, params = _column_scores(run_id, known, metrics)
    return store.query_tuples(f"SELECT ri.rowid * 64 + {code_sql}, s.value {where}", params)


def other_score_tuples(store: Store, run_id: int, known: Sequence[str],
                       metrics: Sequence[str] | None) -> list[tuple]:
    """``(item rowid, metric, value)`` of the run's score rows whose metric is not in
    ``known``."""
    code_sql, where, params = _column_scores(run_id, known, metrics)
    return store.query_tuples(f"SELECT ri.rowid, s.metric, s.value {where} AND {code_sql} = 0",
                              params)


# ---------------------------------------------------------------- aggregates


def run_settings(store: Store, run_id: int) -> dict[str, list[str]]:
    """Each system's settings in the run (an aggregate over the run's key, no item loaded)."""
    out: dict[str, list[str]] = {}
    for r in store.query("SELECT DISTINCT system, setting FROM run_items WHERE run_id = ?",
                         (run_id,)):
        out.setdefault(r[0], []).append(r[1])
    return out


def run_metric_names(store: Store, run_id: int) -> list[str]:
    """Every metric any item of the run has (marker rows ``_…`` left out), unordered."""
    return [r[0] for r in store.query(
        "SELECT DISTINCT s.metric FROM run_items ri JOIN scores s "
        "ON s.generation_key = ri.generation_key AND s.query_rowid = ri.query_rowid "
        "WHERE ri.run_id = ? AND s.metric NOT LIKE '\\_%' ESCAPE '\\'", (run_id,))]


def count_run_items(store: Store, run_id: int) -> int:
    """How many items of the run are stored."""
    return store.query("SELECT COUNT(*) FROM run_items WHERE run_id = ?", (run_id,))[0][0]


def run_counters(store: Store, run_id: int) -> tuple[int, int, int, int]:
    """``(items, generated, errors, truncated)`` from the run's ``run_counts`` row (zeros when
    it has none)."""
    rows = store.query("SELECT items, generated, errors, truncated FROM run_counts "
                       "WHERE run_id = ?", (run_id,))
    return tuple(rows[0]) if rows else (0, 0, 0, 0)


def run_query_rowids(store: Store, run_id: int) -> list[int]:
    """The rowids of the queries the run has items of, ascending."""
    return [r[0] for r in store.query(
        "SELECT DISTINCT query_rowid FROM run_items WHERE run_id = ? ORDER BY query_rowid",
        (run_id,))]


def run_systems(store: Store, run_id: int) -> list[str]:
    """The run's systems, sorted."""
    return [r[0] for r in store.query(
        "SELECT DISTINCT system FROM run_items WHERE run_id = ? ORDER BY system", (run_id,))]


def run_query_values(store: Store, run_id: int, column: str) -> list[str]:
    """The distinct non-NULL values of the queries' ``column`` (``language``, ``source``) among
    the run's items, sorted."""
    if column not in ("language", "source"):
        raise ValueError(f"not a query facet: {column!r}")
    return sorted(r[0] for r in store.query(
        f"SELECT DISTINCT q.{column} FROM run_items ri JOIN queries q "
        f"ON q.id = ri.query_rowid WHERE ri.run_id = ? AND q.{column} IS NOT NULL",
        (run_id,)))


# ---------------------------------------------------------------- one item opened




def query_texts(store: Store, rowids: Iterable[int]) -> dict[int, str]:
    """``{rowid: text}`` of the queries among ``rowids``."""
    return {r[0]: r[1] for r in store.query_in(
        "SELECT id, text FROM queries WHERE id IN ({marks})", sorted(set(rowids)))}


def setting_rows(store: Store, run_id: int, system: str, query_rowid: int) -> list[sqlite3.Row]:
    """The system's items for one query (any order), each with its generation's prompt, text
    and facts (NULL without a generation)."""
    return store.query(
        "SELECT ri.setting, ri.context, ri.truncated, ri.error, ri.generation_key, g.prompt, "
        "g.text, g.model_name, g.prompt_tokens, g.completion_tokens, g.seconds, "
        "g.finish_reason, g.reasoning, g.reasoning_tokens, g.thinking_cut "
        "FROM run_items ri LEFT JOIN generations g ON g.key = ri.generation_key "
        "WHERE ri.run_id = ? AND ri.system = ? AND ri.query_rowid = ?",
        (run_id, system, query_rowid))


def generation_scores(store: Store, generation_key: str, query_rowid: int) -> list[sqlite3.Row]:
    """Every score row (``metric, value, detail``) of one generation for one query."""
    return store.query("SELECT metric, value, detail FROM scores WHERE generation_key = ? "
                       "AND query_rowid = ?", (generation_key, query_rowid))




def ranked_json(store: Store, retriever: str, query_rowid: int) -> str | None:
    """The stored ranking (JSON ``[[chunk rowid, score], ...]``) of a retriever for a query."""
    rows = store.query("SELECT ranked FROM retrievals WHERE retriever = ? AND query_rowid = ?",
                       (retriever, query_rowid))
    return rows[0][0] if rows else None


def chunk_rows(store: Store, rowids: Sequence[int]) -> list[sqlite3.Row]:
    """``id, chunk_id, title, text`` of the chunks among ``rowids``."""
    return store.query("SELECT id, chunk_id, title, text FROM chunks WHERE id IN "
                       f"({', '.join('?' * len(rowids))})", tuple(rowids))


def reply_facts(store: Store, run_id: int) -> list[sqlite3.Row]:
    """``system, setting, query_rowid, cut, thinking_cut, reasoning_tokens, reasoning`` (the
    last 1 when it has reasoning text) of each of the run's items with a generation: ``cut``
    1 when the answer was cut at the token limit (``finish_reason`` 'length') or its thinking
    never closed."""
    return store.query(
        "SELECT ri.system, ri.setting, ri.query_rowid, "
        "(g.finish_reason = 'length' OR g.thinking_cut = 1) AS cut, g.thinking_cut, "
        "g.reasoning_tokens, g.reasoning != '' AS reasoning FROM run_items ri "
        "JOIN generations g ON g.key = ri.generation_key WHERE ri.run_id = ?", (run_id,))


def cut_counts(store: Store, run_id: int) -> dict[str, tuple[int, int, int]]:
    """``{system: (answers, cut at the token limit, of them cut while thinking)}`` of the
    run's items with a generation (one aggregate query: Live, the Runs summary, the run's
    summary line)."""
    rows = store.query(
        "SELECT ri.system, COUNT(*), "
        "COALESCE(SUM(g.finish_reason = 'length' OR g.thinking_cut = 1), 0), "
        "COALESCE(SUM(g.thinking_cut = 1), 0) FROM run_items ri "
        "JOIN generations g ON g.key = ri.generation_key WHERE ri.run_id = ? "
        "GROUP BY ri.system", (run_id,))
    return {r[0]: (int(r[1]), int(r[2]), int(r[3])) for r in rows}


def cut_flags(store: Store, keys: Iterable[str]) -> dict[str, tuple[int, int]]:
    """``{generation key: (cut at the token limit, cut while thinking)}`` (each 0 or 1) of
    the stored generations among ``keys``."""
    return {r[0]: (int(r[1]), int(r[2])) for r in store.query_in(
        "SELECT key, (finish_reason = 'length' OR thinking_cut = 1), thinking_cut "
        "FROM generations WHERE key IN ({marks})", sorted(set(keys)))}
