"""How each system's replies ended: answers cut at the token limit (and how many of them while
the model was still thinking), and a reasoning model's mean reasoning tokens.

A reasoning model's thinking is kept apart from its answer (:mod:`models.reasoning`), and an
answer cut while thinking is scored as the empty answer it is (lighteval's rule: a reply with
no closing tag is graded as empty). These counts say why such a system ranks low. Rates carry
exact Clopper–Pearson intervals, the mean reasoning tokens a percentile bootstrap over items
(:mod:`engine.stats`), each with its n. A run whose replies were never cut and held no
reasoning has no entry, so its report reads as before."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from engine.stats import N_BOOT, SEED, Estimate, bootstrap_ci, clopper_pearson
from engine.store import Store
from engine.store.items import reply_facts


@dataclass(frozen=True)
class ReplyRow:
    """A system's replies: ``n`` answers, ``cut`` of them at the token limit (``cut_rate``),
    ``cut_while_thinking``, ``reasoning`` items with reasoning and the mean
    ``reasoning_tokens`` over its answers."""

    system: str
    n: int
    cut: int
    cut_rate: Estimate
    cut_while_thinking: int
    reasoning: int
    reasoning_tokens: Estimate

    def as_json(self) -> dict[str, Any]:
        return {"system": self.system, "n": self.n, "cut": self.cut,
                "cut_rate": self.cut_rate.as_json(),
                "cut_while_thinking": self.cut_while_thinking, "reasoning": self.reasoning,
                "reasoning_tokens": self.reasoning_tokens.as_json()}


def reply_table(store: Store, run_id: int, n_boot: int = N_BOOT, seed: int = SEED
                ) -> list[ReplyRow]:
    """One :class:`ReplyRow` per system, or [] when no answer was cut and none held
    reasoning."""
    rows = reply_facts(store, run_id)
    if not any(r["cut"] or r["reasoning"] or r["reasoning_tokens"] for r in rows):
        return []
    by_system: dict[str, list] = defaultdict(list)
    for r in rows:
        by_system[r["system"]].append(r)
    out = []
    for system in sorted(by_system):
        items = by_system[system]
        n, cut = len(items), sum(int(bool(r["cut"])) for r in items)
        lo, hi = clopper_pearson(cut, n)
        tokens = bootstrap_ci([float(r["reasoning_tokens"] or 0) for r in items],
                              n_boot=n_boot, seed=seed)
        out.append(ReplyRow(system, n, cut, Estimate(cut / n, lo, hi, n),
                            sum(int(bool(r["thinking_cut"])) for r in items),
                            sum(int(bool(r["reasoning"])) for r in items), tokens))
    return out


def cut_rate_warning(a: str, b: str, counts: dict[str, tuple[int, int, int]]) -> str | None:
    """A warning (one sentence) when systems ``a`` and ``b`` had answers cut at the token limit at rates
    whose 95% intervals do not overlap, or when one had some cut and the other none: their
    difference may be the budget's, not the models' (``counts``: :func:`cut_counts`)."""
    (na, ca, ta), (nb, cb, tb) = counts.get(a, (0, 0, 0)), counts.get(b, (0, 0, 0))
    if not na or not nb or (ca == 0 and cb == 0):
        return None
    lo_a, hi_a = clopper_pearson(ca, na)
    lo_b, hi_b = clopper_pearson(cb, nb)
    if (ca and cb) and not (hi_a < lo_b or hi_b < lo_a):
        return None
    return (f"answers cut at the token limit differ: {a} {ca}/{na} "
            f"({ta} while thinking), {b} {cb}/{nb} ({tb} while thinking); the difference "
            "may be the token budget's, not the models' (raise --max-tokens)")
