"""What a run writes and reads back: the run row, one transaction per item, and what is stored.

An item is written in one transaction: its ``generations`` row (``ON CONFLICT (key) DO
NOTHING``: the key is the cache key, so a generation is stored once whatever runs ask for it;
unlike ``INSERT OR IGNORE`` it ignores only that, so a row SQLite rejects (a NULL text) fails
loudly instead of vanishing; a generation whose text is not a storable string is refused
before the write with the :class:`~models.base.ReplyError` of its model), its ``run_items``
row (``INSERT OR REPLACE`` on the primary key run, system, setting, query: an earlier error
row is replaced) and its ``scores`` (replaced as a whole). Either all of it lands or none.

Scores carry a marker row ``_scorer`` (value NULL, detail ``SCORER_VERSION``): stored scores
with the current version are reused; missing or older ones are computed again. Reports should
skip metrics whose name starts with ``_``.
"""

from __future__ import annotations

import json
from collections import defaultdict

from engine.metrics.answer import SCORER_VERSION
from engine.runs import owner
from engine.runs.header import initial_header, now
from engine.runs.plan import Plan, PlanItem, RunConfigMismatch
from engine.store import Store
from models.replies import checked_text

SCORER_MARK = "_scorer"
LOOSE = "em_loose"

ItemKey = tuple[str, str, int]        # (system, setting, query rowid)


def save_plan(store: Store, plan: Plan) -> int:
    """Create the run's row unless it exists and make this process its owner (status
    ``running``; :func:`engine.runs.owner.claim` refuses a run another live process holds);
    returns its id. With ``plan.replace_existing`` an existing run of that name is deleted
    first (its items go; generations and scores stay in the cache)."""
    config = plan.config
    with store.write() as db:
        conn = db.conn
        held = conn.execute("SELECT id FROM runs WHERE name = ?", (config.name,)).fetchone()
        if held is not None:                    # before replacing it or taking it over
            owner.claim(conn, held[0], config.name)
        if plan.replace_existing:
            conn.execute("DELETE FROM runs WHERE name = ?", (config.name,))
            plan.replace_existing = False
        row = conn.execute("SELECT id, config, dataset_id FROM runs WHERE name = ?",
                           (config.name,)).fetchone()
        if row is not None:
            differs = config.differences(json.loads(row["config"]))
            if differs or row["dataset_id"] != plan.dataset_id:
                raise RunConfigMismatch(f"run {config.name!r} exists with a different "
                                        f"configuration ({', '.join(differs) or 'dataset'})")
            keep_recorded_choices(config, json.loads(row["config"]))
            conn.execute("UPDATE runs SET config = ? WHERE id = ?",
                         (json.dumps(config.as_json()), row["id"]))
            return row["id"]
        stamp = now()
        cur = conn.execute(
            "INSERT INTO runs (name, dataset_id, config, header, status, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, 'planned', ?, ?)",
            (config.name, plan.dataset_id, json.dumps(config.as_json()),
             json.dumps(initial_header(plan), ensure_ascii=False), stamp, stamp))
        owner.claim(conn, cur.lastrowid, config.name)
        return cur.lastrowid


def keep_recorded_choices(config, stored: dict) -> None:
    """A resume that does not name a report choice (parity, gold, language rule or detector)
    keeps the one the run recorded, unless the parity it names fixes that choice."""
    from engine.metrics.definitions import PARITY_PRESETS

    asked = {k: v for k, v in config.definition_choices().items() if v is not None}
    if "parity" not in asked:   # the recorded parity holds unless a choice asked contradicts it
        preset = PARITY_PRESETS.get(stored.get("parity") or "", {})
        if all(asked.get(k, v) == v for k, v in preset.items()):
            config.parity = stored.get("parity")
    fixed = PARITY_PRESETS.get(config.parity or "", {})
    for key in ("gold", "language_rule", "language_detector"):
        if key not in asked and key not in fixed and stored.get(key) is not None:
            setattr(config, key, stored[key])


def write_run(store: Store, run_id: int, header: dict, status: str | None = None) -> None:
    with store.write() as db:
        db.conn.execute(
            "UPDATE runs SET header = ?, status = COALESCE(?, status), updated_at = ? "
            "WHERE id = ?", (json.dumps(header, ensure_ascii=False), status, now(), run_id))


def write_item(store: Store, run_id: int, key: ItemKey, gen_key: str, prompt,
               generation=None, scores=None, *, model_key: str = "", model_name: str = "",
               params: str = "") -> None:
    """One finished item: its generation (when newly generated), its run item, its scores
    (when computed), all in one transaction."""
    system, setting, query = key
    if generation is not None:
        checked_text(model_name or model_key or system, generation.text)
    with store.write() as db:
        conn = db.conn
        if generation is not None:
            conn.execute(
                "INSERT INTO generations (key, model_key, model_name, prompt, "
                "params, text, prompt_tokens, completion_tokens, prompt_tokens_evaluated, "
                "seconds, finish_reason, device, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
                (gen_key, model_key, model_name, prompt.text, params, generation.text,
                 generation.prompt_tokens, generation.completion_tokens,
                 generation.prompt_tokens_evaluated, generation.seconds,
                 generation.finish_reason, generation.device, now()))
        conn.execute(
            "INSERT OR REPLACE INTO run_items (run_id, system, setting, query_rowid, "
            "generation_key, context, truncated, error) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
            (run_id, system, setting, query, gen_key, json.dumps(prompt.context),
             int(prompt.truncated)))
        if scores is not None:
            conn.execute("DELETE FROM scores WHERE generation_key = ? AND query_rowid = ?",
                         (gen_key, query))
            conn.executemany(
                "INSERT INTO scores (generation_key, query_rowid, metric, value, detail) "
                "VALUES (?, ?, ?, ?, ?)",
                [(gen_key, query, s.metric, s.value, s.detail) for s in scores]
                + [(gen_key, query, SCORER_MARK, None, SCORER_VERSION)])
        conn.execute("UPDATE runs SET updated_at = ? WHERE id = ?", (now(), run_id))


