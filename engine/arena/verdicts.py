"""The judge's verdicts on one query, for the inspector: every battle of every arena of a run
that this query took part in, with each judged order's label and probabilities.

A battle row keeps its verdict in canonical order (``winner`` 'a', 'b' or 'tie' for
``system_a`` / ``system_b``, NULL when no judge reply could be parsed) and, in ``detail``, one
entry per order the judge saw (see :mod:`engine.arena.battles`). An order's ``label`` is the
judge's own word ('A', 'B' or 'tie' for the answer it was *shown* first or second), so
:attr:`OrderVerdict.winner` translates it back to a contestant's name: in the 'ba' order
Answer A was ``system_b``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.runs.lookup import load_run
from engine.store import Store, json_column


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


def verdicts_for(store: Store, run_name: str, query_rowid: int) -> list[ItemVerdict]:
    """Every battle on query ``query_rowid`` in the arenas of run ``run_name``, by arena (oldest
    first), then contestants. Empty when the run has no arenas or the query was not judged;
    :class:`engine.results.records.RunNotFound` for an unknown run."""
    run = load_run(store, run_name)
    rows = store.query(
        "SELECT a.name, a.mode, a.config, b.system_a, b.system_b, b.winner, b.shown, "
        "b.parse_failures, b.detail FROM battles b JOIN arenas a ON a.id = b.arena_id "
        "WHERE a.run_id = ? AND b.query_rowid = ? ORDER BY a.id, b.system_a, b.system_b",
        (run.id, query_rowid))
    out = []
    for r in rows:
        detail = json_column(r["detail"], {})
        orders = [_order(o, r["system_a"], r["system_b"]) for o in detail.get("orders", [])
                  if isinstance(o, dict)]
        out.append(ItemVerdict(r["name"], r["mode"], json_column(r["config"], {}).get("judge"),
                               r["system_a"], r["system_b"], r["winner"], r["shown"],
                               r["parse_failures"], bool(detail.get("disagreement", False)),
                               orders))
    return out
