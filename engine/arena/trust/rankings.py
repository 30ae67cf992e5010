"""Which judge can I trust? Every judge calibrated in the workspace, best first.

One row per (judge, template, order, labels, aspect): its newest calibration. Rows are sorted by
sign accuracy (the share of human non-tie pairs on which the judge names the side people
prefer, :mod:`engine.arena.trust.figures`), each with its 95% CI and n, the flip rate between the
two orders and Cohen's κ, beside the human ceiling on the same pairs (annotator against
annotator) and the best reference judge calibrated on the same labels. A judge whose sign
accuracy CI lies wholly below that reference judge's estimate is marked
:data:`WORSE_THAN_REFERENCE`: a judge that cannot beat comparing the answers with the reference
answer should not decide an arena.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.arena.trust.calibrate import StoredCalibration, latest_calibration, order_of
from engine.arena.judges.kinds import kind_of
from engine.stats import Estimate
from engine.store import Store
from engine.store.calibration import newest_calibration_ids

WORSE_THAN_REFERENCE = "worse than comparing with the reference"


@dataclass(frozen=True)
class JudgeRanking:
    judge: str                     # the judge's name (an LLM's identity name, reference:…)
    judge_key: str
    template: str
    order: str                     # random | both | debiased
    labels: str                    # name@version
    aspect: str
    calibration_id: int
    created_at: str
    sign_accuracy: Estimate
    flip_rate: Estimate
    kappa: Estimate
    human_ceiling: Estimate        # annotators against each other, same pairs
    best_reference: str | None     # the best reference judge on the same labels and aspect
    best_reference_accuracy: Estimate | None
    worse_than_reference: bool

    @property
    def is_reference(self) -> bool:
        """Whether the judge is of the kind other judges must beat
        (:attr:`engine.arena.judges.kinds.JudgeKind.baseline`: the reference judges)."""
        return kind_of(self.judge).baseline

    def as_json(self) -> dict:
        out = {k: getattr(self, k) for k in (
            "judge", "judge_key", "template", "order", "labels", "aspect", "calibration_id",
            "created_at", "best_reference", "worse_than_reference")}
        for k in ("sign_accuracy", "flip_rate", "kappa", "human_ceiling",
                  "best_reference_accuracy"):
            value = getattr(self, k)
            out[k] = value.as_json() if value is not None else None
        return out


def _newest_calibrations(store: Store, labels: str | None) -> list[StoredCalibration]:
    ids = newest_calibration_ids(store, labels)
    found = (latest_calibration(store, calibration_id=i) for i in sorted(ids))
    return [c for c in found if c is not None]


def _value(e: Estimate | None) -> float:
    return e.value if e is not None and e.value is not None else float("-inf")


def judge_rankings(store: Store, labels: str | None = None) -> list[JudgeRanking]:
    """Every calibrated judge (of one labels dataset, or all), best sign accuracy first
    (module docstring)."""
    cals = _newest_calibrations(store, labels)
    best_ref: dict[tuple[str, str], StoredCalibration] = {}
    for c in cals:
        if kind_of(c.judge).baseline:
            key = (c.labels, c.aspect)
            if key not in best_ref or _value(c.estimate("sign_accuracy")) > _value(
                    best_ref[key].estimate("sign_accuracy")):
                best_ref[key] = c
    rows = []
    for c in cals:
        sign = c.estimate("sign_accuracy")
        ref = best_ref.get((c.labels, c.aspect))
        ref_sign = ref.estimate("sign_accuracy") if ref is not None else None
        worse = bool(ref is not None and ref.id != c.id and sign.hi is not None
                     and ref_sign.value is not None and sign.hi < ref_sign.value)
        rows.append(JudgeRanking(
            c.judge, c.judge_key, c.template, order_of(c.config), c.labels, c.aspect, c.id,
            c.created_at, sign, c.estimate("flip_rate"), c.estimate("kappa"),
            c.estimate("human_sign_agreement"), ref.judge if ref is not None else None,
            ref_sign, worse))
    rows.sort(key=lambda r: (-_value(r.sign_accuracy), r.judge, r.order))
    return rows


def ceiling_text(e: Estimate | None) -> str:
    """The human ceiling with the pairs it rests on (pairs with two named annotators):
    ``85.0% n=107``, or ``- n=0`` where no pair has two."""
    n = 0 if e is None else e.n
    return ("-" if e is None or e.value is None else f"{100 * e.value:.1f}%") + f" n={n}"
