"""Reading a run's arenas and battles back (the ratings, the surrogate, the CLI and the TUI).

A battle row (table ``battles``) holds one judged comparison of two answers to one query:

- ``system_a`` / ``system_b``: contestants (:func:`engine.arena.types.arena_system`) in
  canonical order: sorted for pairwise arenas; against a reference, ``system_a`` is the
  contestant and ``system_b`` is ``'reference'`` (the dataset's long-form reference answer)
  or the reference contestant's name;
- ``winner``: 'a', 'b' or 'tie' in that canonical order; NULL when no judge reply for it
  could be parsed (a parse failure: left out of the fit, counted everywhere);
- ``shown``: the order(s) the judge saw: 'ab' (system_a was Answer A), 'ba' or 'both';
- ``judgment_keys``: the ``judgments`` rows behind it, in the order judged;
- ``parse_failures``: how many of those replies could not be parsed (0, 1 or 2);
- ``refusal``: which answers decline (no-answer, :func:`engine.metrics.no_answer.is_no_answer`):
  bit 1 for system_a, bit 2 for system_b;
- ``detail``: JSON with each order's label, probabilities, method and whether it came from
  the cache, the number of documents shown and, for 'both', whether the orders disagreed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from engine.arena.header import ArenaHeader
from engine.arena.types import Battle
from engine.runs.owner import ARENA, claimed_status
from engine.runs.lookup import RunInfo
from engine.store import Store, json_column
from engine.store.arenas import (arena_rows, battle_winners, battles_with_queries,
                                 judgment_raws)


class ArenaNotFound(LookupError):
    """No arena of that name for the run (the message lists the ones there are)."""


@dataclass(frozen=True)
class ArenaInfo:
    id: int
    run: str
    name: str
    mode: str                  # 'pairwise' | 'reference'
    judge: str | None          # the judge model's name
    status: str
    battles: int
    parse_failures: int        # unparsed judge replies
    unparsed_battles: int      # battles without a verdict
    created_at: str
    updated_at: str
    config: dict = field(default_factory=dict)
    header: ArenaHeader = field(default_factory=ArenaHeader)

    def as_json(self) -> dict:
        """The arena's row without its header (whose JSON is ``header.to_json()``)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "header"}


def list_arenas(store: Store, run: RunInfo) -> list[ArenaInfo]:
    """The run's arenas, oldest first, with their battle and parse-failure counts; one
    stored as running whose judging process is gone reads ``interrupted``."""
    out = []
    for r in arena_rows(store, run.id):
        config = json_column(r["config"], {})
        status = claimed_status(store, ARENA, str(r["id"]), r["status"])
        out.append(ArenaInfo(r["id"], run.name, r["name"], r["mode"], config.get("judge"),
                             status, r["n"], r["pf"], r["unparsed"], r["created_at"],
                             r["updated_at"], config, _header(r["header"])))
    return out


def _header(text: str | None) -> ArenaHeader:
    """The arena header stored as ``text``; the empty header when it is not a JSON object (a
    row is read back as well as it can be rather than failing the listing)."""
    try:
        return ArenaHeader.from_json(text)
    except ValueError:
        return ArenaHeader()


def _names(infos: list[ArenaInfo]) -> str:
    return ", ".join(f"{i.name} ({i.mode}, {i.battles} battles)" for i in infos)


