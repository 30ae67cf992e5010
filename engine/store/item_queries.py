"""The SQL behind the Inspector's list (:mod:`engine.results.inspector`): one filter's
``FROM ... WHERE ...`` with its parameters and sort keys (:func:`item_query`), a page of it
in any order with keyset paging (:func:`page_sql`), its count (:func:`count_sql`), and the text
search over questions and responses (:func:`search_sql`, through the ``m011`` trigram index
when it can). What the filters mean (setting ranks, each system's mixed-like setting, the
patterns of a category) is worked out by :mod:`engine.results.item_queries` and given here."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from engine.store.database import Store
from engine.store.items import quote_sql, rank_case

# an item without a value sorts as this (SQLite reads the overflow as minus infinity)
NO_VALUE = "-1e999"
SORT_KEYS = ("system", "setting", "query", "language", "em", "pattern", "question", "response")
# the shortest text the trigram index finds; a shorter search is a LIKE over the walked items
MIN_INDEXED_SEARCH = 3
# a search with at most this many indexed matches (questions + responses, all runs) starts
# from them; one with more walks the run's items in order and stops after a page
SEARCH_FIRST_LIMIT = 2000


def _case(column: str, mapping: dict[str, object], default: str = "NULL") -> str:
    """``CASE column WHEN 'key' THEN value ... END`` (keys and string values quoted)."""
    if not mapping:
        return default
    whens = " ".join(f"WHEN {quote_sql(k)} THEN "
                     f"{quote_sql(v) if isinstance(v, str) else ('NULL' if v is None else v)}"
                     for k, v in mapping.items())
    return f"CASE {column} {whens} ELSE {default} END"


CUT_TERMS = {"limit": "(g.finish_reason = 'length' OR g.thinking_cut = 1)",
             "thinking": "g.thinking_cut = 1"}
"""The inspector's ``cut`` filter: each value's ``WHERE`` term over the item's generation."""


@dataclass
class ItemQuery:
    """The SQL behind one inspector filter (see :func:`item_query`): ``FROM ... WHERE ...``
    with its parameters, the columns of an :class:`ItemRow` and the setting rank (the
    third part of the order, after system and query), and the SQL of each sort key."""

    columns: str
    body: str
    params: list
    rank: str
    ranks: dict[str, int]
    keys: dict[str, str] = field(default_factory=dict)   # sort key -> its SQL expression
    lean_body: str = ""    # ``body`` without the label joins when no filter needs them
    joins: str = ""        # every join after ``run_items ri``


