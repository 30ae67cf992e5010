"""Migrations m001–m007: the tables of the first releases (datasets and pools, retrieval and
runs, the arena, run owners, results indexes, run counts, human labels). Shipped: never edit
one; :mod:`engine.store.migrations.schema` applies ``STEPS`` in order."""

from __future__ import annotations

import sqlite_utils


def m001_datasets_and_pools(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        CREATE TABLE datasets (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            kind TEXT NOT NULL,            -- 'qa' (queries and pools) or 'collection' (chunks only)
            format TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            created_at TEXT NOT NULL,
            description TEXT,
            UNIQUE (name, version)
        );
        CREATE INDEX datasets_hash ON datasets (content_hash);

        CREATE TABLE queries (
            id INTEGER PRIMARY KEY,
            dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            query_id TEXT NOT NULL,        -- the id in the source file
            text TEXT NOT NULL,
            language TEXT,
            source TEXT,
            answers TEXT NOT NULL,         -- JSON list of acceptable short answers
            reference_answer TEXT,         -- long-form reference (LFRQA), when there is one
            reference_citations TEXT,      -- JSON, the reference's citations, when there are some
            metadata TEXT,                 -- JSON, anything else the source file carried
            UNIQUE (dataset_id, query_id)
        );
        CREATE INDEX queries_lang ON queries (dataset_id, language);
        CREATE INDEX queries_source ON queries (dataset_id, source);

        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            chunk_id TEXT NOT NULL,
            title TEXT,
            text TEXT NOT NULL,
            language TEXT,
            content_hash TEXT NOT NULL,    -- sha256 of the text: the key for stored vectors
            metadata TEXT,
            UNIQUE (dataset_id, chunk_id)
        );
        CREATE INDEX chunks_hash ON chunks (content_hash);

        -- the query <-> chunk relation: a query's pool (position set) and its relevance labels
        CREATE TABLE pool (
            query_rowid INTEGER NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
            chunk_rowid INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            position INTEGER,              -- 0-based place in the query's pool; NULL: a label only
            support INTEGER NOT NULL,      -- 1 when the chunk answers the query
            is_oracle INTEGER NOT NULL DEFAULT 0,
            support_source TEXT NOT NULL,  -- 'label' (from the file) or 'answer-match' (derived)
            PRIMARY KEY (query_rowid, chunk_rowid)
        );
        CREATE INDEX pool_chunk ON pool (chunk_rowid);

        -- distractor collections attached to a dataset grow its retrieval pool
        CREATE TABLE dataset_collections (
            dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            collection_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            PRIMARY KEY (dataset_id, collection_id)
        );

        CREATE TABLE imports (
            id INTEGER PRIMARY KEY,
            dataset_id INTEGER REFERENCES datasets(id) ON DELETE SET NULL,
            path TEXT NOT NULL,
            format TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            counts TEXT NOT NULL,          -- JSON
            warnings TEXT NOT NULL,        -- JSON list of strings
            outcome TEXT NOT NULL,         -- 'imported' or 'unchanged'
            seconds REAL,
            imported_at TEXT NOT NULL
        );
        """
    )


def m002_retrieval_and_runs(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        -- vectors are stored, keyed by the embedder's identity and the text's hash, so
        -- re-indexing the same pool embeds nothing; faiss indexes are rebuilt from them
        CREATE TABLE embedders (
            key TEXT PRIMARY KEY,          -- ModelIdentity.key() of the embedder
            name TEXT NOT NULL,
            identity TEXT NOT NULL,        -- JSON of the ModelIdentity
            dim INTEGER NOT NULL,
            max_seq_length INTEGER,
            normalized INTEGER NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE embeddings (
            embedder_key TEXT NOT NULL REFERENCES embedders(key) ON DELETE CASCADE,
            role TEXT NOT NULL,            -- 'passage' or 'query' (prefixes differ)
            content_hash TEXT NOT NULL,    -- sha256 of the text
            vector BLOB NOT NULL,          -- float32, little-endian, dim values
            tokens INTEGER,                -- the text's length in the embedder's tokens
            PRIMARY KEY (embedder_key, role, content_hash)
        );
        CREATE TABLE retrieval_indexes (
            id INTEGER PRIMARY KEY,
            dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            embedder_key TEXT NOT NULL REFERENCES embedders(key),
            chunks INTEGER NOT NULL,       -- chunks searched (own + attached collections)
            embedded INTEGER NOT NULL,     -- chunks newly embedded by this indexing
            over_length INTEGER NOT NULL,  -- chunks longer than the embedder's max length
            seconds REAL,
            created_at TEXT NOT NULL
        );
        -- a retriever's ranked list per query (the retrieved@k settings read their top k)
        CREATE TABLE retrievals (
            retriever TEXT NOT NULL,       -- label: embedder key [+ reranker name + depth]
            query_rowid INTEGER NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
            ranked TEXT NOT NULL,          -- JSON [[chunk_rowid, score], ...] best first
            PRIMARY KEY (retriever, query_rowid)
        );

        -- the generation cache: one row per (model identity, exact prompt, sampling params)
        CREATE TABLE generations (
            key TEXT PRIMARY KEY,
            model_key TEXT NOT NULL,
            model_name TEXT NOT NULL,
            prompt TEXT NOT NULL,          -- exactly what was sent (rendered text)
            params TEXT NOT NULL,          -- JSON SamplingParams
            text TEXT NOT NULL,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            prompt_tokens_evaluated INTEGER,
            seconds REAL,
            finish_reason TEXT,
            device TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX generations_model ON generations (model_key);

        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            dataset_id INTEGER NOT NULL REFERENCES datasets(id),
            config TEXT NOT NULL,          -- JSON: the plan as the user asked for it
            header TEXT NOT NULL,          -- JSON: what reproduces it (hashes, versions, device)
            status TEXT NOT NULL,          -- 'planned', 'running', 'cancelled', 'failed', 'done'
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE run_items (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            system TEXT NOT NULL,          -- system label (generator + template [+ retriever])
            setting TEXT NOT NULL,         -- 'base', 'oracle', 'mixed', 'retrieved@3', ...
            query_rowid INTEGER NOT NULL REFERENCES queries(id),
            generation_key TEXT REFERENCES generations(key),
            context TEXT,                  -- JSON chunk rowids given as context, in order
            truncated INTEGER NOT NULL DEFAULT 0,
            error TEXT,                    -- why this item has no generation, if it has none
            PRIMARY KEY (run_id, system, setting, query_rowid)
        );
        CREATE INDEX run_items_generation ON run_items (generation_key);

        -- per-generation scores against a query's gold answers (recomputable from rows)
        CREATE TABLE scores (
            generation_key TEXT NOT NULL REFERENCES generations(key) ON DELETE CASCADE,
            query_rowid INTEGER NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
            metric TEXT NOT NULL,
            value REAL,                    -- NULL: not applicable (e.g. language of a short reply)
            detail TEXT,                   -- why: the matched answer, the parsed citations, ...
            PRIMARY KEY (generation_key, query_rowid, metric)
        );
        """
    )


