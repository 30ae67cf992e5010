"""The threads the app's thread workers run on: daemon threads that quitting does not wait for.

Textual runs a ``@work(thread=True)`` worker with ``loop.run_in_executor(None, ...)``, on the
event loop's default executor. Python's default is a ``ThreadPoolExecutor`` whose threads are
joined twice when the app ends: by ``asyncio.run`` (``shutdown_default_executor``) and at
interpreter exit. So ``q`` on an idle app waited for whatever a worker was still doing: the
workspace opening (the demo pool's first import), a screen's reload, a model check, a store
busy with another process's write (up to the store's 30 s busy timeout). Cancelling a worker
cannot stop its thread.

:class:`DetachedExecutor` runs each call on its own daemon thread, and its ``shutdown`` waits
for none, so the app ends when its screens have closed. What a worker leaves undone is safe to
leave: every store write is one transaction, every file goes through a temporary file
(:mod:`engine.output_files`), and a model host lease is dropped at exit. The one thing worth
waiting for is a job that writes results (a run, judging, calibration): those finish their
step first (:func:`mirage_tui.jobs.stop_jobs`, called as the app unmounts).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from concurrent.futures import Future, ThreadPoolExecutor

_names = itertools.count(1)


class DetachedExecutor(ThreadPoolExecutor):
    """Each submitted call on a new daemon thread; ``shutdown`` never waits. (A
    ThreadPoolExecutor by class, as ``set_default_executor`` requires, whose pool is never
    used.)"""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self._shut = False

    def submit(self, fn, /, *args, **kwargs) -> Future:
        if self._shut:
            raise RuntimeError("cannot schedule new work after shutdown")
        future: Future = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting worker
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=run, name=f"mirage-worker-{next(_names)}", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._shut = True


def detach_workers(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Make ``loop``'s default executor (the running loop's) a :class:`DetachedExecutor`."""
    (loop or asyncio.get_running_loop()).set_default_executor(DetachedExecutor())
