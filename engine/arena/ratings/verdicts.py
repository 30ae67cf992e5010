"""The judge's verdicts on one query, for the inspector: every battle of every arena of a run
that this query took part in, with each judged order's label and probabilities.

A battle row keeps its verdict in canonical order (``winner`` 'a', 'b' or 'tie' for
``system_a`` / ``system_b``, NULL when no judge reply could be parsed) and, in ``detail``, one
entry per order the judge saw (see :mod:`engine.arena.ratings.battles`). An order's ``label`` is the
judge's own word ('A', 'B' or 'tie' for the answer it was *shown* first or second), so
:attr:`OrderVerdict.winner` translates it back to a contestant's name: in the 'ba' order
Answer A was ``system_b``.

:class:`VerdictChoices` is what a person's own verdict may be entered on (the Inspector's
dialog): the query's contestants, the run's arenas and these battles, and which pair is the
one on screen (:meth:`VerdictChoices.pair_on_screen`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.arena.ratings.battles import list_arenas
from engine.arena.types import arena_system, split_arena_system
from engine.runs.lookup import RunInfo
from engine.store import Store, json_column
from engine.store.arenas import query_answer_rows, query_battles


@dataclass(frozen=True)
class OrderVerdict:
    """What the judge said when shown the two answers in one order."""

    shown: str                     # 'ab': system_a was Answer A; 'ba': system_b was
    label: str | None              # 'A', 'B', 'tie'; None: the reply was not parsed
    probs: dict | None             # label -> probability (logits method only)
    method: str | None             # 'logits' | 'parsed'
    winner: str | None             # the contestant the label names, 'tie', or None


@dataclass(frozen=True)
class ItemVerdict:
    """One battle on the query: the two contestants, the stored verdict, each order judged."""

    arena: str
    mode: str                      # 'pairwise' | 'reference'
    judge: str | None
    system_a: str
    system_b: str
    winner: str | None             # 'a' | 'b' | 'tie' | None (parse failure)
    shown: str                     # 'ab', 'ba' or 'both'
    parse_failures: int
    disagreement: bool             # 'both': the orders disagreed (stored as a tie)
    orders: list[OrderVerdict] = field(default_factory=list)

    @property
    def winner_name(self) -> str | None:
        """The winning contestant's name, 'tie', or None for a parse failure."""
        return {"a": self.system_a, "b": self.system_b, "tie": "tie"}.get(self.winner or "")

    def involves(self, system: str) -> bool:
        """True when ``system`` (a contestant name, or a run system whose contestants are
        ``system | setting``) took part."""
        return any(name == system or name.startswith(f"{system} | ")
                   for name in (self.system_a, self.system_b))


def _order(entry: dict, system_a: str, system_b: str) -> OrderVerdict:
    shown = entry.get("shown") or "ab"
    first, second = (system_a, system_b) if shown == "ab" else (system_b, system_a)
    label = entry.get("label")
    winner = {"A": first, "B": second, "tie": "tie"}.get(label) if label else None
    return OrderVerdict(shown, label, entry.get("probs"), entry.get("method"), winner)


def verdicts_for(store: Store, run: RunInfo, query_rowid: int) -> list[ItemVerdict]:
    """Every battle on query ``query_rowid`` in the arenas of the run, by arena (oldest
    first), then contestants. Empty when the run has no arenas or the query was not judged."""
    out = []
    for r in query_battles(store, run.id, query_rowid):
        detail = json_column(r["detail"], {})
        orders = [_order(o, r["system_a"], r["system_b"]) for o in detail.get("orders", [])
                  if isinstance(o, dict)]
        out.append(ItemVerdict(r["name"], r["mode"], json_column(r["config"], {}).get("judge"),
                               r["system_a"], r["system_b"], r["winner"], r["shown"],
                               r["parse_failures"], bool(detail.get("disagreement", False)),
                               orders))
    return out


@dataclass(frozen=True)
class ArenaChoice:
    name: str
    mode: str                      # 'pairwise' | 'reference'
    judge: str | None


