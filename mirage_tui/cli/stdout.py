"""The CLI's standard output: what commands print, made visible
(:class:`engine.text_safety.VisibleStream`), with every fault writing it but a closed pipe
raised as :class:`StdoutError`, so that ``main`` ends any command that meets a full device or
a closed descriptor with one line and exit 1 instead of a traceback (a closed pipe, ``| head
-1``, stays a ``BrokenPipeError`` and ends quietly)."""

from __future__ import annotations

import errno

from engine.text_safety import VisibleStream


class StdoutError(OSError):
    """Standard output could not be written (``> /dev/full``, a closed descriptor)."""


class CheckedStdout(VisibleStream):
    """``raw`` is None when the process started with stdout closed (``>&-``)."""

    def write(self, text: str) -> int:
        self._check_open()
        try:
            return super().write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from None

    def flush(self) -> None:
        if self.raw is None:
            return
        try:
            super().flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from None

    def isatty(self) -> bool:
        return self.raw is not None and super().isatty()

    def _check_open(self) -> None:
        if self.raw is None:
            raise StdoutError(errno.EBADF, "it is closed")
