"""What the benchmarks time with: :class:`Clock`, the wall and CPU seconds of a ``with`` block.

Not a benchmark itself (``make bench`` runs ``bench_*.py``); the benchmarks import it as
``from timing import Clock`` (their own folder is on the path when they run).
"""

from __future__ import annotations

import time


class Clock:
    """``with Clock() as clock: ...`` then ``clock.wall`` and ``clock.cpu``: the seconds the
    block took on the wall clock and on this process's CPU."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu
