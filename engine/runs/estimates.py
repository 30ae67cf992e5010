"""How long a run will take: one estimator for the New-run form, ``run --dry-run`` and the Live
ETA, from the speeds measured on this machine (:mod:`engine.model_speeds`: a model's newest
measurement in this workspace, corrected for the load now).

The stored generations also give the tokens of an item: the mean prompt tokens evaluated per
setting (``base``, ``oracle``, ``mixed``, ``retrieved@k``: the prompt cache makes these differ)
and the mean tokens of an answer (capped at the system's budget: ``max_tokens``, or the
thinking budget of a system that thinks). Without them prompt tokens are guessed from text
length (:data:`~engine.model_speeds.CHARS_PER_TOKEN` bytes a token) and every answer is taken
to be its budget long (an upper bound). A system that thinks counts the reasoning tokens its
model's stored replies measured in that mode (:func:`planned_answer_tokens`).

:func:`estimate_remaining` is the one function the three places call: the seconds for the
items of the first batch that the run has not finished (a resumed run counts only what is
left), counting each generator's load (:func:`load_seconds`) and the requests it will have in
flight (:func:`parallel_factor`: only a batching backend gains from them). The Live ETA
(:class:`engine.runs.live_eta.LiveEta`) starts from the same figures and follows the run's pace.
A model check is kept here (:func:`record_model_check`) for the estimates after a relaunch.
"""

from __future__ import annotations

import json
import math
from typing import Iterable, Mapping

from engine import machine_load
from engine.model_speeds import (Speed, latest_model_check, model_file_size, planned_backend,
                                 speeds_now, stored_name)
from engine.runs.header import now
from engine.runs.plan import ANSWER_ROOM, Plan, PlanItem, System, thinking_measured
from engine.store import Store
from engine.store import speeds as speed_rows

# --------------------------------------------------------------------------- model checks

def record_model_check(store: Store, result: dict, model: str | None = None) -> None:
    """Keep a model check's result (:func:`models.check.check_model`'s dict) under the one
    spelling (:func:`engine.model_speeds.stored_name`) of ``model`` (the name the check was
    asked for; default the result's): its speeds feed the estimates after a relaunch, and the
    Models screen can show it again."""
    name = model or result.get("name")
    if not name:
        return
    name = stored_name(name)
    if result.get("ok") and "machine_load" not in result:
        load = machine_load.load_now()            # the check is over: its model is idle
        result = {**result, "machine_load": load.as_json() if load else None}
    speed_rows.save_model_check(store, name, result.get("kind"), bool(result.get("ok")),
                                result.get("device"), result.get("prompt_tokens_per_s"),
                                result.get("tokens_per_s"),
                                json.dumps(result, ensure_ascii=False, default=str), now())


# --------------------------------------------------------------------------- in flight, loads

PARALLEL_GAIN = 0.5
"""Each request in flight beyond the first adds this share of one request's speed where
requests are batched (llama-server slots, an HTTP endpoint): a conservative figure (a
measurement found 2.5× for 4 in flight through llama-server on 2 CPU cores, 12 XQuAD items)."""


def parallel_factor(backend: str, slots: int, concurrency: int | None) -> tuple[int, float]:
    """``(requests in flight, speed-up)``: our own host and an in-process model answer one
    request at a time, so more in flight only queue (×1); a batching backend gains
    :data:`PARALLEL_GAIN` per request beyond the first, up to its slots (an endpoint: as
    many as are sent)."""
    wanted = max(1, concurrency or slots)
    if backend == "llama.cpp":
        return wanted, 1.0
    batched = wanted if backend == "http" else min(wanted, slots)
    return wanted, 1.0 + PARALLEL_GAIN * (batched - 1)


def in_flight_words(in_flight: int, parallel: float, backend: str) -> str:
    """``4 in flight, ×2.5 (batched; a conservative gain)``, ``4 in flight, ×1 (queued: one
    request at a time on llama.cpp)``; empty for one request at a time."""
    if in_flight <= 1:
        return ""
    if parallel <= 1.0:
        return f"{in_flight} in flight, ×1 (queued: one request at a time on {backend})"
    return f"{in_flight} in flight, ×{parallel:.1f} (batched by {backend}; a conservative gain)"


LOAD_BYTES_PER_S = 200e6      # reading and mapping a GGUF file, before any load was timed here
LOAD_START_S = 2.0            # starting the model host process (imports, llama.cpp init)


