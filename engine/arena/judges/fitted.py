"""Judges fitted to people: a logistic regression, or a standardised sum, on per-pair feature
differences.

``mirage-tui judge fit NAME --labels DATASET`` reads the labelled pairs (one labels dataset, or
``verdicts``: every ``verdicts:<run>`` dataset of people's own verdicts from the Inspector,
:mod:`engine.arena.trust.human_verdicts`, combined). A pair's label is the sign of the mean of its
annotators on the aspect; pairs whose mean is a tie are left out. Each pair becomes
``x = f(B) - f(A)``, one column per feature (:mod:`engine.arena.judges.fit_features`: similarities
to the reference answer, length, an LLM judge's preference with ``--judge LLM``). Verdict
pairs have no reference of their own: theirs is the query's (its long-form reference answer,
else its gold answers), the text the arena gives an offline judge.

The model (``--method``, :mod:`engine.arena.judges.fit_methods`) is scikit-learn's
``LogisticRegression`` *without intercept* (``logistic``, the default), or every coefficient 1
(``standardized-sum``: the sign of ``Σ x_i / sd_i``), on features divided by their standard
deviation over the training pairs and *not centred* (centring would add an intercept). So
``P(B) = logistic(w · x / scale)`` and swapping A and B negates ``x`` and mirrors the
probability: a fitted judge has no position bias by construction. Its label is 'tie' when
``|P(B) - 0.5| <`` :data:`~engine.arena.judges.fit_methods.TIE_MARGIN`, else the likelier side.

Agreement is measured by 5-fold ``GroupKFold`` with folds grouped by query text (no query is in
a training and a test fold): the share of held-out pairs whose predicted side is the people's
(a predicted tie counts as a miss), with its Clopper–Pearson 95% CI and n, beside each single
feature fitted alone on the same folds (the best of them is reported: does the fit beat one
rule?); then leave-one-domain-out when every pair names a domain and there are two or more
(each domain predicted by a fit on the others), and the stored fit's in-sample agreement. The
stored judge is fitted on every pair. Its identity (``fitted:NAME`` and a sha256
over its features, coefficients, scale and the labels' fingerprint) changes whenever its labels
change, so the judgments cache never mixes two fits.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Sequence

import numpy as np

from engine.arena.judges.fit_features import (DEFAULT_FEATURES, DEFAULT_LLM_TEMPLATE, PREFIX,
                                              FeatureSet, FitError, needs_reference,
                                              sklearn_checked)
from engine.arena.judges.fit_methods import (C, LOGISTIC, METHODS, TIE_MARGIN, agreement,
                                             cross_validate, hits, leave_one_domain_out,
                                             query_folds)
from engine.arena.types import ArenaError
from engine.arena.judges.reference import (ScoringJudge, ScoringModel, ScoringTemplate,
                                           logistic, reference_texts, references_of)
from engine.datasets.catalog import DatasetNotFound, resolve
from engine.datasets.labels import load_label_pairs
from engine.jobs import Progress
from engine.runs import owner
from engine.stats import Estimate
from engine.store import Store, json_column
from engine.store.fitted_judges import (fitted_row, fitted_rows, labels_dataset_ref,
                                        save_fitted, verdict_labels_refs)
from engine.suggest import did_you_mean
from models.judges import Verdict

METHOD = "fitted"
VERSION = "1"
VERDICTS = "verdicts"
MIN_PAIRS = 20


# --------------------------------------------------------------------------- labelled pairs

@dataclass(frozen=True)
class FitPair:
    key: str                      # labels dataset ref + the pair's id
    query: str
    answer_a: str
    answer_b: str
    references: tuple[str, ...]
    sign: int                     # +1: people prefer B, -1: A
    domain: str | None = None     # the labels' domain (RAGChecker: the RobustQA one)


def labels_refs(store: Store, labels: str) -> list[str]:
    """The labels datasets ``labels`` names: itself, or with ``verdicts`` every verdicts one."""
    if labels.strip().lower() != VERDICTS:
        try:
            return [labels_dataset_ref(store, resolve(store, labels))]
        except DatasetNotFound as exc:
            raise FitError(str(exc)) from None
    refs = verdict_labels_refs(store)
    if not refs:
        raise FitError("--labels verdicts: no verdict is recorded in this workspace (enter "
                       "yours on judged battles in the Inspector, or name a labels dataset)")
    return refs


def fit_pairs(store: Store, labels: str, aspect: str = "overall"
              ) -> tuple[list[FitPair], list[str], int]:
    """The non-tie pairs of ``labels`` on ``aspect``, the dataset refs read, and how many
    pairs were left out as ties."""
    pairs, ties, aspects = [], 0, set()
    refs = labels_refs(store, labels)
    for ref in refs:
        try:
            found = load_label_pairs(store, ref)
        except DatasetNotFound as exc:
            raise FitError(str(exc)) from None
        query_refs = _verdict_references(store, found) if ref.startswith("verdicts:") else {}
        for p in found:
            aspects.update(p.labels)
            values = p.aspect_labels(aspect)
            if not values:
                continue
            mean = sum(values) / len(values)
            if mean == 0:
                ties += 1
                continue
            references = tuple(references_of(p.reference)) or query_refs.get(p.pair_id, ())
            pairs.append(FitPair(f"{ref}#{p.pair_id}", p.query, p.answer_a, p.answer_b,
                                 references, 1 if mean > 0 else -1, p.domain))
    if not pairs and not ties and aspect not in aspects:
        raise FitError(f"no labels on aspect {aspect!r} in {labels!r}"
                       f"{did_you_mean(aspect, aspects)} (it has: "
                       f"{', '.join(sorted(aspects)) or 'none'})")
    return pairs, refs, ties


def _verdict_references(store: Store, found) -> dict[str, tuple[str, ...]]:
    """A verdict pair's reference: its query's (pair id ``[query rowid, a, b]``)."""
    rowids = {}
    for p in found:
        try:
            rowids[p.pair_id] = int(json.loads(p.pair_id)[0])
        except (ValueError, TypeError, IndexError, KeyError):
            continue
    texts = reference_texts(store, sorted(set(rowids.values()))) if rowids else {}
    return {pid: tuple(texts.get(q) or ()) for pid, q in rowids.items()}


def labels_fingerprint(pairs: Sequence[FitPair]) -> str:
    """sha256 over the pairs' ids, texts and label signs, in a stable order."""
    rows = sorted([p.key, p.query, p.answer_a, p.answer_b, list(p.references), p.sign]
                  for p in pairs)
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- the fit

