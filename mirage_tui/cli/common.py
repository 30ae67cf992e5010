"""What every ``mirage-tui`` command group shares: the one-line error, the ``--db`` option,
Ctrl-C handling and durations."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path


class CliError(Exception):
    """A failure to report in one line and exit with status 1."""


def db_option(parser: argparse.ArgumentParser, top: bool = False) -> None:
    parser.add_argument(
        "--db", type=Path, metavar="PATH",
        default=None if top else argparse.SUPPRESS,
        help="workspace database file (default: $MIRAGE_DB or the user data folder)")


def install_interrupt(cancel: threading.Event):
    """First Ctrl-C: cancel after the current item; second: the default (KeyboardInterrupt)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        if cancel.is_set():
            signal.signal(signal.SIGINT, signal.default_int_handler)
            raise KeyboardInterrupt
        cancel.set()
        sys.stderr.write("\nmirage-tui: cancelling after the current item "
                         "(Ctrl-C again to stop at once)\n")

    return signal.signal(signal.SIGINT, handler)