def m003_arena(db: sqlite_utils.Database) -> None:
    """The arena: every judge call (a cache, like ``generations``), arenas and their battles."""
    db.executescript(
        """
        -- one judge call: the cache that makes judging resumable (key: judge identity,
        -- template name@version, the exact prompt fields, the reading method)
        CREATE TABLE judgments (
            key TEXT PRIMARY KEY,
            judge_key TEXT NOT NULL,       -- ModelIdentity.key() of the judge model
            judge_name TEXT NOT NULL,
            template TEXT NOT NULL,        -- name@version
            fields TEXT NOT NULL,          -- JSON: what the template was filled with
            label TEXT,                    -- 'A' / 'B' / 'tie', '1'..'5', 'yes' / 'no'; NULL: unparsed
            probs TEXT,                    -- JSON label -> probability (logits method)
            method TEXT NOT NULL,          -- 'logits' | 'parsed'
            raw TEXT,                      -- the reply (parsed method)
            parse_failed INTEGER NOT NULL,
            fallback_reason TEXT,
            seconds REAL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX judgments_judge ON judgments (judge_key, template);

        -- one judging of one run: pairwise (MIRAGE-Bench) or against a reference (RAG-QA Arena)
        CREATE TABLE arenas (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            mode TEXT NOT NULL,            -- 'pairwise' | 'reference'
            config TEXT NOT NULL,          -- JSON: judge, template, order policy, seed, queries
            header TEXT NOT NULL,          -- JSON: judge identity, versions, device, timings
            status TEXT NOT NULL,          -- 'planned', 'running', 'cancelled', 'failed', 'done'
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (run_id, name)
        );

        -- one battle: two answers to one query (system_b is 'reference' against a reference
        -- answer); winner NULL means every judge reply for it failed to parse
        CREATE TABLE battles (
            arena_id INTEGER NOT NULL REFERENCES arenas(id) ON DELETE CASCADE,
            query_rowid INTEGER NOT NULL REFERENCES queries(id),
            system_a TEXT NOT NULL,
            system_b TEXT NOT NULL,
            winner TEXT,                   -- 'a' | 'b' | 'tie' | NULL (parse failure)
            shown TEXT NOT NULL,           -- order(s) judged: 'ab', 'ba' or 'both'
            judgment_keys TEXT NOT NULL,   -- JSON list, in the order judged
            parse_failures INTEGER NOT NULL DEFAULT 0,
            refusal INTEGER NOT NULL DEFAULT 0,   -- an answer that declines (no-answer)
            detail TEXT,                   -- JSON: per-order labels and probabilities
            created_at TEXT NOT NULL,
            PRIMARY KEY (arena_id, query_rowid, system_a, system_b)
        );
        CREATE INDEX battles_query ON battles (arena_id, query_rowid);
        """
    )