def load_seconds(store: Store | None, name: str) -> tuple[float, str]:
    """``(seconds, where from)`` to load generator ``name``: its newest logged load in this
    workspace, else its model check's, else from its file size; 0 for an endpoint."""
    from engine.store.load_times import newest_load_seconds

    logged = newest_load_seconds(store, "generator", name) if store is not None else None
    if logged is not None:
        return logged, "its last load here"
    check = latest_model_check(store, name) if store is not None else None
    if check and check.get("ok") and check.get("load_seconds") is not None:
        return float(check["load_seconds"]), "its model check's load"
    size = model_file_size(name)
    if not size:
        return 0.0, "nothing to load"
    return LOAD_START_S + size / LOAD_BYTES_PER_S, "assumed from its file size"


# --------------------------------------------------------------------------- the estimate

def call_seconds(prompt_tokens: float, answer_tokens: float, speed: Speed) -> float:
    """One model call, one request at a time: its prompt tokens evaluated at the prompt rate,
    its answer generated at the generation rate (runs' items and judges' battles alike)."""
    return prompt_tokens / speed.prompt_tps + answer_tokens / speed.gen_tps


def item_seconds(store: Store | None, plan: Plan, speeds: Mapping[str, Speed],
                 queries: list[int] | None = None) -> list[tuple[PlanItem, float, float]]:
    """``(item, prompt tokens, seconds)`` for the items of ``queries`` (default: the first
    batch), in plan order. Prompt tokens are the measured mean for the item's model and
    setting, else guessed from text length: a retrieved@k prompt right after retrieved@j of
    the same retriever costs only its k − j new chunks (the prefix cache)."""
    queries = plan.queries[:plan.first_batch] if queries is None else queries
    question_bytes, chunk_bytes = _text_sizes(store, queries)
    previous_k: dict[tuple, int] = {}
    answers: dict[System, float] = {}
    out = []
    for item in plan.items_for(queries):
        q_bytes = question_bytes.get(item.query_rowid, 100)
        if item.kind == "base":
            new_bytes = q_bytes
        elif item.kind == "oracle":
            new_bytes = q_bytes + chunk_bytes.get(item.query_rowid, 600)
        elif item.kind == "mixed":
            new_bytes = q_bytes + 5 * chunk_bytes.get(item.query_rowid, 600)
        else:
            chain = (item.system, item.query_rowid, item.retriever)
            before = previous_k.get(chain, 0)
            previous_k[chain] = item.k
            new_bytes = (0 if before else q_bytes) + (item.k - before) * chunk_bytes.get(
                item.query_rowid, 600)
        speed = speeds[item.system.generator]
        setting = item.kind if item.kind != "retrieved" else f"retrieved@{item.k}"
        tokens = speed.prompt_tokens.get(setting, (new_bytes + 40) / speed.text_bytes_per_token)
        if item.system not in answers:
            answers[item.system] = planned_answer_tokens(store, plan, item.system, speed)
        out.append((item, tokens, call_seconds(tokens, answers[item.system], speed)))
    return out


def planned_answer_tokens(store: Store | None, plan: Plan, system: System,
                          speed: Speed) -> float:
    """Tokens an answer of ``system`` is taken to be, capped at its budget
    (:meth:`~engine.runs.plan.Plan.max_tokens`): for a system that thinks, the mean reasoning
    tokens its model's stored replies in that mode measured plus
    :data:`~engine.runs.plan.ANSWER_ROOM` (the whole budget before any was measured); else
    its model's measured mean answer, or the budget."""
    budget = plan.max_tokens(system)
    if plan.thinks(system):
        mean = thinking_measured(store, system)[2]
        return min(mean + ANSWER_ROOM, budget) if mean else budget
    return min(speed.answer_tokens or budget, budget)