@dataclass(frozen=True)
class VerdictChoices:
    """What a person's verdict on one query of a run may be entered on: the contestants that
    answered it (``system | setting``; by system, then plan order), the run's arenas (oldest
    first) and the judge's battles on the query (:func:`verdicts_for`). The verdict is on two
    of the contestants' answers; an arena only says whether, and what, its judge said of
    them."""

    run: str
    query_rowid: int
    contestants: list[str]
    arenas: list[ArenaChoice]
    battles: list[ItemVerdict]

    def battle(self, arena: str | None, a: str, b: str) -> ItemVerdict | None:
        """The battle between ``a`` and ``b`` (either order) on this query in ``arena``."""
        return next((v for v in self.battles if v.arena == arena
                     and {v.system_a, v.system_b} == {a, b}), None)

    def arenas_holding(self, a: str, b: str) -> list[str]:
        """The arenas with a battle between ``a`` and ``b`` on this query, oldest first."""
        return list(dict.fromkeys(v.arena for v in self.battles
                                  if {v.system_a, v.system_b} == {a, b}))

    def arena_or_newest(self, preferred: str | None) -> str | None:
        """``preferred`` when the run has that arena, else its newest (the Leaderboard's
        default), else None."""
        names = [a.name for a in self.arenas]
        return preferred if preferred in names else (names[-1] if names else None)

    def ordered(self, arena: str | None, a: str, b: str) -> tuple[str, str]:
        """The pair as its battle names it (``system_a`` first; in ``arena``, else in any
        arena), else as given."""
        v = self.battle(arena, a, b) or next(
            (v for v in self.battles if {v.system_a, v.system_b} == {a, b}), None)
        return (v.system_a, v.system_b) if v else (a, b)

    def _own(self, system: str) -> list[str]:
        return [c for c in self.contestants if split_arena_system(c)[0] == system]

    def pair_on_screen(self, systems: list[str], setting: str | None,
                       arena: str | None) -> tuple[str, str] | None:
        """The pair a person looking at ``systems`` (the item's, and the one beside it) with
        the panel of ``setting`` in view (None: no panel in view) means:

        - two systems side by side: both in that setting (none in view: the first setting
          ``arena`` judged them in, else their first common one);
        - one system: its contestant in that setting (none in view: its first one ``arena``
          judged) against its partner in ``arena`` on this query (one of the same system
          first), else another setting of the same system, else any other contestant.

        In the order its battle names it; None when the query has no such pair."""
        if len(systems) > 1:
            left, right = systems[0], systems[1]
            common = [split_arena_system(c)[1] for c in self._own(left)
                      if arena_system(right, split_arena_system(c)[1]) in self.contestants]
            if setting not in common:
                setting = next((s for s in common if self.battle(
                    arena, arena_system(left, s), arena_system(right, s))),
                    common[0] if common else None)
            if setting is None:
                return None
            return self.ordered(arena, arena_system(left, setting), arena_system(right, setting))
        own = self._own(systems[0])
        judged = [v for v in self.battles if v.arena == arena and
                  v.system_a in self.contestants and v.system_b in self.contestants]
        panel = arena_system(systems[0], setting) if setting is not None else None
        if panel not in own:
            panel = next((c for c in own if any(v.involves(c) for v in judged)),
                         own[0] if own else None)
        if panel is None:
            return None
        partners = [v.system_b if v.system_a == panel else v.system_a
                    for v in judged if panel in (v.system_a, v.system_b)]
        others = [c for c in self.contestants if c != panel]
        partner = next((p for p in partners if p in own), None) or next(iter(partners), None) \
            or next((c for c in others if c in own), None) or next(iter(others), None)
        return None if partner is None else self.ordered(arena, panel, partner)


def verdict_choices(store: Store, run: RunInfo, query_rowid: int) -> VerdictChoices:
    """:class:`VerdictChoices` of query ``query_rowid`` in the run."""
    contestants = [arena_system(r["system"], r["setting"])
                   for r in query_answer_rows(store, run.id, query_rowid)]
    arenas = [ArenaChoice(a.name, a.mode, a.judge) for a in list_arenas(store, run)]
    return VerdictChoices(run.name, query_rowid, contestants, arenas,
                          verdicts_for(store, run, query_rowid))
