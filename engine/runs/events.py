"""What a run reports while it works (:class:`ProgressEvent`) and when it stops
(:class:`RunSummary`). Small, immutable-ish dataclasses: the TUI draws them, the CLI prints
them, and neither needs anything else from the engine."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ProgressEvent:
    run: str
    status: str                  # 'running', 'done', 'cancelled', 'failed'
    done: int                    # items finished (generated, from the store, or errored)
    total: int                   # items planned so far (grows with adaptive batches)
    cached: int                  # finished without generating in this session
    generated: int               # generated in this session
    errors: int
    truncated: int
    tokens_per_s: float          # generated tokens per second of generation (this session)
    prompt_tokens_per_s: float   # prompt tokens evaluated per second (this session)
    eta_seconds: float | None
    system: str | None           # what is being worked on
    setting: str | None
    queries: int                 # queries in the plan so far
    accuracy: dict[str, dict[str, tuple[int, int]]]   # system -> setting -> (EM_loose hits, n)
    message: str | None = None

    def em_loose(self, system: str, setting: str) -> float | None:
        """The running EM_loose accuracy of a system in a setting (None before any item)."""
        hits, n = self.accuracy.get(system, {}).get(setting, (0, 0))
        return hits / n if n else None

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


@dataclass
class RunSummary:
    run: str
    run_id: int | None
    status: str                  # 'done', 'cancelled' or 'failed'
    message: str | None          # why it stopped, when it did not finish
    total: int
    done: int
    generated: int
    cached: int
    errors: int
    truncated: int
    queries: int
    seconds: float
    prompt_tokens: int = 0
    prompt_tokens_evaluated: int = 0
    completion_tokens: int = 0
    generation_seconds: float = 0.0
    stop_reason: str | None = None          # adaptive runs: why sampling stopped
    half_widths: dict[str, float] = field(default_factory=dict)
    devices: list[str] = field(default_factory=list)
