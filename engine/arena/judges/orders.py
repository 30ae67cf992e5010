"""Position bias in pairwise judging: in which order a battle is shown, and how the verdicts of
both orders make one (docs/METRICS.md §2, §4).

``order="random"``: each battle is judged in its seeded order
(:func:`engine.arena.judging.plan.shown_order`). The RAG-QA Arena reference code puts the model's
answer first when the query has an even number of words; mirage-tui randomises with the seed
instead (or judges both orders). ``order="both"``: both orders are judged; a disagreement is
stored as a tie (both labels in ``detail``); one unparsed order and one parsed: the parsed one
decides and the failure is counted; both unparsed: winner NULL. ``order="debiased"``: both
orders are judged and, when both verdicts carry label probabilities, each side's probability
is averaged over the two orders (P(a) = mean of P(A | a shown first) and P(B | a shown
second)), which cancels a judge's constant preference for a position; the side with the higher
mean wins when it leads by at least ``DEBIAS_TIE_MARGIN``, else the battle is a tie. This is
mirage-tui's addition for small local judges, which often prefer Answer A whatever it says
(then 'both' turns nearly every battle into a tie); without probabilities it falls back to
'both'.
"""

from __future__ import annotations

ORDERS = ("random", "both", "debiased")
DEBIAS_TIE_MARGIN = 0.02   # mean-probability lead below which a debiased battle is a tie


def canonical_winner(label, shown: str) -> str | None:
    """The judge's 'A' / 'B' / 'tie' for the order shown, as 'a' / 'b' / 'tie' (None: unparsed)."""
    if label is None:
        return None
    if label == "tie":
        return "tie"
    first = label == "A"
    return ("a" if first else "b") if shown == "ab" else ("b" if first else "a")


def shown_score(verdict) -> float | None:
    """P(B) - P(A) of one verdict in the order it was shown; None when the judge gave no
    probabilities (or its reply was not parsed)."""
    if verdict.probs and not verdict.parse_failed:
        return float(verdict.probs.get("B", 0.0)) - float(verdict.probs.get("A", 0.0))
    return None


def debiased_winner(ab_probs: dict | None, ba_probs: dict | None,
                    margin: float = DEBIAS_TIE_MARGIN) -> str | None:
    """'a', 'b' or 'tie' from the label probabilities of both orders (module docstring); None
    when either order has no probabilities."""
    if not ab_probs or not ba_probs:
        return None
    p_a = (ab_probs.get("A", 0.0) + ba_probs.get("B", 0.0)) / 2
    p_b = (ab_probs.get("B", 0.0) + ba_probs.get("A", 0.0)) / 2
    if abs(p_a - p_b) < margin:
        return "tie"
    return "a" if p_a > p_b else "b"


def combine_orders(ab: str | None, ba: str | None) -> tuple[str | None, int, bool]:
    """``(winner, parse_failures, disagreement)`` of a battle judged in both orders."""
    if ab is None and ba is None:
        return None, 2, False
    if ab is None or ba is None:
        return ab or ba, 1, False
    if ab != ba:
        return "tie", 0, True
    return ab, 0, False
