"""Migrations m008 onwards: what later releases added. Append a new migration here (a
function, and its name at the end of ``STEPS``); never edit one that has shipped.
:mod:`engine.store.migrations.schema` applies ``STEPS`` after :mod:`engine.store.migrations.first`."""

from __future__ import annotations

import sqlite3

import sqlite_utils


def m008_score_values_index(db: sqlite_utils.Database) -> None:
    """A covering index for reading a run's scores: a report joins every item of
    the run to its score rows by (generation_key, query_rowid) and reads metric and value;
    with the value in the index it never visits the table rows (whose detail text makes
    them large). Measured on a 60k-item run (720k score rows): the join's CPU 0.61 s -> 0.36 s
    (``benchmarks/bench_results_scale.py``)."""
    db.executescript(
        """
        CREATE INDEX IF NOT EXISTS scores_values
            ON scores (generation_key, query_rowid, metric, value);
        """
    )


def m009_model_checks(db: sqlite_utils.Database) -> None:
    """Model checks kept: a check's speeds feed the run estimates after a relaunch
    (:mod:`engine.runs.estimates`), and its result can be shown again."""
    db.executescript(
        """
        CREATE TABLE model_checks (
            id INTEGER PRIMARY KEY,
            model TEXT NOT NULL,           -- the name the check was asked for (as a run names it)
            kind TEXT,                     -- 'generator', 'embedder' (NULL: not found)
            ok INTEGER NOT NULL,
            device TEXT,
            prompt_tps REAL,               -- prompt tokens per second (generators)
            gen_tps REAL,                  -- generated tokens per second (generators)
            result TEXT NOT NULL,          -- JSON: models.check.check_model's whole result
            checked_at TEXT NOT NULL       -- UTC, 'YYYY-MM-DD HH:MM:SS'
        );
        CREATE INDEX model_checks_model ON model_checks (model, checked_at);
        """
    )


def m010_run_log(db: sqlite_utils.Database) -> None:
    """What a run did, line by line: sessions, model loads, retries, item errors,
    cancels and ends, written by the run's job (:mod:`engine.runs.log`)."""
    db.executescript(
        """
        CREATE TABLE run_log (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            at TEXT NOT NULL,              -- ISO time, UTC
            kind TEXT NOT NULL,            -- 'session', 'load', 'retry', 'error', 'end', ...
            message TEXT NOT NULL
        );
        CREATE INDEX run_log_run ON run_log (run_id, id);
        """
    )


def _fts_triggers(table: str, fts: str, rowid: str) -> str:
    """Triggers that keep the external-content index ``fts`` over ``table.text`` current."""
    add = f"INSERT INTO {fts} (rowid, text) VALUES (NEW.{rowid}, NEW.text);"
    drop = f"INSERT INTO {fts} ({fts}, rowid, text) VALUES ('delete', OLD.{rowid}, OLD.text);"
    return f"""
        CREATE TRIGGER IF NOT EXISTS {fts}_insert AFTER INSERT ON {table} BEGIN {add} END;
        CREATE TRIGGER IF NOT EXISTS {fts}_delete AFTER DELETE ON {table} BEGIN {drop} END;
        CREATE TRIGGER IF NOT EXISTS {fts}_update AFTER UPDATE OF text ON {table} BEGIN
            {drop} {add}
        END;
        INSERT INTO {fts} ({fts}) VALUES ('rebuild');
    """


def m011_text_search(db: sqlite_utils.Database) -> None:
    """Text search over questions and responses: two FTS5 indexes with the
    trigram tokenizer (case-insensitive substring search in any script, three characters or
    more), external-content over ``queries.text`` and ``generations.text`` so that no text is
    stored twice, kept current by triggers and built from what is stored
    (:func:`engine.results.inspector.items_sql`). ``generations`` has no integer key: its
    implicit rowid is what the index stores (the store never VACUUMs; after one, rebuild with
    ``INSERT INTO generations_fts (generations_fts) VALUES ('rebuild')``). An SQLite without
    the trigram tokenizer gets no indexes, and searches stay ``LIKE`` scans."""
    db.executescript(
        """
        -- a search's matching questions lead to their items (also what deleting a query
        -- checks for its foreign key)
        CREATE INDEX IF NOT EXISTS run_items_query ON run_items (query_rowid, run_id);
        """)
    try:  # an SQLite without FTS5 or its trigram tokenizer (before 3.34): searches use LIKE
        db.conn.execute("CREATE VIRTUAL TABLE temp.fts_probe USING fts5(x, tokenize='trigram')")
        db.conn.execute("DROP TABLE temp.fts_probe")
    except sqlite3.OperationalError:
        return
    db.executescript(
        """
        CREATE VIRTUAL TABLE IF NOT EXISTS queries_fts USING fts5(
            text, content='queries', content_rowid='id', tokenize='trigram');
        CREATE VIRTUAL TABLE IF NOT EXISTS generations_fts USING fts5(
            text, content='generations', tokenize='trigram');
        """
        + _fts_triggers("queries", "queries_fts", "id")
        + _fts_triggers("generations", "generations_fts", "rowid")
    )



