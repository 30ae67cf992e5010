"""The ``mirage-tui`` command: the TUI with no arguments, headless subcommands otherwise.

Every subcommand takes ``--db PATH`` (or ``$MIRAGE_DB``) and ``--in-process`` (models load into
this process, not a shared model host: ``models/host/``) and exits non-zero on failure, so it
can be scripted. Textual is imported only when the TUI starts.
"""

from __future__ import annotations

import argparse
import sys

from mirage_tui.cli.common import CliError, db_option
from mirage_tui.guard import shadowing_problem

__all__ = ["CliError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mirage-tui",
        description="Local-first RAG evaluation workbench. With no command, opens the TUI.")
    db_option(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for module in _group_modules():
        module.add_parsers(sub)
    _add_everywhere(parser, "--in-process", action="store_true",
                    help="load models into this process instead of a shared model host "
                         "(the same as MIRAGE_HOSTING=in-process)")
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
    "report": "mirage_tui.cli.report",
    "export": "mirage_tui.cli.report",
    "arena": "mirage_tui.cli.arena",
}
_NO_STORE = ("models",)


def _group_modules():
    from importlib import import_module

    return [import_module(name) for name in dict.fromkeys(_GROUPS.values())]


def main(argv: list[str] | None = None) -> int:
    # before anything imports engine or models: a namesake of either would be imported instead
    problem = shadowing_problem()
    if problem:
        print(f"mirage-tui: error: {problem}", file=sys.stderr)
        return 2
    from engine.datasets.catalog import DatasetNotFound
    from engine.datasets.formats.base import DatasetFormatError
    from engine.store import Store, StoreError, default_db_path
    from models.base import ModelError

    parser = build_parser()
    args = parser.parse_args(argv)
    db_path = args.db or default_db_path()
    if getattr(args, "in_process", False):
        import os

        os.environ["MIRAGE_HOSTING"] = "in-process"
    try:
        if args.command is None:
            from mirage_tui.app import run_app

            run_app(db_path)
            return 0
        from importlib import import_module

        store = None if args.command in _NO_STORE else Store(db_path)
        return import_module(_GROUPS[args.command]).run(args, store)
    except (CliError, DatasetFormatError, DatasetNotFound, LookupError, StoreError,
            ValueError, ModelError) as exc:
        print(f"mirage-tui: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mirage-tui: interrupted", file=sys.stderr)
        return 130

