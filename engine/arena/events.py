"""What judging reports while it works (:class:`ArenaProgress`) and when it stops
(:class:`ArenaSummary`): small dataclasses the TUI draws and the CLI prints, the arena's
counterpart of :mod:`engine.runs.events`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class ArenaProgress:
    arena: str
    status: str                  # 'running', 'done', 'cancelled', 'failed'
    done: int                    # battles finished (stored before, or judged now)
    total: int                   # battles planned
    cached: int                  # finished without a new judge call in this session
    judged: int                  # finished with at least one new judge call
    parse_failures: int          # judge replies that could not be parsed (all battles)
    battles_per_s: float         # judged battles per second (this session)
    eta_seconds: float | None
    query: str | None            # the query id being judged
    message: str | None = None

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


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