def m004_run_owners(db: sqlite_utils.Database) -> None:
    """Who is running a run: one row per run while a process works on it
    (:mod:`engine.runs.owner`)."""
    db.executescript(
        """
        CREATE TABLE run_owners (
            run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            process_start TEXT,            -- the process's start tick (Linux), against pid reuse
            claimed_at TEXT NOT NULL
        );
        """
    )


def m005_results_indexes(db: sqlite_utils.Database) -> None:
    """Reading a big run by pages: the inspector walks a run's items in
    (system, query, setting) order and stops after a page (:mod:`engine.results.inspector`)."""
    db.executescript(
        """
        CREATE INDEX IF NOT EXISTS run_items_order
            ON run_items (run_id, system, query_rowid, setting);
        """
    )


# one item's contribution to its run's counters (``item`` is NEW or OLD in a trigger)
_COUNTS = ("1", "{i}.generation_key IS NOT NULL",
           "{i}.generation_key IS NULL AND COALESCE({i}.error, '') != ''", "{i}.truncated != 0")
_COUNT_COLUMNS = ("items", "generated", "errors", "truncated")


def _count_change(item: str, sign: str) -> str:
    """Add (``+``, an upsert) or take away (``-``, an update: a run being deleted has lost its
    row already, and must not get one back) an item's contribution."""
    values = [c.format(i=item) for c in _COUNTS]
    if sign == "-":
        sets = ", ".join(f"{col} = {col} - ({v})" for col, v in zip(_COUNT_COLUMNS, values))
        return f"UPDATE run_counts SET {sets} WHERE run_id = {item}.run_id;"
    return (
        f"INSERT INTO run_counts (run_id, {', '.join(_COUNT_COLUMNS)}) "
        f"VALUES ({item}.run_id, {', '.join(f'({v})' for v in values)}) ON CONFLICT (run_id) "
        "DO UPDATE SET "
        + ", ".join(f"{col} = {col} + excluded.{col}" for col in _COUNT_COLUMNS) + ";")