@dataclass(frozen=True)
class FitResult:
    name: str
    sha256: str
    features: list[str]
    coefficients: list[float]
    scale: list[float]
    labels: str
    labels_datasets: list[str]
    aspect: str
    labels_fingerprint: str
    config: dict
    cv: dict
    created_at: str

    def cv_estimate(self, key: str = "agreement") -> Estimate:
        return Estimate.from_json(self.cv.get(key))

    @property
    def leave_one_domain_out(self) -> Estimate | None:
        """The pooled held-out agreement over domains; None when it was not measured."""
        lodo = self.cv.get("leave_one_domain_out")
        return Estimate.from_json(lodo["pooled"]) if lodo else None

    @property
    def best_single(self) -> tuple[str | None, Estimate]:
        best = self.cv.get("best_single") or {}
        return best.get("feature"), Estimate.from_json(best.get("agreement"))

    def as_json(self) -> dict:
        return {k: getattr(self, k) for k in (
            "name", "sha256", "features", "coefficients", "scale", "labels",
            "labels_datasets", "aspect", "labels_fingerprint", "config", "cv", "created_at")}


def judge_sha256(features, coefficients, scale, fingerprint, method: str = LOGISTIC) -> str:
    parts = [METHOD, VERSION, list(features), [repr(float(c)) for c in coefficients],
             [repr(float(s)) for s in scale], fingerprint, TIE_MARGIN]
    if method != LOGISTIC:            # the logistic fits keep the identities they were given
        parts.append(method)
    payload = json.dumps(parts)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _claimed(fit):
    """``fit`` run by the one process that claims the name (:mod:`engine.runs.owner`): a
    second fit of the same name meanwhile is refused naming the first one's pid."""
    @functools.wraps(fit)
    def claimed(store: Store, name: str, *args, **kwargs) -> FitResult:
        name = check_name(name)
        with owner.held(store, owner.FIT, name, f"fitted judge {name} is being fitted"):
            return fit(store, name, *args, **kwargs)
    return claimed


