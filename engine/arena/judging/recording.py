"""What judging writes (:mod:`engine.arena.judging.job` runs the judge; this module keeps its
rows): the arena row, opened for a session (created, or a stored one checked against this
config and judge model), each battle's row built from its verdicts (one transaction each), and
the header a session leaves (its counts, timings and how it ended).

An arena's header holds the run, the judge's identity, versions and machine, one entry per
session, the counts of the latest session's plan and the judge's cumulative timings."""

from __future__ import annotations

import json
from dataclasses import dataclass

from engine import machine_load
from engine.arena.judges.orders import canonical_winner, combine_orders, debiased_winner
from engine.arena.judging.plan import Matchup
from engine.arena.types import ArenaError
from engine.store.runs import RunInfo, run_exists
from engine.runs import owner
from engine.runs.header import identity_json, machine, now, package_versions
from engine.store import Store
from engine.store.arenas import (arena_by_name, battle_states, end_arena, insert_arena,
                                 save_battle, start_arena)

FIXED_CONFIG = ("mode", "judge", "template", "order", "seed", "reference", "systems")
"""Config keys an arena keeps for life; ``queries`` may grow (a larger sample extends it)."""


class ArenaConfigMismatch(ArenaError):
    """An arena of that name exists with another configuration or another judge model."""


def arena_header(run: RunInfo, generator, template_id: str) -> dict:
    """A fresh arena header: the run, the judge's identity, versions and machine."""
    return {"run": {"name": run.name, "dataset": run.dataset, "dataset_hash": run.dataset_hash},
            "judge": {**(identity_json(generator) or {}),
                      "chat": bool(getattr(generator, "chat", True)),
                      "device": getattr(generator, "device", None)},
            "template": template_id, "packages": package_versions(), "machine": machine(),
            "sessions": [], "counts": {}, "timings": {"judge_seconds": 0.0, "judge_calls": 0}}


@dataclass
class OpenedArena:
    arena_id: int
    header: dict
    stored: dict[tuple, tuple]     # (query, a, b) -> (winner, parse_failures, disagreement)


def open_arena(store: Store, run: RunInfo, name: str, config: dict, generator,
               contestants: list[str], concurrency: int, n_threads: int | None) -> OpenedArena:
    """Create the arena row, or check a stored one against this config and judge (raising
    :class:`ArenaConfigMismatch` with nothing written); start this session in its header
    (status ``running``), claimed by this process (:mod:`engine.runs.owner`: another live
    judging of it is refused with :class:`~engine.runs.owner.Busy`); read its stored battles.
    One transaction."""
    identity = identity_json(generator) or {}
    with store.write() as db:
        if not run_exists(db, run.id):       # deleted while the judge loaded
            raise ArenaError(f"run {run.name} was deleted; there is nothing to judge")
        row = arena_by_name(db, run.id, name)
        doing = f"arena {name} of run {run.name} is being judged"
        if row is not None:
            owner.claim_named(db, owner.ARENA, str(row["id"]), doing)
            old = json.loads(row["config"])
            differs = [k for k in FIXED_CONFIG if old.get(k) != config.get(k)]
            if differs:
                was = ", ".join(f"{k} {old.get(k)!r} (now {config.get(k)!r})"
                                for k in differs)
                raise ArenaConfigMismatch(
                    f"arena {name!r} of run {run.name!r} exists with another configuration: "
                    f"{was}; give a new name (--name)")
            header = json.loads(row["header"])
            known = header.get("judge", {})
            if known.get("key") and identity.get("key") != known["key"]:
                raise ArenaConfigMismatch(
                    f"arena {name!r} was judged by another {known.get('name')!r} "
                    f"(sha256 {str(known.get('sha256'))[:12]}…, now "
                    f"{str(identity.get('sha256'))[:12]}…); give a new name (--name)")
            arena_id = row["id"]
        else:
            header = arena_header(run, generator, config["template"])
            arena_id = insert_arena(db, run.id, name, config["mode"], config, header, now())
            owner.claim_named(db, owner.ARENA, str(arena_id), doing)
        header.pop("message", None)
        header["contestants"] = contestants
        header["concurrency"] = concurrency
        load = machine_load.load_now(wait=False)   # the judge's speed is measured under it
        header.setdefault("sessions", []).append(
            {"started_at": now(), "threads": n_threads, "concurrency": concurrency,
             "device": getattr(generator, "device", None), "packages": package_versions(),
             "load": load.as_json() if load else None})
        start_arena(db, arena_id, config, header, now())
        stored = {}
        for r in battle_states(db, arena_id):
            detail = json.loads(r["detail"]) if r["detail"] else {}
            stored[(r[0], r[1], r[2])] = (r["winner"], r["parse_failures"],
                                          bool(detail.get("disagreement")))
    return OpenedArena(arena_id, header, stored)


def record_battle(store: Store, arena_id: int, m: Matchup, shown: list[str], verdicts,
                  n_docs: int | None, order: str) -> tuple[str | None, int, bool]:
    """Store one battle from its verdicts (``(shown order, StoredVerdict)`` each) in its own
    transaction; ``(winner, parse failures, disagreement)``."""
    orders = []
    for shown_as, stored in verdicts:
        v = stored.verdict
        orders.append({"shown": shown_as, "key": stored.key, "label": v.label,
                       "winner": canonical_winner(v.label, shown_as), "probs": v.probs,
                       "method": v.method, "parse_failed": v.parse_failed,
                       "cached": stored.cached})
    if len(orders) == 2:
        winner, failures, disagreement = combine_orders(orders[0]["winner"],
                                                        orders[1]["winner"])
        if order == "debiased":
            winner = debiased_winner(orders[0]["probs"], orders[1]["probs"]) or winner
    else:
        winner = orders[0]["winner"]
        failures, disagreement = int(winner is None), False
    detail = {"orders": orders, "documents": n_docs, "disagreement": disagreement}
    save_battle(store, arena_id, m.query, m.a, m.b, winner,
                "both" if len(shown) == 2 else shown[0], [o["key"] for o in orders], failures,
                m.refusal, detail, now())
    return winner, failures, disagreement


def close_session(store: Store, arena_id: int, header: dict, status: str,
                  message: str | None, session: dict, judge_seconds: float, judge_calls: int,
                  counts: dict) -> None:
    """End the header's latest session (``session``: its figures), add its judge time to the
    timings, set the plan's ``counts`` and the message, and store it with ``status``."""
    header["sessions"][-1].update({"ended_at": now(), "status": status, **session})
    timings = header.setdefault("timings", {"judge_seconds": 0.0, "judge_calls": 0})
    timings["judge_seconds"] = round(timings.get("judge_seconds", 0.0) + judge_seconds, 3)
    timings["judge_calls"] = timings.get("judge_calls", 0) + judge_calls
    calls = timings["judge_calls"]
    timings["seconds_per_call"] = timings["judge_seconds"] / calls if calls else None
    header["counts"] = counts
    if message:
        header["message"] = message
    try:
        end_arena(store, arena_id, header, status, now())
    finally:
        owner.release(store, owner.ARENA, str(arena_id))
