"""Calibrate a pairwise judge against human labels: judge every labelled pair, read the
verdicts against the people (:mod:`engine.arena.trust.figures`), store the result.

A calibration judges each pair of a labels dataset (``engine.datasets.labels``) in one of the
arena's orders (:mod:`engine.arena.judges.orders`): ``random``, one seeded order (``shown``: a hash of
the seed and the pair id picks 'ab' or 'ba'); ``both``, a disagreement between the two orders is
a tie; ``debiased``, both orders with each side's probability averaged over them. The judge is
anything ``--judge`` names (:func:`engine.arena.judges.specs.open_judge`): an LLM through a
template, a reference judge, a fitted judge; the offline ones read the pair's reference answer
and refuse, in one line, a labels dataset whose pairs have none. Every
judge call goes through the judgments cache (:func:`engine.arena.judges.cache.cached_verdict`,
one transaction each) and :mod:`engine.inflight` (retries, watchdog, error budget), exactly as
arena judging does: a calibration interrupted anywhere resumes from the cache, and running it
again costs no judge call. A pair whose request failed after its retries counts as *failed*
(never scored) and is asked again next time.

The template is one of the versioned pairwise templates (default ``ragqa_arena_pairwise``:
question, the pair's reference answer when it has one, the two answers); the judge gives one
verdict per order, read against every aspect's labels (the figures' ``aspect`` is the main
one, ``by_aspect`` has all). The result is one ``calibrations`` row tied to the judge's
identity key and template ``name@version``: the figures with their CIs and n, overall, by
domain and by aspect, the confusion matrix, and each pair's verdicts (the Calibration
screen's disagreements list reads them).

Anchors (``ANCHORS``) are the published figures a user reads theirs against: on the full
RAGChecker meta-evaluation set, the two annotators agree on the sign of non-tie labels 88.6%
of the time and correlate 0.70 (Pearson) / 0.69 (Spearman); RAGChecker's GPT-4-based overall
score correlates 0.62 / 0.61 with them and gets the preferred side right on 76% of non-tie
pairs.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Callable

from engine.arena.trust.figures import (FIGURES, CalibrationItem, JudgedOrder, breakdown,
                                        calibration_figures, confusion, human_class, judge_class,
                                        verdict_counts)
from engine.arena.judges.specs import open_judge
from engine.arena.judging.estimate import labelled_pace
from engine.arena.judges.cache import cached_verdict
from engine.arena.judges.orders import ORDERS, canonical_winner, shown_score
from engine.arena.types import ArenaError
from engine.arena.judges.reference import needs_reference_message
from engine.counts import check_resample_memory
from engine.datasets.catalog import resolve, resolved_ref
from engine.datasets.labels import LabelledPair, load_label_pairs
from engine.inflight import (ErrorBudget, Policy, Request, default_concurrency, in_flight,
                             parse_max_errors, watchdog_for)
from engine.jobs import Job, JobEvent, model_failed, per_second
from engine.runs import owner
from engine.runs.header import identity_json, now
from engine.runs.live_eta import Pace
from engine.stats import N_BOOT, Estimate
from engine.suggest import did_you_mean
from engine.store import Store, json_column
from engine.store.calibration import (calibration_listing_rows, newest_calibration_row,
                                      save_calibration)
from engine.store.claims import claims_of_kind
from models.base import ContextOverflow, Generator

DEFAULT_TEMPLATE = "ragqa_arena_pairwise"
ANCHORS = {"human_sign_agreement": 0.886, "human_pearson": 0.70, "human_spearman": 0.69,
           "pearson": 0.62, "spearman": 0.61, "sign_accuracy": 0.76}
ANCHOR_SOURCE = ("RAGChecker meta-evaluation, full public set: human-human 88.6% sign, "
                 "0.70/0.69; RAGChecker (GPT-4) 0.62/0.61, 76% sign")


class CalibrationError(ArenaError):
    """Bad options, no labelled pair to judge, a judge that cannot load."""


@dataclass
class CalibrationSummary:
    calibration_id: int | None
    labels: str
    judge: str
    template: str
    aspect: str
    status: str
    message: str | None
    pairs: int
    judged: int                    # pairs needing a new judge call in this session
    cached: int
    judge_calls: int
    seconds: float
    figures: dict[str, Estimate] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict:
        out = asdict(self)
        out["figures"] = {k: v.as_json() for k, v in self.figures.items()}
        return out


def shown_first(seed: int, pair_id: str) -> str:
    """'ab' or 'ba': the seeded order one pair is shown in (stable across resumes)."""
    digest = hashlib.sha256(json.dumps([seed, pair_id]).encode("utf-8")).digest()
    return "ab" if digest[0] % 2 == 0 else "ba"


def sample_pairs(pairs: list[LabelledPair], n: int | None, seed: int) -> list[LabelledPair]:
    """A seeded sample of ``n`` pairs in file order (all of them without ``n``)."""
    if n is None or n >= len(pairs):
        return pairs
    keep = set(random.Random(seed).sample(range(len(pairs)), n))
    return [p for i, p in enumerate(pairs) if i in keep]


def judged_order(shown: str, verdict) -> JudgedOrder:
    """One order's verdict in the pair's own terms: winner, and P(B) - P(A) when the judge
    gave probabilities."""
    score = shown_score(verdict)
    if score is not None and shown != "ab":
        score = -score
    return JudgedOrder(shown, canonical_winner(verdict.label, shown), score)


def items_for(pairs: list[LabelledPair], orders: dict[str, tuple[JudgedOrder, ...]],
              aspect: str, debiased: bool = False) -> list[CalibrationItem]:
    """The calibration items of one aspect: each pair with labels on it and a judged order."""
    return [CalibrationItem(p.pair_id, aspect, p.domain, tuple(p.aspect_labels(aspect)),
                            orders[p.pair_id], debiased, tuple(p.annotator_labels(aspect)))
            for p in pairs if p.labels.get(aspect) and p.pair_id in orders]


def order_of(config: dict) -> str:
    """A stored calibration's order: 'random', 'both' or 'debiased' (older ones say
    'seeded' for random)."""
    order = config.get("order") or config.get("orders") or "random"
    return "random" if order == "seeded" else order


def calibrate_judge(store: Store, labels: str, judge: str | Generator, *,
                    aspect: str = "overall", both_orders: bool = False,
                    order: str | None = None,
                    sample: int | None = None, seed: int = 0,
                    template: str = DEFAULT_TEMPLATE, n_threads: int | None = None,
                    progress: Callable[[JobEvent], None] | None = None,
                    cancel: threading.Event | Callable[[], bool] | None = None,
                    concurrency: int | None = None, max_errors=None, n_boot: int = N_BOOT,
                    min_interval: float = 0.1) -> CalibrationSummary:
    """Judge the labels dataset's pairs and store the calibration (module docstring).
    ``order`` is 'random', 'both' or 'debiased' (``both_orders=True`` is 'both')."""
    order = order or ("both" if both_orders else "random")
    if order not in ORDERS:
        raise CalibrationError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    if sample is not None and sample < 1:
        raise CalibrationError("--sample must be at least 1")
    # the figures' resamples are drawn after every judge call: their memory is checked first
    check_resample_memory(n_boot, len(FIGURES), "resamples × figures × 8 bytes")
    try:
        budget = ErrorBudget(parse_max_errors(max_errors))
    except ValueError as exc:
        raise CalibrationError(str(exc)) from None
    pairs = load_label_pairs(store, labels)
    aspects = sorted({a for p in pairs for a in p.labels})
    if aspect not in aspects:
        raise CalibrationError(f"no labels on aspect {aspect!r} in {labels!r}"
                               f"{did_you_mean(aspect, aspects)} (it has: "
                               f"{', '.join(aspects) or 'none'})")
    pairs = sample_pairs([p for p in pairs if p.labels.get(aspect)], sample, seed)
    try:
        pairwise = open_judge(judge, template, store=store, n_threads=n_threads)
    except ArenaError as exc:
        raise CalibrationError(str(exc)) from None
    generator = pairwise.generator
    if getattr(pairwise, "needs_reference", False):
        missing = [p.pair_id for p in pairs if not (p.reference or "").strip()]
        if missing:
            raise CalibrationError(needs_reference_message(
                pairwise.judge_name, f"{len(missing)} of the {len(pairs)} pairs of {labels!r} "
                                     f"have no reference answer (e.g. pair {missing[0]!r})"))
        pairwise.prepare([t for p in pairs for t in (p.answer_a, p.answer_b, p.reference)])
    job = _Calibrating(store, labels, pairs, aspect, aspects, pairwise, order, seed,
                       sample, n_boot, progress, cancel, min_interval)
    job.budget = budget
    job.policy = Policy(concurrency=concurrency or default_concurrency(generator),
                        watchdog=watchdog_for(generator), seed=seed)
    job.pace = labelled_pace(store, judge if isinstance(judge, str) else pairwise.judge_name,
                             pairs, order, job.policy.concurrency)
    # claimed under what the names resolve to (the judge's own name, the labels' name@version,
    # the template it reads), so two spellings of one calibration are one claim, never both run
    used = getattr(pairwise.template, "name", None) or template
    name = (f"{pairwise.judge_name} on {resolved_ref(store, labels)} ({aspect}, {order} order, "
            f"{used})")
    with owner.held(store, owner.CALIBRATION, name, f"calibration of {name} is running"):
        return job.run()


@dataclass(frozen=True)
class UnfinishedCalibration:
    """A calibration a process works on (``running``) or left when it died
    (``interrupted``: run it again, its verdicts so far come from the cache)."""
    name: str               # "JUDGE on LABELS (ASPECT, ORDER order, TEMPLATE)"
    status: str
    pid: int

    def as_json(self) -> dict:
        return asdict(self)


def unfinished_calibrations(store: Store) -> list[UnfinishedCalibration]:
    """The calibrations claimed and not stored yet (a calibration is stored when it ends)."""
    return [UnfinishedCalibration(r["name"], owner.claimed_status(
                store, owner.CALIBRATION, r["name"], "running"), r["pid"])
            for r in claims_of_kind(store, owner.CALIBRATION)]


class _Calibrating(Job):
    kind = "calibration"

    def __init__(self, store, labels, pairs, aspect, aspects, judge, order, seed, sample,
                 n_boot, progress, cancel, min_interval):
        super().__init__(progress, cancel, min_interval)
        self.store, self.labels, self.pairs = store, labels, pairs
        self.aspect, self.aspects, self.judge = aspect, aspects, judge
        self.order, self.seed, self.sample, self.n_boot = order, seed, sample, n_boot
        self.orders: dict[str, tuple[JudgedOrder, ...]] = {}
        self.counts = dict(done=0, judged=0, cached=0, judge_calls=0, errors=0)
        self.seconds = 0.0
        self.pace = Pace()          # the live ETA (judging_time.labelled_pace)
        self.calibration_id: int | None = None
        self.figures: dict[str, Estimate] = {}
        self.verdict_counts: dict[str, int] = {}
        self.budget, self.policy = ErrorBudget(), Policy()

    def _shown(self, pair: LabelledPair) -> list[str]:
        return (["ab", "ba"] if self.order != "random"
                else [shown_first(self.seed, pair.pair_id)])

    def _verdicts(self, pair: LabelledPair):
        """On a worker thread: each order's stored verdict (cached, or judged now)."""
        names = {s.field for s in self.judge.template.sections}
        reference = pair.reference if "reference" in names else None
        documents = [] if "documents" in names else None
        out = []
        try:
            for shown in self._shown(pair):
                a, b = ((pair.answer_a, pair.answer_b) if shown == "ab"
                        else (pair.answer_b, pair.answer_a))
                fields = self.judge.fields(pair.query, a, b, documents=documents,
                                           reference=reference)
                out.append((shown, cached_verdict(self.store, self.judge, fields)))
        except ContextOverflow as exc:
            return exc          # this pair's failure, not the judge's: the others go on
        return out

    def work(self) -> str | None:
        requests = (Request(p, partial(self._verdicts, p), group=p.pair_id) for p in self.pairs)
        mark = self.pace.start()
        for outcome in in_flight(requests, name=self.judge.judge_name, policy=self.policy,
                                 budget=self.budget, cancel=self.cancel, tick=self.emit,
                                 fatal=self._fatal, abort=getattr(
                                     getattr(self.judge, "generator", None), "abort", None)):
            pair = outcome.key
            c = self.counts
            c["done"] += 1
            if outcome.ok and not isinstance(outcome.value, ContextOverflow):
                self.orders[pair.pair_id] = tuple(judged_order(shown, stored.verdict)
                                                  for shown, stored in outcome.value)
                new = sum(not stored.cached for _, stored in outcome.value)
                c["judge_calls"] += new
                if new:
                    c["judged"] += 1
                    moment = time.perf_counter()
                    self.seconds += moment - mark
                    self.pace.done(pair.pair_id, moment - mark)
                    mark = moment
                else:
                    c["cached"] += 1
                    self.pace.done(pair.pair_id)
                    mark = time.perf_counter()
            else:
                c["errors"] += 1
                self.pace.done(pair.pair_id)
                self.orders[pair.pair_id] = tuple(JudgedOrder(s, None, failed=True)
                                                  for s in self._shown(pair))
            self.emit()
        self.check_cancel()
        self._store_result()
        if self.counts["errors"]:
            return (f"{self.counts['errors']} pair(s) not judged (the judge failed or the prompt "
                    "overflows its context; counted as failed, asked again next time)")
        return None

    def _fatal(self, outcome):
        return model_failed(self.judge.judge_name, outcome.error,
                            "judge {model!r} failed on pair {pair}: {type}: {error}",
                            pair=outcome.key.pair_id)

    def _store_result(self) -> None:
        debiased = self.order == "debiased"
        items = items_for(self.pairs, self.orders, self.aspect, debiased)
        all_aspects = [it for a in self.aspects
                       for it in items_for(self.pairs, self.orders, a, debiased)]
        self.figures = calibration_figures(items, n_boot=self.n_boot, seed=self.seed)
        self.verdict_counts = verdict_counts(items)
        by_domain = breakdown(items, lambda it: it.domain, n_boot=self.n_boot, seed=self.seed)
        by_aspect = breakdown(all_aspects, lambda it: it.aspect, n_boot=self.n_boot,
                              seed=self.seed)
        figures = {"overall": _as_json(self.figures), "counts": self.verdict_counts,
                   "confusion": confusion(items),
                   "by_domain": {k: _as_json(v) for k, v in by_domain.items()},
                   "by_aspect": {k: _as_json(v) for k, v in by_aspect.items()},
                   "anchors": ANCHORS, "anchor_source": ANCHOR_SOURCE}
        verdicts = [{"pair_id": it.pair_id, "domain": it.domain, "human": list(it.human),
                     "annotators": list(it.ceiling_labels),
                     "human_class": human_class(it), "judge_class": judge_class(it),
                     "orders": [asdict(o) for o in it.orders]} for it in items]
        generator = self.judge.generator
        config = {"orders": "seeded" if self.order == "random" else self.order,
                  "order": self.order, "seed": self.seed,
                  "sample": self.sample, "pairs": len(self.pairs), "n_boot": self.n_boot,
                  "judge_identity": identity_json(generator),
                  "labels": self.labels}
        self.calibration_id = save_calibration(
            self.store, resolve(self.store, self.labels), generator.identity.key(),
            self.judge.judge_name, self.judge.template.id, self.aspect, config, figures,
            verdicts, now())

    def event(self, status: str, message: str | None) -> JobEvent:
        c = self.counts
        return JobEvent(kind="calibration", name=self.labels, status=status, done=c["done"],
                        total=len(self.pairs), unit="pairs", cached=c["cached"],
                        new=c["judged"], errors=c["errors"],
                        rate=per_second(c["judged"], self.seconds), rate_unit="pairs/s",
                        eta_seconds=self.pace.seconds(),
                        message=message)

    def summary(self, status: str, message: str | None) -> CalibrationSummary:
        c = self.counts
        return CalibrationSummary(
            self.calibration_id, self.labels, self.judge.judge_name, self.judge.template.id,
            self.aspect, status, message, len(self.pairs), c["judged"], c["cached"],
            c["judge_calls"], time.perf_counter() - self.started, self.figures,
            self.verdict_counts)


