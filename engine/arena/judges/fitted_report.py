"""A fitted judge as the CLI and the Calibration screen show it (formatting apart from the
fit itself, :mod:`engine.arena.judges.fitted`)."""

from __future__ import annotations

from typing import Collection, Sequence

from engine.arena.judges.fit_methods import STANDARDIZED_SUM
from engine.arena.judges.blend import SPEC as BLEND_SPEC
from engine.arena.judges.fitted import PREFIX, FitResult

IN_SAMPLE = "in-sample: fitted on these labels"


def fitted_on(fits: Sequence[FitResult], judge: str, labels: str,
              blend_labels: Collection[str] = ()) -> bool:
    """Whether ``judge`` (``fitted:NAME``, or ``reference:blend`` on one of ``blend_labels``:
    :func:`engine.arena.judges.blend.in_sample_labels`) was fitted on ``labels`` (``name@version``):
    its calibration there is in-sample and overstates its agreement."""
    if judge == BLEND_SPEC:
        return labels in blend_labels
    return any(PREFIX + f.name == judge and labels in f.labels_datasets for f in fits)


def fit_lines(fit: FitResult) -> list[str]:
    """The fit as ``judge fit`` and ``judge list`` print it."""
    cv = fit.cv
    feature, single = fit.best_single
    lines = [f"{PREFIX}{fit.name}  labels {', '.join(fit.labels_datasets)} · {fit.aspect} · "
             f"{cv.get('pairs', 0)} non-tie pairs ({cv.get('ties_left_out', 0)} ties left out), "
             f"{cv.get('queries', 0)} queries",
             f"  held-out agreement  {fit.cv_estimate().format_pct()}  ({cv.get('folds')} folds "
             "grouped by query)"]
    if fit.leave_one_domain_out is not None:
        lines.append(f"  one domain held out {fit.leave_one_domain_out.format_pct()}  "
                     f"({cv['leave_one_domain_out']['domains']} domains, each fitted on the "
                     "others)")
    if cv.get("in_sample"):
        lines.append(f"  in-sample           {fit.cv_estimate('in_sample').format_pct()}  "
                     "(the stored fit on every pair)")
    lines.append(f"  best single feature {single.format_pct()}  ({feature}, same folds)")
    if fit.config.get("method") == STANDARDIZED_SUM:
        weights = ", ".join(f"{f} {1 / s:.3f}" for f, s in zip(fit.features, fit.scale))
        lines.append(f"  {STANDARDIZED_SUM}: the sign of the sum of f(B) - f(A) times "
                     f"1 / its standard deviation: {weights}")
    else:
        coefs = ", ".join(f"{f} {c:+.3f}" for f, c in zip(fit.features, fit.coefficients))
        lines.append(f"  coefficients (per feature standard deviation, no intercept): {coefs}")
    lines.append(f"  identity {fit.sha256[:12]} · labels {fit.labels_fingerprint[:12]} · "
                 f"{fit.created_at}")
    return lines