@_claimed
def fit_judge(store: Store, name: str, labels: str, *, aspect: str = "overall",
              features: Sequence[str] = DEFAULT_FEATURES, template: str = DEFAULT_LLM_TEMPLATE,
              n_threads: int | None = None, force: bool = False, llms: dict | None = None,
              method: str = LOGISTIC, progress: Progress | None = None,
              cancel=None) -> FitResult:
    """Fit, cross-validate and store the judge ``fitted:NAME`` (module docstring); ``method``
    is one of :data:`~engine.arena.judges.fit_methods.METHODS`. The pairs' features come with
    ``progress`` (JobEvents of kind ``fit``) and stop on ``cancel``: ``Stop('cancelled')``,
    nothing stored, the judge's verdicts so far cached (:meth:`FeatureSet.rows`)."""
    name = check_name(name)
    if method not in METHODS:
        raise FitError(f"unknown fit method {method!r} (methods: {', '.join(METHODS)})")
    fit = sklearn_checked(METHODS[method])
    if not force and fitted_row(store, name) is not None:
        raise _exists(name)
    pairs, refs, ties = fit_pairs(store, labels, aspect)
    if len(pairs) < MIN_PAIRS:
        raise FitError(f"{labels!r} has {len(pairs)} pair(s) with a non-tie label on aspect "
                       f"{aspect!r} ({ties} tie(s) left out); a fit needs at least {MIN_PAIRS}")
    sides = {p.sign for p in pairs}
    if len(sides) < 2:
        side = "B" if sides == {1} else "A"
        raise FitError(f"all {len(pairs)} non-tie pairs of {labels!r} prefer answer {side} on "
                       f"aspect {aspect!r}: a fit needs labels on both sides")
    groups = [p.query for p in pairs]
    if len(set(groups)) < 2:
        raise FitError(f"the {len(pairs)} pairs of {labels!r} share one query: folds grouped "
                       "by query need at least 2 queries")
    feature_set = FeatureSet(features, store, template=template, n_threads=n_threads, llms=llms)
    if feature_set.needs_reference:
        missing = [p for p in pairs if not p.references]
        if missing:
            used = [f for f in features if needs_reference(f)]
            raise FitError(f"features {', '.join(used)} compare each answer with the reference "
                           f"answer, and {len(missing)} of the {len(pairs)} pairs of {labels!r} "
                           f"have none (e.g. {missing[0].key!r}); features that work there: "
                           "length, judge:LLM (--judge LLM)")
        feature_set.prepare(t for p in pairs for t in (p.answer_a, p.answer_b, *p.references))
    x = np.array(feature_set.rows(pairs, name=name, progress=progress, cancel=cancel),
                 dtype=float)
    y = np.array([p.sign for p in pairs])
    folds = query_folds(groups)
    fitted = cross_validate(x, y, folds, fit)
    single = {f: cross_validate(x[:, [i]], y, folds, fit) for i, f in enumerate(features)}
    best = max(single, key=lambda f: (single[f].value, -list(features).index(f)))
    coef, scale = fit(x, y)
    fingerprint = labels_fingerprint(pairs)
    cv = {"agreement": fitted.as_json(), "folds": len(folds), "queries": len(set(groups)),
          "pairs": len(pairs), "ties_left_out": ties, "prefer_b": int((y > 0).sum()),
          "by_feature": {f: e.as_json() for f, e in single.items()},
          "best_single": {"feature": best, "agreement": single[best].as_json()},
          "in_sample": agreement(hits(x, y, coef, scale), len(y)).as_json(),
          "leave_one_domain_out": leave_one_domain_out(x, y, [p.domain for p in pairs], fit)}
    config = {"version": VERSION, "method": method, "tie_margin": TIE_MARGIN,
              "template": template,
              "scaled": "divided by the training standard deviation, not centred",
              "intercept": False, **({"C": C} if method == LOGISTIC else {})}
    result = FitResult(name, judge_sha256(features, coef, scale, fingerprint, method),
                       list(features),
                       [float(c) for c in coef], [float(s) for s in scale], labels, refs, aspect,
                       fingerprint, config, cv,
                       datetime.now(timezone.utc).isoformat(timespec="seconds"))
    _store(store, result, replace=force)
    return result