def item_query(store: Store, run_id: int, *, ranks: dict[str, int],
               default_mixed: dict[str, str | None], loose_metric: str,
               patterns: list[str] | None = None, system: str | None = None,
               setting: str | None = None, language: str | None = None,
               source: str | None = None, metric: str | None = None,
               min_value: float | None = None, max_value: float | None = None,
               mixed_setting: str | None = None, search: str | None = None,
               search_first: bool | None = None, cut: str | None = None) -> ItemQuery:
    """The inspector's filters as one indexed query over the run's items: every filter is a
    ``WHERE`` term, each ``loose_metric`` label (base, oracle, the mixed-like setting:
    ``mixed_setting``, else the item's own mixed-like setting, else its system's
    ``default_mixed``) a primary-key look-up, and the order ``(system, query_rowid, setting
    rank)`` walks the ``run_items_order`` index, so a page stops after its rows. ``patterns``
    keeps the items whose (b, o, m) pattern is one of them (None: no such filter). ``cut``
    keeps answers cut at the token limit (``'limit'``: ``finish_reason`` 'length' or thinking
    that never closed) or only those cut while thinking (``'thinking'``).

    A text search of three characters or more is looked up in the trigram indexes. When they
    hold few matches (at most :data:`SEARCH_FIRST_LIMIT`, or ``search_first`` True: a count
    needs every match anyway) the query starts from the matching items and sorts them (cost
    bounded by the matches); with more matches a page fills soon, and the ordered walk
    checks each item against the matches instead."""
    rank = rank_case(ranks)
    if mixed_setting is not None:
        mixed = quote_sql(mixed_setting)
    else:
        mixed = ("(CASE WHEN ri.setting = 'mixed' OR ri.setting GLOB 'retrieved@[0-9]*' "
                 f"THEN ri.setting ELSE {_case('ri.system', default_mixed)} END)")
    labels = " || ".join(f"'{k}' || CAST(ROUND(l{a}.value) AS INTEGER)"
                         for k, a in (("b", "b"), ("o", "o"), ("m", "m")))
    loose = quote_sql(loose_metric)
    text = search.strip() if search else ""
    indexed = len(text) >= MIN_INDEXED_SEARCH and _has_text_index(store)
    if indexed and search_first is None:
        search_first = _few_matches(store, fts_phrase(text))
    start, start_params = "run_items ri", []
    if indexed and search_first:
        start, start_params = _matching_items(run_id, text)
    item_joins = (
        "JOIN queries q ON q.id = ri.query_rowid "
        "LEFT JOIN generations g ON g.key = ri.generation_key "
        "LEFT JOIN scores sl ON sl.generation_key = ri.generation_key "
        f"AND sl.query_rowid = ri.query_rowid AND sl.metric = {loose} ")
    label_joins = "".join(
        f"LEFT JOIN run_items r{a} ON r{a}.run_id = ri.run_id AND r{a}.system = ri.system "
        f"AND r{a}.setting = {expr} AND r{a}.query_rowid = ri.query_rowid "
        f"LEFT JOIN scores l{a} ON l{a}.generation_key = r{a}.generation_key "
        f"AND l{a}.query_rowid = ri.query_rowid AND l{a}.metric = {loose} "
        for a, expr in (("b", "'base'"), ("o", "'oracle'"), ("m", mixed)))
    metric_join = (f"LEFT JOIN scores sm ON sm.generation_key = ri.generation_key "
                   f"AND sm.query_rowid = ri.query_rowid AND sm.metric = {quote_sql(metric)} "
                   if metric else "")
    joins = item_joins + label_joins + metric_join
    # what a sort by another key than the pattern needs (SQLite leaves out an unused LEFT
    # JOIN on a unique key, but not the label joins: each is used by the next one's ON)
    lean_joins = item_joins + (label_joins if patterns is not None else "") + metric_join
    where, params = ["ri.run_id = ?"], [run_id]
    for column, value in (("ri.system", system), ("ri.setting", setting),
                          ("q.language", language), ("q.source", source)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    for op, bound in ((">=", min_value), ("<=", max_value)):
        if metric is not None and bound is not None:
            where.append(f"sm.value {op} ?")
            params.append(bound)
    if cut is not None:
        where.append(CUT_TERMS[cut])
    if patterns is not None:
        where.append(f"({labels}) IN ({', '.join('?' * len(patterns)) or 'NULL'})")
        params += patterns
    if text and not (indexed and search_first):
        term, params_ = search_sql(text, indexed)
        where.append(term)
        params += params_
    columns = ("ri.system, ri.setting, ri.query_rowid, q.query_id, q.text AS query, "
               "q.language, q.source, g.text AS response, sl.value AS em_loose, "
               + ("sm.value" if metric else "NULL") + " AS value, "
               f"{mixed} AS mixed, {labels} AS pattern, ri.truncated, ri.error, "
               f"ri.generation_key, {rank} AS rank")
    keys = {"system": "ri.system", "setting": rank, "query": "q.query_id",
            "language": "COALESCE(q.language, '')", "em": f"COALESCE(sl.value, {NO_VALUE})",
            "pattern": f"COALESCE({labels}, '')", "question": "q.text",
            "response": "COALESCE(g.text, '')"}
    clause = "WHERE " + " AND ".join(where)
    return ItemQuery(columns, f"FROM {start} {joins}{clause}", [*start_params, *params], rank,
                     ranks, keys, f"FROM {start} {lean_joins}{clause}", joins)


def fts_phrase(text: str) -> str:
    """``text`` as one FTS5 phrase: in double quotes, its own double quotes doubled, so that
    nothing a user types (``AND``, ``*``, ``"``, ``NEAR(``, ``:``) is read as query syntax."""
    return '"' + text.replace('"', '""') + '"'


def _has_text_index(store: Store) -> bool:
    """Whether the workspace has the trigram indexes (an SQLite without the trigram tokenizer
    skipped them: :func:`engine.store.migrations.later.m011_text_search`)."""
    return bool(store.query("SELECT 1 FROM sqlite_master WHERE name = 'generations_fts'"))


def _few_matches(store: Store, phrase: str) -> bool:
    found = 0
    for fts in ("queries_fts", "generations_fts"):
        found += store.query(f"SELECT COUNT(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ? "
                             "LIMIT ?)", (phrase, SEARCH_FIRST_LIMIT + 1))[0][0]
    return found <= SEARCH_FIRST_LIMIT


def _matching_items(run_id: int, text: str) -> tuple[str, list]:
    """``FROM`` the run's items whose question or response contains ``text`` (or whose query
    id is it), found through the indexes: the matches come first (``CROSS JOIN`` keeps
    SQLite from reordering; ``+m.run_id`` from walking the run instead of the matching
    generations' items), each item a rowid look-up."""
    phrase = fts_phrase(text)
    hits = (
        "(SELECT m.rowid AS item FROM run_items m WHERE +m.run_id = ? AND m.generation_key IN "
        "(SELECT key FROM generations WHERE rowid IN (SELECT rowid FROM generations_fts "
        "WHERE generations_fts MATCH ?)) "
        "UNION SELECT m.rowid FROM run_items m WHERE m.query_rowid IN (SELECT rowid FROM "
        "queries_fts WHERE queries_fts MATCH ?) AND m.run_id = ? "
        "UNION SELECT m.rowid FROM run_items m WHERE m.query_rowid IN (SELECT id FROM queries "
        "WHERE dataset_id = (SELECT dataset_id FROM runs WHERE id = ?) AND query_id = ?) "
        "AND m.run_id = ?) hits CROSS JOIN run_items ri ON ri.rowid = hits.item")
    return hits, [run_id, phrase, phrase, run_id, run_id, text, run_id]


def search_sql(text: str, indexed: bool = True) -> tuple[str, list]:
    """The ``WHERE`` term of a text search: the question or the response contains ``text``
    (case-insensitive), or the query's id is ``text``. Three characters or more are looked up
    in the trigram indexes (migration ``m011_text_search``); shorter ones match so many items
    that a ``LIKE`` over the walked items fills a page at once (``indexed`` False: a ``LIKE``
    in any case, for a workspace without the indexes)."""
    if indexed and len(text) >= MIN_INDEXED_SEARCH:
        phrase = fts_phrase(text)
        return ("(ri.query_rowid IN (SELECT rowid FROM queries_fts WHERE queries_fts MATCH ?) "
                "OR g.rowid IN (SELECT rowid FROM generations_fts WHERE generations_fts "
                "MATCH ?) OR q.query_id = ?)", [phrase, phrase, text])
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return ("(q.text LIKE ? ESCAPE '\\' OR g.text LIKE ? ESCAPE '\\' OR q.query_id = ?)",
            [f"%{escaped}%", f"%{escaped}%", text])


def order_by(sql: ItemQuery, sort: str | None = None, descending: bool = False) -> str:
    """The ``ORDER BY`` terms of a view: ``sort``'s value (none for the default order, by
    system), then system, query and setting rank, all ascending or all descending."""
    direction = " DESC" if descending else ""
    tie = f"ri.system{direction}, ri.query_rowid{direction}, {sql.rank}{direction}"
    return tie if sort in (None, "system") else f"{sql.keys[sort]}{direction}, {tie}"


def page_sql(sql: ItemQuery, *, after: tuple | None = None, limit: int | None = 200,
             offset: int = 0, sort: str | None = None,
             descending: bool = False) -> tuple[str, list]:
    """The SQL text and parameters of one page of ``sql``'s items (``limit`` None: every row
    from ``after`` on; ``after``: the cursor of :func:`engine.results.inspector.item_cursor`).

    The default order (and ``sort="system"``) walks the ``run_items_order`` index, forwards or
    backwards, and stops after a page. Another sort orders by ``(value, system, query,
    setting rank)``, all in one direction: the page after a cursor is a row-value
    comparison, and SQLite keeps only the best ``limit`` rows of the filtered items while it
    walks them (a top-N sort: bounded by the filtered items, no index of its own; only the
    default order, by system, is indexed)."""
    body, params = sql.body, list(sql.params)
    order = order_by(sql, sort, descending)
    if sort in (None, "system"):
        if after is not None:
            a_system, a_query, a_setting = after
            ge, le = ("<=", ">=") if descending else (">=", "<=")
            body += (f" AND (ri.system, ri.query_rowid) {ge} (?, ?) AND NOT (ri.system = ? AND "
                     f"ri.query_rowid = ? AND {sql.rank} {le} ?)")
            params += [a_system, a_query, a_system, a_query, sql.ranks.get(a_setting, -1)]
    else:
        key = sql.keys[sort]
        if after is not None:
            value, a_system, a_query, a_setting = after
            if sort == "setting":
                value = sql.ranks.get(value, -1)
            body += (f" AND ({key}, ri.system, ri.query_rowid, {sql.rank}) "
                     f"{'<' if descending else '>'} (?, ?, ?, ?)")
            params += [value, a_system, a_query, sql.ranks.get(a_setting, -1)]
        # the page's items first, sorted with only the joins the filters and the key need
        # (SQLite leaves out every other LEFT JOIN: each is on a unique key), then their
        # columns for those rows alone
        lean = sql.body if sort == "pattern" else sql.lean_body
        page = (f"SELECT ri.rowid AS item {lean}{body[len(sql.body):]} ORDER BY {order} "
                "LIMIT ? OFFSET ?", [*params, -1 if limit is None else limit, offset])
        return (f"SELECT {sql.columns} FROM ({page[0]}) page CROSS JOIN run_items ri "
                f"ON ri.rowid = page.item {sql.joins}ORDER BY {order}", page[1])
    return (f"SELECT {sql.columns} {body} ORDER BY {order} LIMIT ? OFFSET ?",
            [*params, -1 if limit is None else limit, offset])


def count_sql(sql: ItemQuery) -> tuple[str, list]:
    """The SQL text and parameters that count ``sql``'s items."""
    return f"SELECT COUNT(*) {sql.lean_body}", list(sql.params)


def page_rows(store: Store, query: tuple[str, list]) -> list[sqlite3.Row]:
    """The rows of a :func:`page_sql` query."""
    text, params = query
    return store.query(text, tuple(params))


def count_of(store: Store, query: tuple[str, list]) -> int:
    """The count of a :func:`count_sql` query."""
    text, params = query
    return store.query(text, tuple(params))[0][0]


def view_rows(store: Store, sql: ItemQuery, order: str, extra: str):
    """A cursor over every item of ``sql`` in ``order`` with the ``extra`` columns too (an
    export of an inspector view)."""
    return store.iterate(f"SELECT {sql.columns}, {extra} {sql.body} ORDER BY {order}",
                         tuple(sql.params))