def write_error(store: Store, run_id: int, key: ItemKey, context: list[int] | None,
                error: str) -> None:
    system, setting, query = key
    with store.write() as db:
        db.conn.execute(
            "INSERT OR REPLACE INTO run_items (run_id, system, setting, query_rowid, "
            "generation_key, context, truncated, error) VALUES (?, ?, ?, ?, NULL, ?, 0, ?)",
            (run_id, system, setting, query,
             None if context is None else json.dumps(context), error))
        db.conn.execute("UPDATE runs SET updated_at = ? WHERE id = ?", (now(), run_id))


# --------------------------------------------------------------------------- reading back

def finished_items(store: Store, run_id: int) -> dict[ItemKey, str | None]:
    """The run's items → their generation key, or None when the item is not finished: it
    failed, or its scores are missing or from another scorer version (such items are answered
    again from the generation cache and rescored)."""
    out: dict[ItemKey, str | None] = {}
    for r in store.query(
            "SELECT ri.system, ri.setting, ri.query_rowid, ri.generation_key, s.detail "
            "FROM run_items ri LEFT JOIN scores s ON s.generation_key = ri.generation_key "
            "AND s.query_rowid = ri.query_rowid AND s.metric = ? WHERE ri.run_id = ?",
            (SCORER_MARK, run_id)):
        out[(r[0], r[1], r[2])] = r[3] if r[4] == SCORER_VERSION else None
    return out


def loose_labels(store: Store, run_id: int) -> dict[str, dict[str, dict[int, int]]]:
    """``labels[system][setting][query] = EM_loose`` of the run's scored items."""
    labels: dict = defaultdict(lambda: defaultdict(dict))
    for r in store.query(
            "SELECT ri.system, ri.setting, ri.query_rowid, s.value FROM run_items ri "
            "JOIN scores s ON s.generation_key = ri.generation_key AND s.query_rowid = "
            "ri.query_rowid WHERE ri.run_id = ? AND s.metric = ? AND s.value IS NOT NULL",
            (run_id, LOOSE)):
        labels[r[0]][r[1]][r[2]] = int(round(r[3]))
    return labels


def generation_text(store: Store, gen_key: str) -> str | None:
    rows = store.query("SELECT text FROM generations WHERE key = ?", (gen_key,))
    return rows[0][0] if rows else None


def is_scored(store: Store, gen_key: str, query: int) -> bool:
    rows = store.query("SELECT detail FROM scores WHERE generation_key = ? AND query_rowid = ? "
                       "AND metric = ?", (gen_key, query, SCORER_MARK))
    return bool(rows) and rows[0][0] == SCORER_VERSION


def stored_loose(store: Store, gen_key: str, query: int) -> float | None:
    rows = store.query("SELECT value FROM scores WHERE generation_key = ? AND query_rowid = ? "
                       "AND metric = ?", (gen_key, query, LOOSE))
    return rows[0][0] if rows else None


def stored_status(store: Store, plan: Plan, *, generators: dict | None = None,
                  load_models: bool = True) -> dict:
    """What a dry run reports about the first batch: ``run_items`` (items this run has
    stored), ``cache_hits`` (other items whose exact generation the cache already holds),
    ``stored_items`` (both, as plan items) and ``checked`` (what was looked up). Cache hits
    are found by rendering prompts, which loads the generators; retrieved items are looked
    up only when the run has stored them (their context needs the retrieval)."""
    from engine.prompts import get_template
    from engine.runs.prompting import (PromptTooLong, context_rowids, fit_prompt,
                                       generation_key, load_chunks, load_queries,
                                       sampling_params)

    items = plan.items
    done: dict[ItemKey, str | None] = {}
    if plan.existing_run and not plan.replace_existing:
        done = finished_items(store, plan.existing_run["id"])

    def key(item: PlanItem) -> ItemKey:
        return (item.system.label, plan.setting_of(item), item.query_rowid)

    stored = [i for i in items if done.get(key(i))]
    rest = [i for i in items if not done.get(key(i)) and i.kind != "retrieved"]
    hits: list[PlanItem] = []
    checked = "nothing left to look up" if not rest else "not looked up (models not loaded)"
    if rest and load_models:
        from models.catalog import load_generator

        template = get_template(plan.config.template)
        params = sampling_params(plan.config.max_tokens, plan.config.seed)
        facts = load_queries(store, sorted({i.query_rowid for i in rest}))
        chunks = load_chunks(store, {c for f in facts.values() for c in f.oracle + f.pool})
        loaded = dict(generators or {})
        for item in rest:
            name = item.system.generator
            if name not in loaded:
                loaded[name] = load_generator(name, n_ctx=plan.config.n_ctx,
                                              n_threads=plan.config.threads)
            generator, query = loaded[name], facts[item.query_rowid]
            try:
                prompt = fit_prompt(generator, template, query, item.kind,
                                    context_rowids(item.kind, query), chunks,
                                    plan.config.max_tokens)
            except (LookupError, PromptTooLong):
                continue
            if generation_text(store, generation_key(generator.identity.key(), prompt.text,
                                                     params)) is not None:
                hits.append(item)
        checked = ("base, oracle and mixed prompts rendered and looked up; retrieved items "
                   "once retrieved")
    return {"run_items": len(stored), "cache_hits": len(hits), "stored_items": stored + hits,
            "checked": checked}
