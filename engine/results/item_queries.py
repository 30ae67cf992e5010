"""The SQL behind the inspector's list (:mod:`engine.results.inspector`): one filter's
``FROM ... WHERE ...`` with its parameters and sort keys (:func:`items_sql`), and the text
search over questions and responses (:func:`search_sql`, through the ``m011`` trigram index
when it can). Building queries here; running them and shaping rows stay in ``inspector``."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.metrics.adaptability import PATTERN_KEYS, category_of
from engine.results.records import (LOOSE_METRIC, is_mixed_like, quote_sql,
                                    run_settings, setting_order, setting_rank_sql)
from engine.store import Store


def _default_mixed(settings: set[str]) -> str | None:
    if "mixed" in settings:
        return "mixed"
    mixed_like = sorted((s for s in settings if is_mixed_like(s)), key=setting_order)
    return mixed_like[0] if mixed_like else None


def _case(column: str, mapping: dict[str, object], default: str = "NULL") -> str:
    """``CASE column WHEN 'key' THEN value ... END`` (keys and string values quoted)."""
    if not mapping:
        return default
    whens = " ".join(f"WHEN {quote_sql(k)} THEN "
                     f"{quote_sql(v) if isinstance(v, str) else ('NULL' if v is None else v)}"
                     for k, v in mapping.items())
    return f"CASE {column} {whens} ELSE {default} END"


def _patterns_of(category: str) -> list[str]:
    return [p for p in PATTERN_KEYS if category_of(int(p[1]), int(p[3]), int(p[5])) == category]


@dataclass
class ItemQuery:
    """The SQL behind one inspector filter (see :func:`items_sql`): ``FROM ... WHERE ...``
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


def items_sql(store: Store, run_id: int, system: str | None = None,
              setting: str | None = None, category: str | None = None,
              pattern: str | None = None, language: str | None = None,
              source: str | None = None, metric: str | None = None,
              min_value: float | None = None, max_value: float | None = None,
              mixed_setting: str | None = None, search: str | None = None,
              search_first: bool | None = None) -> ItemQuery:
    """The inspector's filters as one indexed query over the run's items: every filter is a
    ``WHERE`` term, each EM_loose label (base, oracle, the mixed-like setting) a primary-key
    look-up, and the order ``(system, query_rowid, setting rank)`` walks the
    ``run_items_order`` index, so a page stops after its rows.

    A text search of three characters or more is looked up in the trigram indexes. When they
    hold few matches (at most :data:`SEARCH_FIRST_LIMIT`, or ``search_first`` True: a count
    needs every match anyway) the query starts from the matching items and sorts them (cost
    bounded by the matches); with more matches a page fills soon, and the ordered walk
    checks each item against the matches instead."""
    by_system = run_settings(store, run_id)
    settings = {s for names in by_system.values() for s in names}
    rank, ranks = setting_rank_sql(settings)
    if mixed_setting is not None:
        mixed = quote_sql(mixed_setting)
    else:
        defaults = {name: _default_mixed(set(names)) for name, names in by_system.items()}
        mixed = ("(CASE WHEN ri.setting = 'mixed' OR ri.setting GLOB 'retrieved@[0-9]*' "
                 f"THEN ri.setting ELSE {_case('ri.system', defaults)} END)")
    labels = " || ".join(f"'{k}' || CAST(ROUND(l{a}.value) AS INTEGER)"
                         for k, a in (("b", "b"), ("o", "o"), ("m", "m")))
    loose = quote_sql(LOOSE_METRIC)
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
    lean_joins = item_joins + (label_joins if pattern or category else "") + metric_join
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
    wanted = ([pattern] if pattern is not None else []) + \
        (_patterns_of(category) if category is not None else [])
    if pattern is not None and category is not None:
        wanted = [pattern] if pattern in _patterns_of(category) else []
    if pattern is not None or category is not None:
        where.append(f"({labels}) IN ({', '.join('?' * len(wanted)) or 'NULL'})")
        params += wanted
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


# an item without a value sorts as this (SQLite reads the overflow as minus infinity)
NO_VALUE = "-1e999"
SORT_KEYS = ("system", "setting", "query", "language", "em", "pattern", "question", "response")
# the shortest text the trigram index finds; a shorter search is a LIKE over the walked items
MIN_INDEXED_SEARCH = 3


def fts_phrase(text: str) -> str:
    """``text`` as one FTS5 phrase: in double quotes, its own double quotes doubled, so that
    nothing a user types (``AND``, ``*``, ``"``, ``NEAR(``, ``:``) is read as query syntax."""
    return '"' + text.replace('"', '""') + '"'


# a search with at most this many indexed matches (questions + responses, all runs) starts
# from them; one with more walks the run's items in order and stops after a page
SEARCH_FIRST_LIMIT = 2000


def _has_text_index(store: Store) -> bool:
    """Whether the workspace has the trigram indexes (an SQLite without the trigram tokenizer
    skipped them: :func:`engine.store.migrations_later.m011_text_search`)."""
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
