"""A fitted judge as the CLI and the Calibration screen show it (formatting apart from the
fit itself, :mod:`engine.arena.fitted_judges`)."""

from __future__ import annotations

from typing import Sequence

from engine.arena.fitted_judges import PREFIX, FitResult

IN_SAMPLE = "in-sample: fitted on these labels"


def fitted_on(fits: Sequence[FitResult], judge: str, labels: str) -> bool:
    """Whether ``judge`` (``fitted:NAME``) was fitted on ``labels`` (``name@version``): its
    calibration there is in-sample and overstates its agreement."""
    return any(PREFIX + f.name == judge and labels in f.labels_datasets for f in fits)


def fit_lines(fit: FitResult) -> list[str]:
    """The fit as ``judge fit`` and ``judge list`` print it."""
    cv = fit.cv
    feature, single = fit.best_single
    coefs = ", ".join(f"{f} {c:+.3f}" for f, c in zip(fit.features, fit.coefficients))
    return [f"fitted:{fit.name}  labels {', '.join(fit.labels_datasets)} · {fit.aspect} · "
            f"{cv.get('pairs', 0)} non-tie pairs ({cv.get('ties_left_out', 0)} ties left out), "
            f"{cv.get('queries', 0)} queries",
            f"  held-out agreement  {fit.cv_estimate().format_pct()}  ({cv.get('folds')} folds "
            "grouped by query)",
            f"  best single feature {single.format_pct()}  ({feature}, same folds)",
            f"  coefficients (per feature standard deviation, no intercept): {coefs}",
            f"  identity {fit.sha256[:12]} · labels {fit.labels_fingerprint[:12]} · "
            f"{fit.created_at}"]
