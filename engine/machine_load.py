"""How busy the machine is, and what that does to a model's speed (issue 36): the time
estimates (:mod:`engine.runs.estimates`) take a speed measured under one load and correct it
for the load now.

The load is the number of *other* tasks wanting a core, on average (``others``), out of
``cpus`` cores:

- a **1-second probe** (:func:`probe`): the kernel's count of runnable tasks
  (``/proc/loadavg``'s fourth field, less the reading process itself) sampled every 50 ms for a
  second. It sees a load that started a moment ago, which the load average does not;
- else the **load average** (:func:`os.getloadavg`, the 1-minute figure): on systems without
  ``/proc``, and wherever waiting a second is not wanted (a run's session start:
  :func:`load_now` with ``wait=False``, which reuses a probe made in the last
  :data:`PROBE_KEPT_S` seconds, such as the New-run form's).

A model on llama.cpp uses every core (one thread each). With ``others`` tasks competing for
``cpus`` cores, the scheduler gives it about ``cpus / (cpus + others)`` of them, so it runs
:meth:`MachineLoad.slowdown` = ``1 + others / cpus`` times slower than on an idle machine: a
fair-share model (the proportional-share rule of time-sharing schedulers, e.g. Linux CFS),
measured against real runs by ``benchmarks/bench_estimates.py``. A speed measured at load
``then`` is taken ``slowdown(now) / slowdown(then)`` times slower now (:func:`correction`); a
measurement whose load was not recorded is taken as made on an idle machine.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

PROBE_SECONDS = 1.0
PROBE_EVERY_S = 0.05
PROBE_KEPT_S = 30.0          # a probe this recent stands for the load now
SAME_LOAD = 0.05             # corrections closer to ×1 than this are no correction


@dataclass(frozen=True)
class MachineLoad:
    """Other tasks wanting a core (``others``) of ``cpus`` cores, and how that was measured
    (``how``: ``1-second probe`` or ``load average``)."""

    others: float
    cpus: int
    how: str

    def slowdown(self) -> float:
        """How many times slower a model using every core runs than on an idle machine
        (module docstring: a fair share of the cores)."""
        return 1.0 + max(0.0, self.others) / max(1, self.cpus)

    def words(self) -> str:
        """``1.0 other busy core of 2 (1-second probe)``."""
        busy = max(0.0, self.others)
        return (f"{busy:.1f} other busy core{'s' if round(busy, 1) != 1 else ''} of "
                f"{self.cpus} ({self.how})")

    def as_json(self) -> dict:
        return {"others": round(self.others, 2), "cpus": self.cpus, "how": self.how}

    @classmethod
    def from_json(cls, data) -> "MachineLoad | None":
        """A load kept by :meth:`as_json` (None: none kept, or not one)."""
        if not isinstance(data, dict):
            return None
        try:
            return cls(float(data["others"]), int(data["cpus"]), str(data.get("how", "")))
        except (KeyError, TypeError, ValueError):
            return None


_kept: tuple[float, MachineLoad] | None = None
_lock = threading.Lock()


def _cpus() -> int:
    """The cores this process may run on (its affinity: a container's or ``taskset``'s),
    else :func:`os.cpu_count`."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def load_average() -> MachineLoad | None:
    """The 1-minute load average as :class:`MachineLoad` (None where there is none)."""
    try:
        return MachineLoad(os.getloadavg()[0], _cpus(), "load average")
    except (AttributeError, OSError):
        return None


def _runnable() -> int | None:
    """Runnable tasks now, this one included (``/proc/loadavg``: ``0.5 0.4 0.3 3/120 …``)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return None


def probe(seconds: float = PROBE_SECONDS) -> MachineLoad | None:
    """The mean of other runnable tasks over ``seconds`` (module docstring); the load average
    where ``/proc/loadavg`` cannot be read. Kept for :func:`load_now`."""
    global _kept
    samples = []
    end = time.monotonic() + seconds
    while True:
        count = _runnable()
        if count is None:
            break
        samples.append(max(0, count - 1))          # less this process, reading
        if time.monotonic() >= end:
            break
        time.sleep(PROBE_EVERY_S)
    found = (MachineLoad(sum(samples) / len(samples), _cpus(), "1-second probe") if samples
             else load_average())
    if found is not None:
        with _lock:
            _kept = (time.monotonic(), found)
    return found


def load_now(wait: bool = True) -> MachineLoad | None:
    """The load now: a probe made in the last :data:`PROBE_KEPT_S` seconds, else a new one
    (``wait``), else the load average (no waiting)."""
    with _lock:
        kept = _kept
    if kept is not None and time.monotonic() - kept[0] <= PROBE_KEPT_S:
        return kept[1]
    return probe() if wait else load_average()


def correction(then: MachineLoad | None, now: MachineLoad | None) -> float:
    """How many times slower than at load ``then`` a model runs at load ``now`` (1 when
    the load now is unknown; ``then`` unknown: taken as an idle machine)."""
    if now is None:
        return 1.0
    return now.slowdown() / (then.slowdown() if then is not None else 1.0)


def correction_words(factor: float, then: MachineLoad | None, now: MachineLoad | None) -> str:
    """What the estimate says of the load: ``machine load now 1.0 other busy core of 2
    (1-second probe), ×1.50 against 0.0 when measured``; empty when the load is unknown."""
    if now is None:
        return ""
    when = (f"{max(0.0, then.others):.1f} when measured" if then is not None
            else "an idle machine assumed when measured")
    if abs(factor - 1.0) < SAME_LOAD:
        return f"machine load now {now.words()}, as when measured: no correction"
    return f"machine load now {now.words()}: ×{factor:.2f} against {when}"
