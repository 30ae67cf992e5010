"""Cached judge calls: every verdict a judge model gives is stored once in ``judgments``.

The key is a hash of the judge model's identity, the template (``name@version``), the exact
fields the template was filled with, whether label probabilities were read from logits and
the judge's thinking mode when one was asked (a reasoning judge: off by default), so
re-judging the same answers with the same judge costs nothing, an interrupted judging resumes
where it stopped, and another judge (or a new template version) judges afresh. Each call is
written in its own transaction: ``kill -9`` loses at most the call in flight.

A reply that cannot be parsed is stored too (``parse_failed=1``, ``label`` NULL) and read back
as such: a failed parse is a fact about the judge, never a tie or a score.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Mapping

from engine.store import Store
from engine.store.arenas import judgment_row, save_judgment
from models.judges import PairwiseJudge, PointwiseJudge, Verdict


@dataclass(frozen=True)
class StoredVerdict:
    """A verdict as stored: what the judge said, and whether it came from the cache."""

    key: str
    verdict: Verdict
    cached: bool
    seconds: float | None


def _label_text(label) -> str | None:
    return None if label is None else str(label)


def _label_value(text: str | None):
    if text is None:
        return None
    return int(text) if text.isdigit() else text


def judgment_key(judge: PairwiseJudge | PointwiseJudge, fields: Mapping[str, object]) -> str:
    """The cache key of one judge call (module docstring)."""
    identity = judge.generator.identity
    parts = [identity.key(), judge.template.id, dict(sorted(fields.items())),
             bool(judge.use_label_probs), judge.max_tokens, judge.seed]
    thinking = getattr(judge, "thinking", "auto")
    if thinking != "auto":      # the judge's thinking mode, recorded (auto: keys as before)
        parts.append({"thinking": thinking})
    payload = json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def load_judgment(store: Store, key: str) -> Verdict | None:
    row = judgment_row(store, key)
    if row is None:
        return None
    probs = json.loads(row["probs"]) if row["probs"] else None
    if probs is not None:
        probs = {_label_value(k): v for k, v in probs.items()}
    return Verdict(label=_label_value(row["label"]), probs=probs, method=row["method"],
                   raw=row["raw"], parse_failed=bool(row["parse_failed"]),
                   template=row["template"], judge=row["judge_name"],
                   fallback_reason=row["fallback_reason"])


def cached_verdict(store: Store, judge: PairwiseJudge | PointwiseJudge,
                   fields: Mapping[str, object]) -> StoredVerdict:
    """The judge's verdict on ``fields`` (the template's fields, as ``judge.fields(...)`` or a
    pointwise judge's keyword arguments give them), from the cache or judged now and stored.

    Model errors (:class:`models.base.ModelError`, ``ContextOverflow``) propagate and nothing
    is stored for that call.
    """
    key = judgment_key(judge, fields)
    stored = load_judgment(store, key)
    if stored is not None:
        return StoredVerdict(key, stored, True, None)
    started = time.perf_counter()
    verdict = judge.verdict(dict(fields))
    seconds = time.perf_counter() - started
    probs = None
    if verdict.probs is not None:
        probs = {_label_text(k): v for k, v in verdict.probs.items()}
    save_judgment(store, key, judge.generator.identity.key(), verdict.judge, verdict.template,
                  dict(fields), _label_text(verdict.label), probs, verdict.method, verdict.raw,
                  verdict.parse_failed, verdict.fallback_reason, seconds,
                  datetime.now(timezone.utc).isoformat(timespec="seconds"))
    return StoredVerdict(key, verdict, False, seconds)
