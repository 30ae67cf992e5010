"""What judging reports while it works (:class:`~engine.jobs.JobEvent`, built by
:func:`arena_event`, with an :class:`ArenaProgress` as its detail) and when it stops
(:class:`ArenaSummary`): small dataclasses the TUI draws and the CLI prints, the arena's
counterpart of :mod:`engine.runs.events`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from engine.jobs import JobEvent


@dataclass(frozen=True)
class ArenaProgress:
    """An arena's own numbers in its events (``event.detail``)."""

    parse_failures: int          # judge replies that could not be parsed (all battles)


def arena_event(arena: str, status: str, done: int, total: int, cached: int, judged: int,
                parse_failures: int, battles_per_s: float, eta_seconds: float | None,
                query: str | None, message: str | None = None, errors: int = 0) -> JobEvent:
    """An arena's event: battles ``done`` (stored before, or judged now) of ``total``;
    cached: finished without a new judge call in this session; judged: finished with at least
    one; errors: not stored (the prompt overflows the judge's context); the rate in judged
    battles per second; the query id being judged."""
    return JobEvent(
        kind="arena", name=arena, status=status, done=done, total=total, unit="battles",
        cached=cached, new=judged, errors=errors, rate=battles_per_s, rate_unit="battles/s",
        eta_seconds=eta_seconds, working_on=query, message=message,
        detail=ArenaProgress(parse_failures=parse_failures))


@dataclass
class ArenaSummary:
    arena: str
    arena_id: int | None
    run: str
    mode: str                    # 'pairwise' | 'reference'
    status: str                  # 'done', 'cancelled' or 'failed'
    message: str | None          # why it stopped, when it did not finish
    total: int                   # battles planned
    done: int                    # battles stored
    judged: int                  # battles that needed a new judge call in this session
    cached: int                  # battles finished from the store or the judgment cache
    parse_failures: int          # unparsed judge replies over all stored battles
    unparsed_battles: int        # stored battles without a verdict (every reply unparsed)
    disagreements: int           # 'both' order: the two orders disagreed (stored as ties)
    errors: int                  # battles not stored: the prompt overflowed the judge's context
    judge_calls: int             # new judge calls in this session
    cached_calls: int            # judge calls answered by the judgments cache
    queries: int                 # queries judged over
    skipped_queries: int         # reference mode: queries without a reference answer
    seconds: float
    contestants: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return asdict(self)