def _as_json(figures: dict[str, Estimate]) -> dict:
    return {k: v.as_json() for k, v in figures.items()}


# --------------------------------------------------------------------------- reading back

@dataclass(frozen=True)
class StoredCalibration:
    id: int
    labels: str
    judge: str
    judge_key: str
    template: str
    aspect: str
    config: dict
    figures: dict                  # as stored: overall, counts, confusion, by_domain, ...
    verdicts: list
    created_at: str

    def items(self) -> list[CalibrationItem]:
        """The stored pair verdicts as calibration items (to compare two calibrations)."""
        debiased = order_of(self.config) == "debiased"
        return [CalibrationItem(v["pair_id"], self.aspect, v.get("domain"), tuple(v["human"]),
                                tuple(JudgedOrder(**o) for o in v.get("orders", [])), debiased,
                                tuple(v["annotators"]) if "annotators" in v else None)
                for v in self.verdicts]

    def as_json(self) -> dict:
        """What ``judge calibration --json`` prints: the figures as stored, no verdicts."""
        return {"id": self.id, "labels": self.labels, "judge": self.judge,
                "judge_key": self.judge_key, "template": self.template,
                "aspect": self.aspect, "config": self.config, "figures": self.figures,
                "created_at": self.created_at}

    def estimate(self, name: str, group: str | None = None, key: str = "overall") -> Estimate:
        source = self.figures.get(key, {}) if group is None else \
            self.figures.get(key, {}).get(group, {})
        e = source.get(name) or {}
        return Estimate(e.get("value"), e.get("lo"), e.get("hi"), e.get("n", 0))