def estimate(store: Store | None, plan: Plan, speeds: Mapping[str, Speed],
             skip: Iterable[PlanItem] = ()) -> dict:
    """Seconds for the first batch's items not in ``skip``: ``{"seconds", "items",
    "generators": {name: {items, prompt_tokens, seconds, speed, prompt_tps, gen_tps,
    answer_tokens, load_seconds, load, load_factor, load_note, in_flight, parallel,
    backend}}}``: per generator its load (when it has items to do) plus its items' seconds
    divided by the in-flight speed-up (:func:`parallel_factor`); a load corrected for the
    machine's load as its speed is (``load_factor``)."""
    skipped = set(skip)
    per_generator: dict[str, dict] = {}
    for item, tokens, seconds in item_seconds(store, plan, speeds):
        gen = per_generator.setdefault(item.system.generator,
                                       {"items": 0, "prompt_tokens": 0.0, "seconds": 0.0})
        if item in skipped:
            continue
        gen["items"] += 1
        gen["prompt_tokens"] += tokens
        gen["seconds"] += seconds
    for name, gen in per_generator.items():
        backend, slots = planned_backend(name)
        gen["in_flight"], gen["parallel"] = parallel_factor(backend, slots,
                                                            plan.config.concurrency)
        gen["load_seconds"], gen["load"] = load_seconds(store, name) if gen["items"] else (0, "")
        gen["load_seconds"] *= speeds[name].factor        # a busier machine loads slower too
        gen["backend"] = backend
        gen["seconds"] = gen["load_seconds"] + gen["seconds"] / gen["parallel"]
    return {"seconds": sum(g["seconds"] for g in per_generator.values()),
            "items": sum(g["items"] for g in per_generator.values()),
            "generators": {name: {**g, "speed": speeds[name].source,
                                  "prompt_tps": speeds[name].prompt_tps,
                                  "gen_tps": speeds[name].gen_tps,
                                  "load_factor": speeds[name].factor,
                                  "load_note": speeds[name].load_note,
                                  "answer_tokens": _answer_tokens(store, plan, name,
                                                                  speeds[name])}
                           for name, g in per_generator.items()}}


def _answer_tokens(store: Store | None, plan: Plan, generator: str, speed: Speed) -> float:
    """A generator's tokens an answer (:func:`planned_answer_tokens`), the mean over its
    systems when their thinking gives them different ones."""
    each = [planned_answer_tokens(store, plan, s, speed) for s in plan.systems
            if s.generator == generator]
    return each[0] if len(set(each)) == 1 else sum(each) / len(each)


def likely_cached(store: Store | None, plan: Plan, queries: list[int] | None = None
                  ) -> set[PlanItem]:
    """The items of ``queries`` (default: the first batch) whose generation the cache likely
    holds: another run's item of the same system (generator, template, retriever), setting
    and query, generated with the same sampling. Found without loading a model (an exact
    look-up renders each prompt: :func:`engine.runs.rows.stored_status`); such an item costs
    no model time, so a plan of items all in the store is estimated at ~0 s."""
    queries = plan.queries[:plan.first_batch] if queries is None else queries
    if store is None or not queries:
        return set()
    stored = {(r["system"], r["setting"], r["query_rowid"], r["params"])
              for r in speed_rows.stored_item_params(store, queries)}
    if not stored:
        return set()
    from engine.runs.prompting import params_json, sampling_params

    out = set()
    for item in plan.items_for(queries):
        params = (plan.params(item.system) if hasattr(plan, "params")
                  else sampling_params(plan.config.max_tokens, plan.config.seed))
        if (item.system.label, plan.setting_of(item), item.query_rowid,
                params_json(params)) in stored:
            out.add(item)
    return out


def estimate_remaining(store: Store, plan: Plan, speeds: Mapping[str, Speed] | None = None,
                       skip: Iterable[PlanItem] = (), cache_looked_up: bool = False) -> dict:
    """The estimate of the items of the first batch the run has not finished yet (all of them
    for a new run; ``skip``: more items known to need no model, e.g. cache hits), at the
    measured speeds corrected for the machine's load now (:func:`speeds_now`). Items the
    generation cache likely holds (:func:`likely_cached`) are free too, unless
    ``cache_looked_up`` (``skip`` holds the exact hits; retrieved items were not looked up):
    ``cached`` counts them. The one estimator behind New run, ``run --dry-run`` and the Live
    ETA."""
    from engine.runs.rows import finished_items

    speeds = speeds_now(store, plan.config.generators) if speeds is None else speeds
    done: dict = {}
    if plan.existing_run and not plan.replace_existing:
        done = finished_items(store, plan.existing_run.id)
    finished = [i for i in plan.items
                if done.get((i.system.label, plan.setting_of(i), i.query_rowid))]
    skipped = {*finished, *skip}
    cached = [i for i in likely_cached(store, plan) if i not in skipped
              and (not cache_looked_up or i.kind == "retrieved")]
    guess = estimate(store, plan, speeds, [*skipped, *cached])
    guess["finished"] = len(finished)
    guess["cached"] = len(cached)
    return guess


def _text_sizes(store: Store | None, queries: list[int]) -> tuple[dict, dict]:
    """UTF-8 bytes of each query's text and the mean of its pool chunks."""
    if store is None or not queries:
        return {}, {}
    question, chunk = speed_rows.text_bytes(store, queries)
    return question, {q: math.ceil(size) for q, size in chunk.items()}