def resolve_arena(store: Store, run: RunInfo, arena_name: str | None = None,
                  mode: str | None = None) -> ArenaInfo:
    """The arena ``arena_name`` of the run; with None, the only arena (of ``mode``, when
    given), else the latest of that mode (default: pairwise). Errors list the arenas."""
    infos = list_arenas(store, run)
    run_name = run.name
    if arena_name is not None:
        for info in infos:
            if info.name == arena_name:
                return info
        known = f"its arenas: {_names(infos)}" if infos else "it has no arenas yet"
        raise ArenaNotFound(f"run {run_name!r} has no arena named {arena_name!r} ({known})")
    if not infos:
        raise ArenaNotFound(f"run {run_name!r} has no arenas yet: judge it first "
                            f"(`mirage-tui arena judge {run_name} --judge MODEL`)")
    candidates = [i for i in infos if mode is None or i.mode == mode]
    if len(infos) == 1 and candidates:
        return infos[0]
    wanted = mode or "pairwise"
    of_mode = [i for i in infos if i.mode == wanted]
    if of_mode:
        return of_mode[-1]
    raise ArenaNotFound(f"run {run_name!r} has no {wanted} arena; name one of: "
                        f"{_names(infos)}")


def load_battles(store: Store, run: RunInfo, arena_name: str | None = None) -> list[Battle]:
    """The arena's battles as :class:`Battle` (winner None for parse failures), by query and
    contestants. ``arena_name`` None: the only arena, else the latest pairwise one."""
    info = resolve_arena(store, run, arena_name)
    return battles_of(store, info.id)


def battles_of(store: Store, arena_id: int) -> list[Battle]:
    return [Battle(r[0], r[1], r[2], r[3]) for r in battle_winners(store, arena_id)]


BATTLE_COLUMNS = ("arena", "query_id", "query_rowid", "source", "language", "system_a",
                  "system_b", "winner", "shown", "parse_failures", "refusal_a", "refusal_b",
                  "disagreement", "documents", "label_ab", "label_ba", "probs_ab", "probs_ba",
                  "raw_ab", "raw_ba", "method", "judgment_keys", "created_at", "human_verdicts")


def battle_rows(store: Store, run: RunInfo, arena_name: str | None = None) -> list[dict]:
    """One flat dict per battle (:data:`BATTLE_COLUMNS`) for export and inspection: the query,
    the contestants, the verdict, the order(s) shown with each order's label (as the judge
    wrote it: 'A', 'B' or 'tie'), probabilities and raw reply, the judgment keys, and the
    verdicts people entered on it (``engine.arena.trust.human_verdicts``)."""
    info = resolve_arena(store, run, arena_name)
    rows = battles_with_queries(store, info.id)
    raws = judgment_raws(store, {k for r in rows for k in json_column(r["judgment_keys"], [])})
    from engine.arena.trust.human_verdicts import human_verdicts_of_run

    human = human_verdicts_of_run(store, run)
    out = []
    for r in rows:
        detail = json_column(r["detail"], {})
        orders = {o.get("shown"): o for o in detail.get("orders", [])}
        ab, ba = orders.get("ab", {}), orders.get("ba", {})
        methods = sorted({o.get("method") for o in orders.values() if o.get("method")})
        out.append({
            "arena": info.name, "query_id": r["query_id"], "query_rowid": r["query_rowid"],
            "source": r["source"], "language": r["language"], "system_a": r["system_a"],
            "system_b": r["system_b"], "winner": r["winner"], "shown": r["shown"],
            "parse_failures": r["parse_failures"], "refusal_a": bool(r["refusal"] & 1),
            "refusal_b": bool(r["refusal"] & 2),
            "disagreement": bool(detail.get("disagreement", False)),
            "documents": detail.get("documents"),
            "label_ab": ab.get("label"), "label_ba": ba.get("label"),
            "probs_ab": ab.get("probs"), "probs_ba": ba.get("probs"),
            "raw_ab": raws.get(ab.get("key")) if ab else None,
            "raw_ba": raws.get(ba.get("key")) if ba else None,
            "method": ",".join(methods) or None,
            "judgment_keys": json_column(r["judgment_keys"], []), "created_at": r["created_at"],
            "human_verdicts": [{"annotator": h.annotator, "label": h.label, "note": h.note,
                                "created_at": h.created_at} for h in human.get(
                                    (r["query_rowid"], r["system_a"], r["system_b"]), [])]})
    return out
