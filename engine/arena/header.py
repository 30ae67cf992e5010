"""The arena header (``arenas.header``): who judged an arena, how, and how each session went.

It records the run (name, dataset, content hash), the judge as loaded (its identity, whether it
chats, its device), the template, the package versions and the machine of the first session,
one entry per session (when it started and ended, its threads, requests in flight, device,
packages and load, its status, calls and seconds), the contestants and requests in flight of
the latest session, the counts of its plan, the judge's cumulative timings and why the latest
session ended as it did.

:class:`ArenaHeader` is the header, typed and frozen, like the run header
(:mod:`engine.runs.header`): its one reader is :meth:`ArenaHeader.from_json` (the stored text,
or that JSON as a dict), its one writer :meth:`ArenaHeader.to_json`; judging's updates are its
``with_*`` methods, each a new header. Every part keeps the keys it was read with, in their
order, and any key this version does not know (:mod:`engine.typed_json`), so a header read and
written again is the same text, and one an older version wrote reads with the defaults a
missing key had (no timings: none judged; ``skipped_queries`` 0). Nothing outside this module
and the store indexes an arena header by key (``tests/unit/test_arena_header_access.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from engine.runs.header import ModelRecord, machine, now, package_versions
from engine.typed_json import Part, StoredRecord, empty_map


@dataclass(frozen=True)
class ArenaRun(Part):
    """The run judged."""

    name: str | None = None
    dataset: str | None = None              # name@version
    dataset_hash: str | None = None


@dataclass(frozen=True)
class ArenaSession(Part):
    """One judging session: as it started (threads, requests in flight, the judge's device,
    packages, the machine's load) and, once it ended, its status and figures."""

    started_at: str | None = None
    threads: int | None = None
    concurrency: int | None = None
    device: str | None = None
    packages: Mapping[str, str | None] = field(default_factory=empty_map)
    load: Mapping[str, Any] | None = None
    ended_at: str | None = None
    status: str | None = None
    judge_calls: int | None = None          # new judge calls (not from the cache)
    cached_calls: int | None = None
    judged_battles: int | None = None       # battles that asked the judge anew
    seconds: float | None = None            # the session's wall time
    judge_seconds: float | None = None      # inside its new judge calls


@dataclass(frozen=True)
class ArenaCounts(Part):
    """The latest session's plan: battles planned and stored, parse failures, unparsed
    battles, disagreements between orders, errors, queries (judged, eligible, skipped for want
    of a reference) and contestants."""

    planned: int | None = None
    stored: int | None = None
    parse_failures: int | None = None
    unparsed_battles: int | None = None
    disagreements: int | None = None
    errors: int | None = None
    queries: int | None = None
    eligible_queries: int | None = None
    skipped_queries: int = 0
    contestants: int | None = None


@dataclass(frozen=True)
class JudgeTimings(Part):
    """The judge's time over every session: seconds inside new calls, the calls, and seconds
    a call (None before any)."""

    judge_seconds: float = 0.0
    judge_calls: int = 0
    seconds_per_call: float | None = None


NO_TIMINGS = {"judge_seconds": 0.0, "judge_calls": 0}
"""The timings of an arena not judged yet."""


@dataclass(frozen=True)
class ArenaHeader(StoredRecord):
    """The arena header (module docstring), as ``arenas.header`` holds it."""

    NESTED = {"run": ("one", ArenaRun), "judge": ("one", ModelRecord),
              "sessions": ("list", ArenaSession), "counts": ("one", ArenaCounts),
              "timings": ("one", JudgeTimings)}
    WHAT = "an arena header"

    run: ArenaRun | None = None
    judge: ModelRecord | None = None        # the judge as loaded (its identity, chat, device)
    template: str | None = None
    packages: Mapping[str, str | None] = field(default_factory=empty_map)
    machine: Mapping[str, Any] = field(default_factory=empty_map)
    sessions: tuple[ArenaSession, ...] = ()
    counts: ArenaCounts | None = None
    timings: JudgeTimings | None = None
    contestants: tuple[str, ...] = ()       # the latest session's
    concurrency: int | None = None          # the latest session's requests in flight
    message: str | None = None              # why the latest session ended as it did

    @classmethod
    def for_judge(cls, run, generator, template_id: str) -> "ArenaHeader":
        """The header of a new arena of ``run`` (``engine.runs.lookup.RunInfo``) judged by
        ``generator`` with template ``template_id``: no session, counts or time yet."""
        return cls.from_json({
            "run": {"name": run.name, "dataset": run.dataset, "dataset_hash": run.dataset_hash},
            "judge": ModelRecord.loaded(generator).as_dict(),
            "template": template_id, "packages": package_versions(), "machine": machine(),
            "sessions": [], "counts": {}, "timings": dict(NO_TIMINGS)})

    # ------------------------------------------------------------------- judging's updates

    def judge_problem(self, arena: str, identity: Mapping[str, Any]) -> str | None:
        """Why a judge of ``identity`` (:func:`engine.runs.header.identity_json`) may not go
        on judging arena ``arena``: another judge model judged it."""
        known = self.judge
        if known and known.key and identity.get("key") != known.key:
            return (f"arena {arena!r} was judged by another {known.name!r} "
                    f"(sha256 {str(known.sha256)[:12]}…, now "
                    f"{str(identity.get('sha256'))[:12]}…); give a new name (--name)")
        return None

    def with_session(self, contestants: list[str], concurrency: int, threads: int | None,
                     device: str | None, load: Mapping[str, Any] | None) -> "ArenaHeader":
        """A session starting now with ``contestants`` and ``concurrency`` requests in flight
        appended; the last one's message gone."""
        session = ArenaSession.read({"started_at": now(), "threads": threads,
                                     "concurrency": concurrency, "device": device,
                                     "packages": package_versions(), "load": load})
        return self._drop("message")._set(contestants=contestants, concurrency=concurrency,
                                          sessions=(*self.sessions, session))

    def with_session_ended(self, status: str, message: str | None, session: Mapping[str, Any],
                           judge_seconds: float, judge_calls: int,
                           counts: Mapping[str, int]) -> "ArenaHeader":
        """The latest session ended with ``status`` (``session``: its figures), its judge
        time added to the timings, the plan's ``counts`` and the ``message``, if any."""
        *before, last = self.sessions
        last = last._set(ended_at=now(), status=status, **session)
        timings = self.timings or JudgeTimings.read(NO_TIMINGS)
        seconds = round(timings.judge_seconds + judge_seconds, 3)
        calls = timings.judge_calls + judge_calls
        timings = timings._set(judge_seconds=seconds, judge_calls=calls,
                               seconds_per_call=seconds / calls if calls else None)
        header = self._set(sessions=(*before, last), timings=timings,
                           counts=ArenaCounts.read(counts))
        return header._set(message=message) if message else header