def m012_generations_by_model(db: sqlite_utils.Database) -> None:
    """The newest generations of a model by name: the time estimator reads a
    model's recent stored generations for its measured speed each time the New-run form
    changes (:func:`engine.model_speeds.measured_speeds`); without this index that was a scan
    of every generation and its prompt text (0.1 s per model at 60k generations)."""
    db.executescript(
        """
        CREATE INDEX IF NOT EXISTS generations_by_model
            ON generations (model_name, created_at);
        """
    )


def m013_endpoint_contexts(db: sqlite_utils.Database) -> None:
    """Contexts learned from endpoints: a server that reports no context window,
    then refuses a prompt naming its real one ("maximum context length is 2048 tokens"), is
    remembered, so every later run fits its prompts to it (:mod:`engine.runs.contexts`)."""
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS endpoint_contexts (
            endpoint TEXT PRIMARY KEY,     -- URL#MODEL, without credentials (context_key)
            context_length INTEGER NOT NULL,
            message TEXT NOT NULL,         -- the server's refusal it was learned from
            learned_at TEXT NOT NULL       -- UTC, 'YYYY-MM-DD HH:MM:SS'
        );
        """
    )


def m014_fitted_judges(db: sqlite_utils.Database) -> None:
    """Judges fitted to people's labels (:mod:`engine.arena.judges.fitted`): one row
    per name in the workspace, everything its verdicts depend on and its cross-validated
    agreement."""
    db.executescript(
        """
        CREATE TABLE fitted_judges (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,     -- used as --judge fitted:NAME
            sha256 TEXT NOT NULL,          -- identity: features + coefficients + labels
            features TEXT NOT NULL,        -- JSON list of feature names
            coefficients TEXT NOT NULL,    -- JSON list, one per feature (on scaled features)
            scale TEXT NOT NULL,           -- JSON list: each feature divided by this first
            labels TEXT NOT NULL,          -- the labels as given (a dataset, or 'verdicts')
            labels_datasets TEXT NOT NULL, -- JSON list of name@version read
            aspect TEXT NOT NULL,
            labels_fingerprint TEXT NOT NULL,  -- sha256 over the pairs' ids, texts, labels
            config TEXT NOT NULL,          -- JSON: margin, template, C, folds
            cv TEXT NOT NULL,              -- JSON: held-out agreement, best single feature
            created_at TEXT NOT NULL
        );
        """
    )


def m015_claims(db: sqlite_utils.Database) -> None:
    """Who works on a stored thing other than a run (:mod:`engine.runs.owner`): a
    fit, a calibration or an arena under its name is claimed by one process at a time. A row
    is the live or last owner; a finished one deletes its row."""
    db.executescript(
        """
        CREATE TABLE claims (
            kind TEXT NOT NULL,            -- 'fit' | 'calibration' | 'arena'
            name TEXT NOT NULL,            -- the fit's name, the calibration's key, arena id
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            process_start TEXT,            -- /proc/PID/stat's start tick (pid reuse)
            claimed_at TEXT NOT NULL,
            PRIMARY KEY (kind, name)
        );
        """
    )


def m016_run_stops(db: sqlite_utils.Database) -> None:
    """Why a run stopped, and whether a launch asks about it
    (:mod:`engine.runs.stops`): a run stopped because the app quit is offered at the next
    launch, one cancelled on purpose is not, and the user may say never to ask about a run."""
    db.executescript(
        """
        -- 'quit': the app's end stopped it; 'user': cancelled on purpose; NULL: neither
        -- (still going, done, or stopped before this was recorded)
        ALTER TABLE runs ADD COLUMN stopped_by TEXT;
        -- 0: the user said never to offer this run at launch
        ALTER TABLE runs ADD COLUMN ask_at_launch INTEGER NOT NULL DEFAULT 1;
        """
    )


def m017_reasoning(db: sqlite_utils.Database) -> None:
    """A reasoning model's thinking kept apart from its answer (:mod:`models.reasoning`):
    ``generations.text`` stays the answer every scorer reads; the thinking, its token count
    and whether it never closed (the answer cut while thinking) sit beside it. Generations
    stored before read as having no reasoning."""
    db.executescript(
        """
        ALTER TABLE generations ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
        ALTER TABLE generations ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
        -- 1: the thinking never closed (no answer came), 0: an answer, or no thinking
        ALTER TABLE generations ADD COLUMN thinking_cut INTEGER NOT NULL DEFAULT 0;
        """
    )


STEPS = (
    m008_score_values_index,
    m009_model_checks,
    m010_run_log,
    m011_text_search,
    m012_generations_by_model,
    m013_endpoint_contexts,
    m014_fitted_judges,
    m015_claims,
    m016_run_stops,
    m017_reasoning,
)