def m006_run_counts(db: sqlite_utils.Database) -> None:
    """Per-run item counters kept with the run: the run history reads a run's
    done/total/errors from one row instead of counting its items. Triggers on ``run_items``
    keep them in the same transaction as the item, whoever writes it; existing runs are
    back-filled. The run engine writes an item with ``INSERT OR REPLACE`` (an error row is
    replaced): its implicit delete fires the delete trigger because every store connection
    turns ``recursive_triggers`` on (:meth:`engine.store.Store._connect`)."""
    db.executescript(
        f"""
        CREATE TABLE IF NOT EXISTS run_counts (
            run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
            items INTEGER NOT NULL,        -- stored items (generated or failed)
            generated INTEGER NOT NULL,    -- with a generation
            errors INTEGER NOT NULL,       -- without one, with an error
            truncated INTEGER NOT NULL     -- whose context was truncated
        );
        CREATE TRIGGER IF NOT EXISTS run_counts_insert AFTER INSERT ON run_items BEGIN
            {_count_change("NEW", "+")}
        END;
        CREATE TRIGGER IF NOT EXISTS run_counts_delete AFTER DELETE ON run_items BEGIN
            {_count_change("OLD", "-")}
        END;
        CREATE TRIGGER IF NOT EXISTS run_counts_update AFTER UPDATE ON run_items BEGIN
            {_count_change("OLD", "-")}
            {_count_change("NEW", "+")}
        END;
        INSERT OR REPLACE INTO run_counts (run_id, items, generated, errors, truncated)
            SELECT run_id, COUNT(*), SUM(generation_key IS NOT NULL),
                   SUM(generation_key IS NULL AND COALESCE(error, '') != ''),
                   SUM(truncated != 0)
            FROM run_items GROUP BY run_id;
        """
    )


def m007_human_labels(db: sqlite_utils.Database) -> None:
    """Human pairwise labels (a dataset of kind 'labels': :mod:`engine.datasets.formats.
    pairwise_labels`), and judge calibrations against them (:mod:`engine.arena.trust.calibrate`)."""
    db.executescript(
        """
        -- one answer pair of a labels dataset: a query and two answers (A shown first)
        CREATE TABLE label_pairs (
            id INTEGER PRIMARY KEY,
            dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            pair_id TEXT NOT NULL,         -- the id in the source file (or made from its text)
            query TEXT NOT NULL,
            reference TEXT,                -- a reference answer, when the file has one
            answer_a TEXT NOT NULL,
            answer_b TEXT NOT NULL,
            domain TEXT,
            metadata TEXT,                 -- JSON, anything else the source file carried
            UNIQUE (dataset_id, pair_id)
        );
        -- one person's label on one pair and aspect: -2 (A much better) .. 2 (B much better)
        CREATE TABLE human_labels (
            pair_rowid INTEGER NOT NULL REFERENCES label_pairs(id) ON DELETE CASCADE,
            annotator TEXT NOT NULL,
            aspect TEXT NOT NULL,          -- 'overall', 'correctness', 'completeness', ...
            label INTEGER NOT NULL CHECK (label BETWEEN -2 AND 2),
            note TEXT,
            source TEXT NOT NULL DEFAULT 'import',   -- 'import' or 'app' (entered by a person)
            created_at TEXT,               -- when it was entered in the app
            PRIMARY KEY (pair_rowid, annotator, aspect)
        );
        -- one calibration of a judge (identity + template) against a labels dataset
        CREATE TABLE calibrations (
            id INTEGER PRIMARY KEY,
            dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            judge_key TEXT NOT NULL,       -- ModelIdentity.key() of the judge model
            judge_name TEXT NOT NULL,
            template TEXT NOT NULL,        -- name@version
            aspect TEXT NOT NULL,
            config TEXT NOT NULL,          -- JSON: orders, sample, seed
            figures TEXT NOT NULL,         -- JSON: every figure with its CI and n
            verdicts TEXT NOT NULL,        -- JSON: per pair, the judge's orders (for the screen)
            created_at TEXT NOT NULL
        );
        CREATE INDEX calibrations_judge ON calibrations (judge_name, template);
        """
    )


STEPS = (
    m001_datasets_and_pools,
    m002_retrieval_and_runs,
    m003_arena,
    m004_run_owners,
    m005_results_indexes,
    m006_run_counts,
    m007_human_labels,
)
