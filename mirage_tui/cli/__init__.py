"""The ``mirage-tui`` command: the TUI with no arguments, headless subcommands otherwise.

Every subcommand takes ``--db PATH`` (or ``$MIRAGE_DB``) and ``--in-process`` (models load into
this process, not a shared model host: ``models/host/``) and exits non-zero on failure, so it
can be scripted. Textual is imported only when the TUI starts.

Failures are one line on stderr, ``mirage-tui: error: ...``, and exit 1 (2 for usage): bad
input, a model's error, and every storage fault (:class:`engine.store.StorageError` names the
database file and the cause). A path typed with ``--db`` or ``$MIRAGE_DB`` whose folder does
not exist is refused (a typo must not create a workspace somewhere unexpected); only the
default workspace's folder is created. What commands print goes through
:class:`engine.text_safety.VisibleStream`, so dataset and model text cannot drive the
terminal. A closed pipe (``... | head -1``) ends the command quietly; any other fault writing
standard output (``> /dev/full``, a closed descriptor) is one line and exit 1, for every
command (:class:`mirage_tui.cli.stdout.StdoutError`).
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys

from mirage_tui.cli.common import CliError, Parser, db_option
from mirage_tui.guard import shadowing_problem

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    from mirage_tui.cli.examples import add_examples

    parser = Parser(
        prog="mirage-tui",
        description="Local-first RAG evaluation workbench. With no command, opens the TUI.")
    db_option(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for module in _group_modules():
        module.add_parsers(sub)
    _add_everywhere(parser, "--in-process", action="store_true",
                    help="load models into this process instead of a shared model host "
                         "(the same as MIRAGE_HOSTING=in-process)")
    add_examples(parser)
    return parser


def _add_everywhere(parser: argparse.ArgumentParser, *names, **options) -> None:
    """The option on the parser and on every subcommand below it (so it goes anywhere)."""
    parser.add_argument(*names, **options, default=argparse.SUPPRESS)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _add_everywhere(child, *names, **options)


# command groups, each in its own module with add_parsers(sub) and run(args, store) -> int;
# each imports its heavy dependencies only when it runs. "models" needs no workspace.
_GROUPS: dict[str, str] = {
    "data": "mirage_tui.cli.data",
    "models": "mirage_tui.cli.models",
    "index": "mirage_tui.cli.index",
    "retrieve": "mirage_tui.cli.index",
    "run": "mirage_tui.cli.run",
    "compare": "mirage_tui.cli.compare",
    "report": "mirage_tui.cli.report",
    "export": "mirage_tui.cli.report",
    "arena": "mirage_tui.cli.arena",
    "judge": "mirage_tui.cli.judge",
    "runs": "mirage_tui.cli.runs",
    "config": "mirage_tui.cli.config",
}
_NO_STORE = ("models", "config")


def _group_modules():
    from importlib import import_module

    return [import_module(name) for name in dict.fromkeys(_GROUPS.values())]


def _end_after_app() -> None:
    """After the app has closed, end the process here: the threads quitting waits for
    (non-daemon ones) joined, the exit handlers run (the model hosts' leases), the output
    flushed, then ``os._exit``. The interpreter's own shutdown adds nothing the app needs and
    took 0.7-1.7 s after the app had ended on a loaded 2-core machine (freeing every module
    and object), most of "Stop and quit"'s time; and with a worker thread still running
    (daemon threads, which quitting does not wait for: mirage_tui/worker_threads.py) it
    would tear down the native libraries under a thread still inside them (an embedding, a
    model call) and could abort ("terminate called without an active exception", exit 134,
    seen once in the tmux smoke test). Nothing is lost: every store write is its own
    transaction, files are written through a temporary file."""
    import atexit
    import threading

    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def main(argv: list[str] | None = None) -> int:
    # before anything imports engine or models: a namesake of either would be imported instead
    problem = shadowing_problem()
    if problem:
        print(f"mirage-tui: error: {problem}", file=sys.stderr)
        return 2
    from engine.counts import ResampleMemoryError
    from engine.datasets.catalog import DatasetNotFound
    from engine.datasets.formats.base import DatasetFormatError
    from engine.runs.owner import Busy
    from engine.store import StorageError, Store, default_db_path
    from engine.store.database import storage_error
    from engine.text_safety import VisibleStream
    from mirage_tui.cli.stdout import CheckedStdout, StdoutError
    from models.base import ModelError

    from engine.app_config import effective_database, load_app_config

    parser = build_parser()
    args = parser.parse_args(argv)
    settings = load_app_config()
    # precedence: --db, then $MIRAGE_DB, then config.toml's database, then the default
    chosen, _ = effective_database(args.db, settings)
    db_path = chosen or default_db_path()
    if getattr(args, "in_process", False):
        os.environ["MIRAGE_HOSTING"] = "in-process"
    typed = chosen is not None
    if args.command is None:
        try:
            Store.check_place(db_path, create_folder=not typed, empty_file_ok=not typed)
        except StorageError as exc:
            return _fail(exc)
        from mirage_tui.app import run_app

        run_app(db_path, settings=settings)     # the app shows the file's problems
        _end_after_app()
        return 0
    if args.command != "config":                # which prints them itself
        for problem in settings.problems:
            print(f"mirage-tui: warning: {problem}", file=sys.stderr)
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = CheckedStdout(out), VisibleStream(err)
    from mirage_tui.cli.common import install_terminate

    previous_term = install_terminate()
    try:
        from importlib import import_module

        store = None
        if args.command not in _NO_STORE:
            store = Store(db_path, create_folder=not typed, empty_file_ok=not typed)
            if store.created and typed and err.isatty():
                print(f"mirage-tui: note: created a new workspace at {db_path}",
                      file=sys.stderr)
        code = import_module(_GROUPS[args.command]).run(args, store)
        if store is not None and store.read_only:   # said once; a write was refused instead
            from engine.text_safety import visible_line

            print(f"mirage-tui: note: {visible_line(db_path)} cannot be written here: opened "
                  "for reading only (a command that writes is refused)", file=sys.stderr)
        sys.stdout.flush()              # a full or closed stdout is found here, not at exit
        return code
    except ResampleMemoryError as exc:      # named by the option that asked for them
        return _fail(exc.line("--boot" if hasattr(args, "boot") else "--n-boot"))
    except (CliError, DatasetFormatError, DatasetNotFound, LookupError, StorageError,
            ValueError, ModelError, Busy) as exc:
        return _fail(exc)
    except MemoryError as exc:              # what no estimate foresaw: one line all the same
        return _fail(f"not enough memory ({exc or 'an allocation failed'}); ask for fewer "
                     "resamples (--boot, --n-boot) or a smaller --sample")
    except sqlite3.Error as exc:
        return _fail(storage_error(db_path, exc) or f"database error ({db_path}): {exc}")
    except BrokenPipeError:
        return _closed_pipe()
    except StdoutError as exc:
        return _stdout_failed(exc)
    except KeyboardInterrupt:
        print("mirage-tui: interrupted", file=sys.stderr)
        return 130
    finally:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _closed_pipe()
        except StdoutError:
            _detach_stdout()
        sys.stdout, sys.stderr = out, err
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)


def _fail(exc) -> int:
    """The one-line error and exit status 1."""
    from engine.text_safety import visible_line

    print(f"mirage-tui: error: {visible_line(exc)}", file=sys.stderr)
    return 1


def _stdout_failed(exc: OSError) -> int:
    """One line on stderr, exit 1; what is left in stdout's buffer is dropped, so the
    interpreter's flush at exit finds nothing to fail on."""
    _detach_stdout()
    print(f"mirage-tui: error: cannot write to standard output: {exc.strerror or exc}",
          file=sys.stderr)
    return 1


def _detach_stdout() -> None:
    """Point stdout's descriptor at /dev/null, so what is left in its buffer goes nowhere."""
    if sys.__stdout__ is None:
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.__stdout__.fileno())


def _closed_pipe() -> int:
    """The reader of stdout went away (``| head``): nothing more to say, and no traceback
    when Python flushes stdout at exit (the recipe of the Python docs, signal.html#note-on-
    sigpipe). Exits 141, as a shell command killed by SIGPIPE does."""
    _detach_stdout()
    return 141

