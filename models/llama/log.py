"""llama.cpp's log, kept off the terminal.

llama.cpp logs from C straight to the terminal's stderr, which corrupts a TUI. A process-wide
log callback (``llama_log_set``) keeps the last lines in memory (they explain load failures)
and copies them to a log file when one is set. llama-cpp-python also redirects file
descriptors 1 and 2 to /dev/null around each model load when ``verbose=False``; that blanks the
screen of a TUI drawing from another thread, and two loads in two threads can leave stdout
pointing at /dev/null for good. With the callback in place the redirect has nothing left to
hide, so it is replaced by a no-op (``_NoRedirect``). Installed on import.
"""

from __future__ import annotations

import collections
import ctypes
import itertools
import os
import threading

import llama_cpp
from llama_cpp import _internals as _llama_internals
from llama_cpp import llama as _llama_module

_LOG: collections.deque[tuple[int, str]] = collections.deque(maxlen=500)
_log_seq = itertools.count()
_log_file = None
_log_file_lock = threading.Lock()


@llama_cpp.llama_log_callback
def _log_callback(level: int, text: bytes, user_data) -> None:
    # Called from C: an exception here would be printed to stderr, so nothing may escape.
    try:
        line = text.decode("utf-8", errors="replace")
        _LOG.append((next(_log_seq), line))
        if _log_file is not None:
            with _log_file_lock:
                _log_file.write(line)
                _log_file.flush()
    except Exception:  # noqa: BLE001
        pass


class _NoRedirect:
    """Replaces llama_cpp's ``suppress_stdout_stderr`` (see the module docstring)."""

    def __init__(self, disable: bool = True):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


def install_log_callback() -> None:
    """Route llama.cpp's C logging to ``_log_callback`` (idempotent; done at import)."""
    llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
    _llama_module.suppress_stdout_stderr = _NoRedirect
    _llama_internals.suppress_stdout_stderr = _NoRedirect


def set_log_file(path: str | os.PathLike | None) -> None:
    """Append llama.cpp's log to ``path`` from now on (None: keep it in memory only).
    The log is process-wide, like llama.cpp's own."""
    global _log_file
    with _log_file_lock:
        if _log_file is not None:
            _log_file.close()
        _log_file = None if path is None else open(path, "a", encoding="utf-8")


def recent_log(since: int = -1) -> list[str]:
    """llama.cpp log lines kept in memory, optionally only those after sequence ``since``."""
    return [line for seq, line in list(_LOG) if seq > since]


def log_mark() -> int:
    """The sequence number of the last line kept, for :func:`recent_log` (``since``)."""
    return _LOG[-1][0] if _LOG else -1


install_log_callback()