def check_name(name: str) -> str:
    name = (name or "").strip()
    if name.lower().startswith(PREFIX):
        name = name[len(PREFIX):]
    if not re.fullmatch(r"[\w.@+-]+", name):
        raise FitError(f"fitted judge name {name!r}: use letters, digits and . _ - + @ only")
    return name


def _exists(name: str) -> FitError:
    return FitError(f"a fitted judge {name!r} already exists ({PREFIX}{name}); refit it with "
                    "--force, or choose another name")


def _store(store: Store, r: FitResult, replace: bool) -> None:
    """Store the fit; without ``replace``, a name stored meanwhile (by a process that did
    not claim it) is refused in the writing transaction, never overwritten."""
    if not save_fitted(store, r.as_json(), replace=replace):
        raise _exists(r.name)


# --------------------------------------------------------------------------- reading back

def _result(r) -> FitResult:
    return FitResult(r["name"], r["sha256"], json_column(r["features"], []),
                     json_column(r["coefficients"], []), json_column(r["scale"], []),
                     r["labels"], json_column(r["labels_datasets"], []), r["aspect"],
                     r["labels_fingerprint"], json_column(r["config"], {}),
                     json_column(r["cv"], {}), r["created_at"])


def fitted_judges(store: Store) -> list[FitResult]:
    """Every fitted judge in the workspace, by name."""
    return [_result(r) for r in fitted_rows(store)]


def fitted_judge(store: Store, name: str) -> FitResult:
    """The stored fit ``name`` (with or without ``fitted:``); ArenaError with did-you-mean."""
    name = (name or "").strip()
    name = name[len(PREFIX):] if name.lower().startswith(PREFIX) else name
    row = fitted_row(store, name)
    if row is None:
        known = [r["name"] for r in fitted_rows(store)]
        raise ArenaError(f"no fitted judge {name!r}{did_you_mean(name, known)} (fitted judges: "
                         f"{', '.join(known) or 'none yet: mirage-tui judge fit NAME --labels L'})")
    return _result(row)


class FittedJudge(ScoringJudge):
    """``fitted:NAME``: the stored fit applied to a shown pair (module docstring)."""

    verdict_method = METHOD

    def __init__(self, fit: FitResult, store: Store | None, n_threads: int | None = None,
                 llms: dict | None = None):
        self.fit = fit
        self.features = FeatureSet(fit.features, store,
                                   template=fit.config.get("template", DEFAULT_LLM_TEMPLATE),
                                   n_threads=n_threads, llms=llms)
        self.needs_reference = self.features.needs_reference
        self._weights = np.asarray(fit.coefficients) / np.asarray(fit.scale)
        self.generator = ScoringModel(PREFIX + fit.name, fit.sha256, backend=METHOD)
        self.template = ScoringTemplate(METHOD, VERSION)

    def prepare(self, texts) -> None:
        self.features.prepare(texts)

    def verdict(self, fields) -> Verdict:
        refs = references_of(fields.get("reference"))
        x = self.features.differences(fields.get("query", ""), fields["answer_a"],
                                      fields["answer_b"], refs)
        z = float(np.dot(self._weights, x))
        p_b = logistic(z)
        label = "tie" if abs(p_b - 0.5) < TIE_MARGIN else ("B" if p_b > 0.5 else "A")
        raw = json.dumps({"features": dict(zip(self.fit.features, (round(v, 6) for v in x))),
                          "logit": round(z, 6), "tie_margin": TIE_MARGIN})
        return Verdict(label=label, probs={"A": 1.0 - p_b, "B": p_b}, method=self.verdict_method,
                       raw=raw, parse_failed=False, template=self.template.id,
                       judge=self.judge_name)


def load_fitted_judge(store: Store, name: str, n_threads: int | None = None) -> FittedJudge:
    """``fitted:NAME`` as a pairwise judge (arena judging, calibration, the cache)."""
    return FittedJudge(fitted_judge(store, name), store, n_threads)
