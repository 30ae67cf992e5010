"""A stored generation's text re-split into its answer and its reasoning (``mirage-tui runs
resplit``, :mod:`engine.results.resplit`): generations stored before replies were split (the
``generations`` table, migration m017's columns) and their scores replaced."""

from __future__ import annotations

from engine.store.database import Store


def unsplit_generations(store: Store, run_id: int) -> list:
    """The run's items whose generation has no reasoning recorded (stored before replies
    were split, or from a model that does not think): ``key, text, finish_reason,
    query_rowid, answers, language`` (a generation once per query it answers)."""
    return store.query(
        "SELECT DISTINCT g.key, g.text, g.finish_reason, ri.query_rowid, q.answers, "
        "q.language FROM run_items ri JOIN generations g ON g.key = ri.generation_key "
        "JOIN queries q ON q.id = ri.query_rowid WHERE ri.run_id = ? AND g.reasoning = '' "
        "AND g.thinking_cut = 0 ORDER BY g.key, ri.query_rowid", (run_id,))


def save_split(db, key: str, answer: str, reasoning: str, reasoning_tokens: int,
               thinking_cut: bool) -> None:
    """Inside the caller's write transaction: a stored generation's text re-split into its
    answer and reasoning."""
    db.conn.execute(
        "UPDATE generations SET text = ?, reasoning = ?, reasoning_tokens = ?, "
        "thinking_cut = ? WHERE key = ?",
        (answer, reasoning, reasoning_tokens, int(thinking_cut), key))


def replace_scores(db, key: str, query_rowid: int, scores: list[tuple]) -> None:
    """Inside the caller's write transaction: one generation's scores for one query replaced
    as a whole (``scores``: metric, value, detail)."""
    db.conn.execute("DELETE FROM scores WHERE generation_key = ? AND query_rowid = ?",
                    (key, query_rowid))
    db.conn.executemany(
        "INSERT INTO scores (generation_key, query_rowid, metric, value, detail) "
        "VALUES (?, ?, ?, ?, ?)", [(key, query_rowid, *s) for s in scores])
