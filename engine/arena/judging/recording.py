"""What judging writes (:mod:`engine.arena.judging.job` runs the judge; this module keeps its
rows): the arena row, opened for a session (created, or a stored one checked against this
config and judge model), each battle's row built from its verdicts (one transaction each), and
the header a session leaves (its counts, timings and how it ended).

The arena's header is :class:`engine.arena.header.ArenaHeader`: read once as the arena opens,
each update a new header, stored as its text."""

from __future__ import annotations

import json
from dataclasses import dataclass

from engine import machine_load
from engine.arena.header import ArenaHeader
from engine.arena.judges.orders import canonical_winner, combine_orders, debiased_winner
from engine.arena.judging.plan import Matchup
from engine.arena.types import ArenaError
from engine.runs.lookup import RunInfo
from engine.store.runs import run_exists
from engine.runs import owner
from engine.runs.header import identity_json, now
from engine.store import Store
from engine.store.arenas import (arena_by_name, battle_states, end_arena, insert_arena,
                                 save_battle, start_arena)

FIXED_CONFIG = ("mode", "judge", "template", "order", "seed", "reference", "systems")
"""Config keys an arena keeps for life; ``queries`` may grow (a larger sample extends it)."""


class ArenaConfigMismatch(ArenaError):
    """An arena of that name exists with another configuration or another judge model."""


@dataclass(frozen=True)
class OpenedArena:
    arena_id: int
    header: ArenaHeader            # this session started in it
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
            header = ArenaHeader.from_json(row["header"])
            problem = header.judge_problem(name, identity)
            if problem:
                raise ArenaConfigMismatch(problem)
            arena_id = row["id"]
        else:
            header = ArenaHeader.for_judge(run, generator, config["template"])
            arena_id = insert_arena(db, run.id, name, config["mode"], config, header.to_json(),
                                    now())
            owner.claim_named(db, owner.ARENA, str(arena_id), doing)
        load = machine_load.load_now(wait=False)   # the judge's speed is measured under it
        header = header.with_session(contestants, concurrency, n_threads,
                                     getattr(generator, "device", None),
                                     load.as_json() if load else None)
        start_arena(db, arena_id, config, header.to_json(), now())
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


def close_session(store: Store, arena_id: int, header: ArenaHeader, status: str,
                  message: str | None, session: dict, judge_seconds: float, judge_calls: int,
                  counts: dict) -> ArenaHeader:
    """End the header's latest session (``session``: its figures), add its judge time to the
    timings, set the plan's ``counts`` and the message, and store it with ``status``; the
    header stored (:meth:`ArenaHeader.with_session_ended`)."""
    header = header.with_session_ended(status, message, session, judge_seconds, judge_calls,
                                       counts)
    try:
        end_arena(store, arena_id, header.to_json(), status, now())
    finally:
        owner.release(store, owner.ARENA, str(arena_id))
    return header
