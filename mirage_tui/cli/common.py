"""What every ``mirage-tui`` command group shares: the one-line error, the shared options
(``--db``, ``--json``, ``--html``, ``--force``, counts in range), Ctrl-C handling, tables fitted
to the terminal."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path


class CliError(Exception):
    """A failure to report in one line and exit with status 1."""


_INVALID_CHOICE = re.compile(
    r"argument (?:\S+/)?(\S+): invalid choice: '(.*)' \(choose from (.*)\)$")


_ARGUMENT = re.compile(r"argument (?:\S+/)?(\S+): (.*)$")


def count_type(count):
    """An argparse ``type`` for a count (:mod:`engine.counts`): the whole number typed, within
    the count's range, checked before any work; else one line naming the option and the
    range (``--boot 1000000000 is out of range: a whole number from 1 to 100,000 (...)``),
    with the number meant when it was typed another way (``'1e3' ...; did you mean 1000?``)."""
    from engine.counts import CountError, parse_count

    def parse(text: str) -> int:
        try:
            return parse_count(text, count)
        except CountError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = "count"
    parse.count = count                 # the docs' table is checked against it
    return parse


def fraction_type(low_open: float = 0.0, high_open: float = 1.0, what: str = "a fraction"):
    """An argparse ``type`` for a number strictly between ``low_open`` and ``high_open``
    (``inf``, ``nan`` and text refused in one line naming the option)."""
    import math

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and low_open < value < high_open):
            raise argparse.ArgumentTypeError(
                f"{text.strip()!r} is not {what} between {low_open:g} and {high_open:g}")
        return value

    parse.__name__ = "fraction"
    return parse


class Parser(argparse.ArgumentParser):
    """An argument parser whose invalid-choice error is one line with the nearest choice:
    ``mirage-tui: unknown command 'reprot'; did you mean 'report'?``. Its subparsers are of
    this class too (argparse makes them of the parent's class)."""

    def error(self, message: str):
        if message.startswith("unrecognized arguments: "):
            self._unknown_option(message)
        match = _INVALID_CHOICE.match(message)
        if match is None:
            argument = _ARGUMENT.match(message)
            if argument is not None:        # a bad value: one line naming the option
                self.exit(2, f"{self.prog}: {argument[1]} {argument[2]}\n")
            super().error(message)
        what, word, listed = match.groups()
        choices = re.findall(r"'([^']*)'", listed)
        from engine.suggest import did_you_mean

        hint = did_you_mean(word, choices) or f"; choose from {', '.join(choices)}"
        if what in ("COMMAND", "ACTION"):
            line = f"unknown {what.lower()} {word!r}{hint}"
        else:
            line = f"{what} {word!r} is not allowed{hint}"
        self.exit(2, f"{self.prog}: {line}\n")


    def parse_known_args(self, args=None, namespace=None):
        if not hasattr(self, "_argv"):          # the words given, for _unknown_option
            self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def _unknown_option(self, message: str) -> None:
        """An unknown ``--option``: the nearest of the invoked command's own options, else the
        commands that have it, in one line."""
        from engine.suggest import did_you_mean
        from mirage_tui.cli.examples import subparsers_of, walk

        words = message.removeprefix("unrecognized arguments: ").split()
        word = next((w.split("=")[0] for w in words if w.startswith("--")), None)
        if word is None:
            return
        parsers = dict(walk(self))
        given = [w for w in getattr(self, "_argv", []) if not w.startswith("-")]
        path = max((p for p in parsers if p.split() == given[:len(p.split())]), key=len)
        own = {o for a in parsers[path]._actions for o in a.option_strings}
        hint = did_you_mean(word, own)
        if hint:
            self.exit(2, f"{self.prog}: unknown option {word!r}{hint}\n")
        having = sorted(p for p, parser in parsers.items() if p and not subparsers_of(parser)
                        and any(word in a.option_strings for a in parser._actions))
        if having:
            command = f"{self.prog} {path}".strip()
            self.exit(2, f"{command}: no option {word!r} (an option of "
                         f"{', '.join(having[:4])}{', ...' if len(having) > 4 else ''}); "
                         f"see '{command} --help'\n")
        hint = did_you_mean(word, {o for p in parsers.values() for a in p._actions
                                   for o in a.option_strings})
        if hint:
            self.exit(2, f"{self.prog}: unknown option {word!r}{hint}\n")


def from_settings(args, name: str, flag: str, setting: str | None = None) -> str:
    """``args.<name>``, else the app config's ``setting`` (default ``name``); a usage error
    naming the flag and the config key when neither gives one."""
    value = getattr(args, name, None)
    if value:
        return without_key(value)
    from engine.app_config import config_path, load_app_config

    value = getattr(load_app_config(), setting or name)
    if value:
        return without_key(",".join(value) if isinstance(value, list) else value)
    command = " ".join(filter(None, (args.command, getattr(args, f"{args.command}_command",
                                                            None))))
    raise CliError(f"{command} needs {flag} (or {setting or name} = ... in {config_path()})")


def without_key(specs: str) -> str:
    """Model specs (a comma list) without the credentials written into an endpoint's URL:
    they are sent to the server in this process, never stored or shown; said once."""
    from models.endpoints import had_credentials, without_credentials

    names = [n.strip() for n in specs.split(",")]
    if not any(had_credentials(n) for n in names):
        return specs
    print("mirage-tui: note: the credentials written into the URL are sent to the server but "
          "never stored or shown (the workspace names the URL without them); to keep a key, "
          "name its environment variable in endpoints.toml (api_key_env)", file=sys.stderr)
    return ",".join(without_credentials(n) for n in names)


def text_width() -> int:
    """The width the text of ``report`` and ``compare`` wraps to: ``COLUMNS``, else the
    terminal's, else 100 (piped into a file or another program)."""
    return max(40, shutil.get_terminal_size((100, 24)).columns)


def print_table(rows: list, right: set[int] = frozenset(), keys: int = 1) -> None:
    """A CLI table (``rows[0]`` its header) printed within :func:`text_width` (``COLUMNS``):
    the widest cells wrap at spaces, then the columns after the key ones go into panels
    (:func:`engine.text_fit.fit_table`, as ``report``'s tables)."""
    from engine.text_fit import fit_table

    for line in fit_table([[str(c) for c in r] for r in rows], set(right), text_width(),
                          keys=keys):
        print(line)


def print_wrapped(text: str) -> None:
    """Prose under a CLI table, wrapped at words within :func:`text_width`."""
    from engine.text_fit import wrap_lines

    print(wrap_lines(text, text_width()))


def db_option(parser: argparse.ArgumentParser, top: bool = False) -> None:
    parser.add_argument(
        "--db", type=Path, metavar="PATH",
        default=None if top else argparse.SUPPRESS,
        help="workspace database file (default: $MIRAGE_DB or the user data folder)")


def json_option(parser: argparse.ArgumentParser, help: str = "print the result as JSON") -> None:
    """``--json``: print what the command prints as JSON (``help`` says its shape)."""
    parser.add_argument("--json", action="store_true", help=help)


def html_option(parser: argparse.ArgumentParser, what: str, shows: str) -> None:
    """``--html FILE``: ``what`` (``"the report"``) as one self-contained page showing
    ``shows``, written instead of the text; ``--json`` still prints."""
    parser.add_argument("--html", type=Path, metavar="FILE",
                        help=f"write {what} as one self-contained HTML page ({shows}; opens "
                             "offline) instead of printing the text (with --json the JSON "
                             "still goes to stdout)")


def force_option(parser: argparse.ArgumentParser, what: str = "an existing output file") -> None:
    """``--force``: the only way a command writes over a file that is there
    (:func:`no_overwrite`)."""
    parser.add_argument("--force", action="store_true", help=f"overwrite {what}")


def no_overwrite(args, *paths) -> None:
    """The one check before a command writes files for the user: unless ``--force``, a file
    already at any of ``paths`` (None skipped) stops the command, before any work, with one
    line naming it (:func:`engine.output_files.refuse_existing`); a path whose folder does
    not exist, or where no file can go, is refused with or without ``--force``. ``-`` is
    standard output. With ``--force`` a symbolic link at a path is replaced itself, never
    what it points to, and a note says so."""
    from engine.output_files import is_stdout, link_target, refuse_existing, writable_target

    if getattr(args, "force", False):
        for path in paths:              # a missing folder or a device: refused all the same
            if path is not None and not is_stdout(path):
                writable_target(path)
                pointed = link_target(path)
                if pointed is not None:
                    print(f"mirage-tui: note: {path} is a symbolic link to {pointed}; the "
                          f"link is replaced by the file, {pointed} is left as it was",
                          file=sys.stderr)
        return
    refuse_existing(paths)


def in_flight_options(parser: argparse.ArgumentParser, what: str = "generator") -> None:
    """``--concurrency`` and ``--max-errors``: how many model requests go out at once, and how
    many may fail before the job stops (engine/inflight.py)."""
    from engine.counts import CONCURRENCY

    parser.add_argument("--concurrency", type=count_type(CONCURRENCY), metavar="N",
                        help=f"{what} requests in flight at once (default: the {what}'s own: "
                             "a host's slots, 8 for an HTTP endpoint, 1 in-process)")
    parser.add_argument("--max-errors", metavar="N|P%",
                        help="error budget: stop after more than N failed requests, or more "
                             "than P%% of those attempted (default 10%%, at least 5)")


TERMINATED = 143
"""The exit status after SIGTERM (128 + 15), as the shell reports a process it ended."""


def exit_now(printer, code: int = 130, why: str = "interrupted") -> None:
    """The second Ctrl-C (or SIGTERM): the job has recorded how it ended (every stored item,
    battle or verdict is one whole transaction); exit ``code`` now, in one line, without
    waiting for worker threads still inside a model call (the interpreter would join them at
    exit); the exit handlers (the model hosts' leases) run first."""
    import atexit

    printer.close()
    print(f"mirage-tui: {why}; run the same command again to resume", file=sys.stderr)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def install_terminate():
    """SIGTERM outside a job (:func:`interruptible` has its own): one line and exit 143,
    raised where the process is, so a write in progress rolls back. Before, the process ended
    with 143 and not a word."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        sys.stderr.write("\nmirage-tui: terminated (SIGTERM)\n")
        raise SystemExit(TERMINATED)

    return signal.signal(signal.SIGTERM, handler)


def _install_graceful_terminate(cancel: threading.Event, terminated: threading.Event,
                                printer):
    """In a job, SIGTERM is a cancel that says so (the job stops as after Ctrl-C and can be
    resumed; the command then exits 143); a second SIGTERM exits at once."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        if terminated.is_set():
            exit_now(printer, TERMINATED, "terminated (SIGTERM)")
        terminated.set()
        cancel.set()
        sys.stderr.write("\nmirage-tui: terminated (SIGTERM): stopping; run the same command "
                         "again to resume\n")

    return signal.signal(signal.SIGTERM, handler)


def install_interrupt(cancel: threading.Event):
    """First Ctrl-C: cancel (no new request; the requests in flight are cut where the model
    allows: an HTTP endpoint's connections are shut down); second: the default
    (KeyboardInterrupt)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        if cancel.is_set():
            signal.signal(signal.SIGINT, signal.default_int_handler)
            raise KeyboardInterrupt
        cancel.set()
        sys.stderr.write("\nmirage-tui: cancelling: no new request, the ones in flight are "
                         "cut (Ctrl-C again to stop at once)\n")

    return signal.signal(signal.SIGINT, handler)


@contextmanager
def interruptible(printer):
    """A long command's job, Ctrl-C aware: yields the cancel event the job takes (the first
    Ctrl-C sets it: :func:`install_interrupt`); the second exits 130 at once
    (:func:`exit_now`); at the end ``printer`` is closed and the previous handler is back."""
    cancel, terminated = threading.Event(), threading.Event()
    previous = install_interrupt(cancel)
    previous_term = _install_graceful_terminate(cancel, terminated, printer)
    try:
        yield cancel
    except KeyboardInterrupt:
        exit_now(printer)
    finally:
        printer.close()
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)
    if terminated.is_set():             # the job stopped and is resumable; said above
        raise SystemExit(TERMINATED)
