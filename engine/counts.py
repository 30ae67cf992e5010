"""Every count a user can type (on the command line, in a run file, in a form), with its range,
in one table; and the memory a resampling step may take.

A count is checked before any work: :func:`parse_count` reads the text typed (decimal digits
only; ``1e9``, ``0x10``, ``1.5``, ``inf`` and ``nan`` are refused, with the whole number they
spell suggested when there is one) and :func:`check_count` the value of a run file or a form.
The refusal is one line naming the range and what the count is for; the caller puts the name of
the option, key or field in front. ``docs/cli-conventions.md`` lists every count option of the
command line with its range (a test walks the parser and keeps the two equal).

The ranges are not about taste: each upper end is what one machine can do in a sitting (a
million resamples of a percentile bootstrap, 100,000 tournaments each fitted on its own), or
what the thing itself allows (a seed is 32 bits in numpy's and llama.cpp's generators).

Memory (:func:`check_resample_memory`): a bootstrap keeps a number per resample and statistic,
and a tournament a matrix per resample; those are estimated from the counts before anything is
allocated and refused in one line (:class:`ResampleMemoryError`) when above what this machine
has to give: half of its available memory, or ``$MIRAGE_RESAMPLE_MEMORY_MB``
(``models/env_settings.py``).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Count:
    """A count a user types: its range (inclusive) and what it counts."""

    low: int
    high: int
    meaning: str

    def allowed(self) -> str:
        return f"a whole number from {self.low:,} to {self.high:,} ({self.meaning})"


RESAMPLES = Count(1, 1_000_000, "bootstrap resamples")
TOURNAMENTS = Count(1, 100_000, "bootstrap tournaments, each fitted on its own")
SEED = Count(0, 2**32 - 1, "a random seed, 32 bits")
SAMPLE = Count(1, 10_000_000, "items sampled")
BUDGET = Count(1, 10_000_000, "queries adaptive sampling may use")
ADAPTIVE_BATCH = Count(1, 100_000, "queries added per adaptive step")
QUERIES = Count(1, 1_000_000, "queries judged")
CONCURRENCY = Count(1, 1024, "requests in flight at once")
THREADS = Count(1, 1024, "CPU threads")
MAX_TOKENS = Count(1, 131_072, "tokens generated per answer")
N_CTX = Count(1, 1_048_576, "tokens of context")
DEPTH = Count(1, 10_000, "retrieved or reranked candidates")
BATCH_SIZE = Count(1, 65_536, "texts embedded per batch")
LIMIT = Count(1, 1_000_000, "rows listed")
FLIPS = Count(0, 100_000, "flipped items listed")

RUN_FILE_COUNTS: dict[str, Count] = {
    "sample": SAMPLE, "budget": BUDGET, "adaptive_batch": ADAPTIVE_BATCH, "n_ctx": N_CTX,
    "threads": THREADS, "concurrency": CONCURRENCY, "max_tokens": MAX_TOKENS,
    "rerank_depth": DEPTH, "seed": SEED, "thinking_budget": MAX_TOKENS,
}
"""The counts of a run file (and New run's form), by key."""

ANY_COUNT = Count(0, 2**63 - 1, "a whole number")
"""A count of a run file not in :data:`RUN_FILE_COUNTS` yet: at least what SQLite can store."""

_WHOLE = re.compile(r"[+-]?[0-9]+")


class CountError(ValueError):
    """A count outside its range or not a whole number (one line, without the option's name:
    the caller adds it)."""


def _spelled(text: str) -> int | None:
    """The whole number ``text`` spells in another notation (``1e3``, ``0x10``, ``2.0``)."""
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number == int(number) else None


def parse_count(text: str, count: Count) -> int:
    """The whole number ``text`` holds, within ``count``'s range; :class:`CountError` else."""
    text = text.strip()
    if _WHOLE.fullmatch(text) is None:
        spelled = _spelled(text)
        hint = (f"; did you mean {spelled}?" if spelled is not None and
                count.low <= spelled <= count.high else "")
        raise CountError(f"{text!r} is not {count.allowed()}{hint}")
    return check_count(int(text), count)


def check_count(value, count: Count) -> int:
    """``value`` (from a run file or a form) when it is a whole number in ``count``'s range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise CountError(f"expected {count.allowed()}, got {value!r}")
    if not count.low <= value <= count.high:
        raise CountError(f"{value} is out of range: {count.allowed()}")
    return value


# ---------------------------------------------------------------------------- memory


class ResampleMemoryError(CountError):
    """A resampling step that would need more memory than this machine has to give."""

    def __init__(self, resamples: int, need: int, most: int, formula: str, limit: int) -> None:
        self.resamples, self.need, self.most, self.formula = resamples, need, most, formula
        self.limit = limit
        super().__init__(self.line())

    def line(self, option: str | None = None) -> str:
        what = f"{option} {self.resamples}" if option else f"{self.resamples:,} resamples"
        return (f"{what} needs ~{_size(self.need)} ({self.formula}); at most "
                f"{self.most:,} here ({_size(self.limit)} to give: half the available "
                "memory, or $MIRAGE_RESAMPLE_MEMORY_MB)")


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.0f} {unit}" if n >= 10 * scale else f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _available_memory() -> int:
    """Bytes of memory available now (``MemAvailable``), else the machine's, else 4 GiB."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4 * 2**30


def resample_memory_limit() -> int:
    """Bytes one resampling step may allocate: ``$MIRAGE_RESAMPLE_MEMORY_MB`` when set, else
    half of the memory available now."""
    from models.env_settings import env_count

    mb = env_count("MIRAGE_RESAMPLE_MEMORY_MB")
    return mb * 2**20 if mb is not None else _available_memory() // 2


def check_resample_memory(resamples: int, cells: int, formula: str) -> None:
    """Refuse (:class:`ResampleMemoryError`) a step that keeps ``cells`` 8-byte numbers per
    resample for ``resamples`` resamples when that is more than
    :func:`resample_memory_limit`; ``formula`` says what ``cells`` is, for the line."""
    need = resamples * max(cells, 1) * 8
    limit = resample_memory_limit()
    if need > limit:
        raise ResampleMemoryError(resamples, need, limit // (max(cells, 1) * 8), formula, limit)
