"""What a run reports while it works (:class:`~engine.jobs.JobEvent`, built by
:func:`run_event`, with a :class:`RunProgress` as its detail) and when it stops
(:class:`RunSummary`). Small dataclasses: the TUI draws them, the CLI prints them, and neither
needs anything else from the engine."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.jobs import JobEvent

@dataclass(frozen=True)
class RunProgress:
    """A run's own numbers in its events (``event.detail``)."""

    truncated: int               # items whose context was cut to fit
    prompt_tokens_per_s: float   # prompt tokens evaluated per second (this session)
    system: str | None           # what is being worked on
    setting: str | None
    queries: int                 # queries in the plan so far
    accuracy: dict[str, dict[str, tuple[int, int]]]   # system -> setting -> (EM_loose hits, n)
    pace_note: str | None = None  # "running 5× slower than X's model check: machine busy?"
    running_s: float | None = None   # how long the model has worked on the item now running
    running_tokens: int | None = None  # its tokens generated so far (a backend that counts)

    def em_loose(self, system: str, setting: str) -> float | None:
        """The running EM_loose accuracy of a system in a setting (None before any item)."""
        hits, n = self.accuracy.get(system, {}).get(setting, (0, 0))
        return hits / n if n else None


def run_event(run: str, status: str, done: int, total: int, cached: int, generated: int,
              errors: int, truncated: int, tokens_per_s: float, prompt_tokens_per_s: float,
              eta_seconds: float | None, system: str | None, setting: str | None,
              queries: int, accuracy: dict[str, dict[str, tuple[int, int]]],
              message: str | None = None, pace_note: str | None = None,
              running_s: float | None = None, running_tokens: int | None = None) -> JobEvent:
    """A run's event: items ``done`` of ``total`` (cached: finished without generating in
    this session; generated: the new work), generated tokens per second of generation as the
    rate, the setting as what it works on; ``running_s``: how long the item now running has
    run (None: no model works now), ``running_tokens`` its tokens so far where the model says
    (:func:`engine.runs.execute.tokens_so_far`)."""
    return JobEvent(
        kind="run", name=run, status=status, done=done, total=total, unit="items",
        cached=cached, new=generated, errors=errors, rate=tokens_per_s, rate_unit="tok/s",
        eta_seconds=eta_seconds, working_on=setting, message=message,
        detail=RunProgress(truncated=truncated, prompt_tokens_per_s=prompt_tokens_per_s,
                           system=system, setting=setting, queries=queries,
                           accuracy=accuracy, pace_note=pace_note, running_s=running_s,
                           running_tokens=running_tokens))


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
    cut: int = 0                 # answers cut at the token limit (stored items, cached too)
    cut_while_thinking: int = 0  # of them, cut before the thinking closed (no answer)
