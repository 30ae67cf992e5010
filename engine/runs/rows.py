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
import sqlite3
from collections import defaultdict

from engine.metrics.answer import SCORER_VERSION
from engine.runs import owner
from engine.runs.header import RunHeader, now
from engine.runs.plan import Plan, PlanItem, RunConfigMismatch
from engine.store import Store, run_items
from engine.store import runs as run_table
from engine.store.generations import generation_text
from engine.store.run_items import ItemKey
from models.replies import checked_text

SCORER_MARK = "_scorer"
LOOSE = "em_loose"


def save_plan(store: Store, plan: Plan) -> int:
    """The run's id, after :func:`open_run`."""
    return open_run(store, plan)[0]


def open_run(store: Store, plan: Plan) -> tuple[int, RunHeader]:
    """Open the plan's run and make this process its owner (status ``running``;
    :func:`engine.runs.owner.claim` refuses a run another live process holds); returns its id
    and its header as stored. The run is the one the plan was made with
    (``plan.existing_run``, checked by :func:`engine.runs.plan.check_same_run`): it is claimed
    and its configuration written, or, new, inserted; nothing is read back or checked again.
    With ``plan.replace_existing`` the stored run is deleted first (its items go; generations
    and scores stay in the cache). A run deleted, or a name taken, since the plan was made is
    refused with :class:`RunConfigMismatch` (plan it again)."""
    config, run = plan.config, plan.existing_run
    with store.write() as db:
        if run is not None and plan.replace_existing:
            owner.claim(db, run.id, run.name)     # before replacing it
            run_table.delete_run(db, run.id)
            plan.replace_existing = False
        elif run is not None:
            keep_recorded_choices(config, run.config)
            if not run_table.set_config(db, run.id, json.dumps(config.as_json())):
                raise RunConfigMismatch(f"run {run.name!r} was deleted since it was planned; "
                                        "run it again to start it anew")
            owner.claim(db, run.id, run.name)
            return run.id, run.header          # frozen: shared, never changed
        header = RunHeader.for_plan(plan)
        try:
            run_id = run_table.insert_run(db, config.name, plan.dataset_id,
                                          json.dumps(config.as_json()), header.to_json(), now())
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" not in str(exc):
                raise
            raise RunConfigMismatch(f"a run named {config.name!r} was stored since this one "
                                    "was planned; run it again to resume it") from None
        owner.claim(db, run_id, config.name)
        return run_id, header


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


def write_run(store: Store, run_id: int, header: RunHeader, status: str | None = None) -> None:
    run_table.write_header(store, run_id, header.to_json(), status, now())


def write_item(store: Store, run_id: int, key: ItemKey, gen_key: str, prompt,
               generation=None, scores=None, *, model_key: str = "", model_name: str = "",
               params: str = "") -> None:
    """One finished item: its generation (when newly generated), its run item, its scores
    (when computed), all in one transaction."""
    if generation is not None:
        checked_text(model_name or model_key or key[0], generation.text)
        generation = (model_key, model_name, prompt.text, params, generation.text,
                      generation.prompt_tokens, generation.completion_tokens,
                      generation.prompt_tokens_evaluated, generation.seconds,
                      generation.finish_reason, generation.device,
                      checked_text(model_name or model_key or key[0], generation.reasoning),
                      int(generation.reasoning_tokens), int(generation.thinking_cut))
    if scores is not None:
        scores = [(s.metric, s.value, s.detail) for s in scores] + [
            (SCORER_MARK, None, SCORER_VERSION)]
    with store.write() as db:
        run_items.save_item(db, run_id, key, gen_key, json.dumps(prompt.context),
                            prompt.truncated, generation, scores, now())


def write_error(store: Store, run_id: int, key: ItemKey, context: list[int] | None,
                error: str) -> None:
    with store.write() as db:
        run_items.save_error(db, run_id, key, None if context is None else json.dumps(context),
                             error, now())


# --------------------------------------------------------------------------- reading back

def finished_items(store: Store, run_id: int) -> dict[ItemKey, str | None]:
    """The run's items → their generation key, or None when the item is not finished: it
    failed, or its scores are missing or from another scorer version (such items are answered
    again from the generation cache and rescored)."""
    return {(r[0], r[1], r[2]): r[3] if r[4] == SCORER_VERSION else None
            for r in run_items.items_with_mark(store, run_id, SCORER_MARK)}


def loose_labels(store: Store, run_id: int) -> dict[str, dict[str, dict[int, int]]]:
    """``labels[system][setting][query] = EM_loose`` of the run's scored items."""
    labels: dict = defaultdict(lambda: defaultdict(dict))
    for r in run_items.item_values(store, run_id, LOOSE):
        labels[r[0]][r[1]][r[2]] = int(round(r[3]))
    return labels


def is_scored(store: Store, gen_key: str, query: int) -> bool:
    row = run_items.score_row(store, gen_key, query, SCORER_MARK)
    return row is not None and row["detail"] == SCORER_VERSION


def stored_loose(store: Store, gen_key: str, query: int) -> float | None:
    row = run_items.score_row(store, gen_key, query, LOOSE)
    return None if row is None else row["value"]


def stored_status(store: Store, plan: Plan, *, generators: dict | None = None,
                  load_models: bool = True) -> dict:
    """What a dry run reports about the first batch: ``run_items`` (items this run has
    stored), ``cache_hits`` (other items whose exact generation the cache already holds),
    ``stored_items`` (both, as plan items), ``checked`` (what was looked up, in words) and
    ``looked_up`` (whether the cache was: the models were loaded). Cache hits
    are found by rendering prompts, which loads the generators; retrieved items are looked
    up only when the run has stored them (their context needs the retrieval)."""
    from engine.prompts import get_template
    from engine.runs.prompting import (PromptTooLong, context_rowids, fit_prompt,
                                       generation_key, load_chunks, load_queries)

    items = plan.items
    done: dict[ItemKey, str | None] = {}
    if plan.existing_run and not plan.replace_existing:
        done = finished_items(store, plan.existing_run.id)

    def key(item: PlanItem) -> ItemKey:
        return (item.system.label, plan.setting_of(item), item.query_rowid)

    stored = [i for i in items if done.get(key(i))]
    rest = [i for i in items if not done.get(key(i)) and i.kind != "retrieved"]
    hits: list[PlanItem] = []
    checked = "nothing left to look up" if not rest else "not looked up (models not loaded)"
    if rest and load_models:
        from models.catalog import load_generator

        template = get_template(plan.config.template)
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
                params = plan.params(item.system)
                prompt = fit_prompt(generator, template, query, item.kind,
                                    context_rowids(item.kind, query), chunks,
                                    params.max_tokens, thinking=params.thinking)
            except (LookupError, PromptTooLong):
                continue
            if generation_text(store, generation_key(generator.identity.key(), prompt.text,
                                                     params)) is not None:
                hits.append(item)
        checked = ("base, oracle and mixed prompts rendered and looked up; retrieved items "
                   "once retrieved")
    return {"run_items": len(stored), "cache_hits": len(hits), "stored_items": stored + hits,
            "checked": checked, "looked_up": bool(rest and load_models)}
