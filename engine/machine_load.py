"""How busy the machine is, and what that does to a model's speed: the time estimates
(:mod:`engine.runs.estimates`) take a speed measured under one load and correct it for the
load now.

The load is the number of *other* tasks wanting a core, on average (``others``), out of
``cpus`` cores:

- a **probe** (:func:`probe`, a second long): the kernel's count of runnable tasks
  (``/proc/loadavg``'s fourth field) sampled every 50 ms, less the runnable threads of this
  process (its own reading, its UI, its workers) and of the model hosts that serve only this
  process (:func:`own_host_pids`: a run's own model is not a load on the run; a host serving
  another process's run is, like any other process). It sees a load that started a moment
  ago, which the load average does not;
- else the **load average** (:func:`os.getloadavg`, the 1-minute figure), on systems without
  ``/proc``.

A probe stands for "now" only while it is fresh: :func:`load_now` reuses one made in the last
:data:`PROBE_FRESH_S` seconds (a form refreshing its plan), and, without waiting
(``wait=False``: a run's session start, Live's ETA), one made in the last
:data:`PROBE_KEPT_S` (the plan's, just before the run), else makes a short one
(:data:`QUICK_PROBE_S`). A probe kept 30 s for every caller once stood for a machine that had
since become busy: a benchmark's plan read "0.0 other busy cores" with a busy loop running,
and New run a probe made before a second job started.

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
from typing import Iterable

PROBE_SECONDS = 1.0
PROBE_EVERY_S = 0.05
QUICK_PROBE_S = 0.25         # a probe made without waiting for a full one (load_now)
PROBE_FRESH_S = 10.0         # a probe this recent stands for the load now (a form typed in)
PROBE_KEPT_S = 30.0          # ... and for the load a run starts under (the plan's probe)
SAME_LOAD = 0.05             # corrections closer to ×1 than this are no correction


@dataclass(frozen=True)
class MachineLoad:
    """Other tasks wanting a core (``others``) of ``cpus`` cores, and how that was measured
    (``how``: ``1-second probe`` or ``load average``)."""

    others: float
    cpus: int
    how: str
    own: float = 0.0
    """A probe's: threads of this process and of its own model hosts that wanted a core, on
    average (not counted in ``others``)."""
    average: float | None = None
    """A probe's: the 1-minute load average when it ended (what ``uptime`` says), beside it."""

    def slowdown(self) -> float:
        """How many times slower a model using every core runs than on an idle machine
        (module docstring: a fair share of the cores)."""
        return 1.0 + max(0.0, self.others) / max(1, self.cpus)

    def words(self) -> str:
        """``1.0 other busy core of 2 (1-second probe)``; a probe's adds the load average
        (``…; load average 2.98``: it also counts the run's own model host and tasks waiting
        on the disk, so the two differ by those)."""
        busy = max(0.0, self.others)
        average = f"; load average {self.average:.2f}" if self.average is not None else ""
        return (f"{busy:.1f} other busy core{'s' if round(busy, 1) != 1 else ''} of "
                f"{self.cpus} ({self.how}{average})")

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


def _runnable_threads(pid: int) -> int:
    """Threads of process ``pid`` running or wanting a core now (state ``R``); 0 when it is
    gone or cannot be read."""
    count = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        close = stat.rfind(b")")
        if stat[close + 2:close + 3] == b"R":
            count += 1
    return count


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (a host's llama-server), where Linux lists them."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            return [int(child) for child in f.read().split()]
    except (OSError, ValueError):
        return []


def own_host_pids() -> set[int]:
    """The processes of the model hosts (and their llama-server) that serve this process
    alone or nobody: their threads are the run's own work, not a load on it. A host that
    another live process leases is that process's load, like any other."""
    try:
        from models.host import registry

        if not (registry.data_dir() / "hosts").is_dir():   # never make the folder to look
            return set()
        me = os.getpid()
        out: set[int] = set()
        for entry in registry.live_entries():
            if set(registry.live_leases(entry.key)) <= {me}:
                out.add(entry.pid)
                out.update(_children(entry.pid))
        return out
    except Exception:  # noqa: BLE001 - an unreadable registry: count every host as others
        return set()


def probe(seconds: float = PROBE_SECONDS, exclude: Iterable[int] | None = None
          ) -> MachineLoad | None:
    """The mean of other runnable tasks over ``seconds`` (module docstring): the kernel's
    runnable count less the runnable threads of this process and of ``exclude`` (default
    :func:`own_host_pids`); the load average where ``/proc/loadavg`` cannot be read. Kept
    for :func:`load_now`."""
    global _kept
    excluded = sorted({os.getpid(), *(own_host_pids() if exclude is None else exclude)})
    samples, own = [], []
    end = time.monotonic() + seconds
    while True:
        count = _runnable()
        if count is None:
            break
        ours = max(1, sum(_runnable_threads(pid) for pid in excluded))  # this one, reading
        samples.append(max(0, count - ours))
        own.append(ours - 1)
        if time.monotonic() >= end:
            break
        time.sleep(PROBE_EVERY_S)
    how = "1-second probe" if seconds >= PROBE_SECONDS else "quick probe"
    average = load_average()
    found = (MachineLoad(sum(samples) / len(samples), _cpus(), how, sum(own) / len(own),
                         average.others if average is not None else None) if samples
             else average)
    if found is not None:
        with _lock:
            _kept = (time.monotonic(), found)
    return found


def load_now(wait: bool = True) -> MachineLoad | None:
    """The load now: a probe made in the last :data:`PROBE_FRESH_S` seconds, else a new one
    (``wait``); without waiting, a probe made in the last :data:`PROBE_KEPT_S` seconds (the
    plan's, as a run starts), else a quick one (:data:`QUICK_PROBE_S`)."""
    with _lock:
        kept = _kept
    age = time.monotonic() - kept[0] if kept is not None else None
    if age is not None and age <= (PROBE_FRESH_S if wait else PROBE_KEPT_S):
        return kept[1]
    return probe() if wait else probe(QUICK_PROBE_S)


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