def latest_calibration(store: Store, judge: str | None = None, template: str | None = None,
                       judge_key: str | None = None,
                       calibration_id: int | None = None) -> StoredCalibration | None:
    """The newest calibration of a judge (by name, or by identity key) and template, or of
    any judge without them (or the one ``calibration_id``); None when there is none."""
    r = newest_calibration_row(store, judge, template, judge_key, calibration_id)
    if r is None:
        return None
    return StoredCalibration(r["id"], r["labels"], r["judge_name"], r["judge_key"],
                             r["template"], r["aspect"], json_column(r["config"], {}),
                             json_column(r["figures"], {}), json_column(r["verdicts"], []),
                             r["created_at"])


@dataclass(frozen=True)
class CalibrationListing:
    """One stored calibration, without its figures: what a picker shows."""
    id: int
    labels: str
    judge: str
    template: str
    aspect: str
    orders: str                    # 'both' or 'seeded'
    pairs: int
    created_at: str


def list_calibrations(store: Store, judge: str | None = None) -> list[CalibrationListing]:
    """The stored calibrations (of one judge, by name, or of all), oldest first."""
    out = []
    for r in calibration_listing_rows(store, judge):
        config = json_column(r["config"], {}) or {}
        out.append(CalibrationListing(r["id"], r["labels"], r["judge_name"], r["template"],
                                      r["aspect"], config.get("orders", "seeded"),
                                      int(config.get("pairs") or 0), r["created_at"]))
    return out
