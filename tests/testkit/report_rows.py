"""Adaptability rows built by hand (:class:`engine.results.adaptability_rows.AdaptabilityRow`),
for tests that need a report row with exact numbers."""

from __future__ import annotations

from engine.metrics.adaptability import AdaptabilityReport
from engine.results.adaptability_rows import AdaptabilityRow, LeftOut
from engine.stats import Estimate

SHARE_KEYS = ("nv", "ca", "ci", "cm", "overall")


def adaptability_row(system: str, n: int = 6, *, left_out: LeftOut = LeftOut(0, 0),
                     **shares: tuple[float | None, float | None, float | None]
                     ) -> AdaptabilityRow:
    """The row of ``system`` over ``n`` queries with ``mixed`` as its mixed setting: each share
    given as ``nv=(value, lo, hi)`` (a share not given has no value), every one of n."""
    estimates = {key: Estimate(*shares.get(key, (None, None, None)), n) for key in SHARE_KEYS}
    report = AdaptabilityReport(n=n, **estimates, accuracy={}, patterns={})
    return AdaptabilityRow(shares=report, accuracy={}, system=system, run_system=system,
                           generator=system.split("/")[0], template="", mixed_setting="mixed",
                           retriever=None, retriever_name=None, top_k=None, left_out=left_out)
