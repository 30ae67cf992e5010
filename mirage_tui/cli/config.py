"""``mirage-tui config``: the app's settings in effect, and a commented file to start from.

    mirage-tui config [--json]
    mirage-tui config --init

The settings live in ``config.toml`` in the user config folder (``$MIRAGE_CONFIG_DIR``
instead when set): :mod:`engine.app_config`. ``config`` prints each setting with where it
comes from (a flag, an environment variable, the file, the default), the key overrides and
every screen's actions, and exits 1 when the file has problems (each is one line).
``--init`` writes the commented default file and refuses to overwrite one.
"""

from __future__ import annotations

import json
import sys

from mirage_tui.cli.common import CliError, db_option, json_option


def add_parsers(sub) -> None:
    p = sub.add_parser("config", help="the app's settings (config.toml) in effect",
                       description="Print the settings in effect (default database, models, "
                                   "theme, key overrides), where each comes from, and the "
                                   "file's path; --init writes a commented default file.")
    db_option(p)
    p.add_argument("--init", action="store_true",
                   help="write a commented default config.toml (refuses to overwrite one)")
    json_option(p, "print the settings as JSON")


def run(args, store=None) -> int:
    from engine.app_config import (config_path, effective_database, folder_note,
                                   init_config_file, load_app_config)

    if args.init:
        path = config_path()
        from engine.output_files import OutputFileError, OutputFileExists

        try:
            init_config_file(path)
        except OutputFileExists:
            raise CliError(f"{path} exists already; edit it, or move it away first") from None
        except OutputFileError as exc:
            raise CliError(str(exc)) from None
        except OSError as exc:      # its folder could not be made
            raise CliError(f"{path}: cannot write it ({exc.strerror}{folder_note(exc)})") \
                from None
        print(f"wrote {path} (every setting commented out; remove the '# ' to set one)")
        return 0
    from textual.theme import BUILTIN_THEMES

    from engine.store import default_db_path
    from mirage_tui.app import MirageApp
    from mirage_tui.keymap import checked

    from models.env_settings import check_all

    config = load_app_config()
    actions = checked(config, MirageApp, BUILTIN_THEMES, everything=True)
    db, source = effective_database(getattr(args, "db", None), config)
    if db is None:
        db = default_db_path()
    problems = [*config.problems, *check_all(),
                *_model_problems(config, db if db.is_file() else None)]
    rows = {"database": (str(db), source)}
    for key in ("dataset", "generators", "judge", "embedder", "thinking", "theme"):
        value = getattr(config, key)
        shown = ", ".join(value) if isinstance(value, list) else value
        rows[key] = (shown or _DEFAULTS[key], str(config.path) if value else "default")
    if args.json:
        print(json.dumps({"file": str(config.path), "exists": config.found,
                          "settings": {k: {"value": v, "from": f} for k, (v, f) in rows.items()},
                          "keys": config.keys, "actions": actions,
                          "problems": problems}, ensure_ascii=False))
    else:
        state = "" if config.found else " (not there: built-in defaults; " \
            "`mirage-tui config --init` writes one)"
        print(f"config file: {config.path}{state}")
        width = max(len(k) for k in rows)
        for key, (value, where) in rows.items():
            print(f"  {key:<{width}}  {value}   ({where})")
        overrides = [f"{'keys' if s == '*' else 'keys.' + s}.{a} = {k}"
                     for s, table in config.keys.items() for a, k in table.items()]
        print(f"  {'keys':<{width}}  {'; '.join(overrides) or 'no overrides'}")
        print("actions that [keys] may rebind (screen: actions):")
        for scope, names in actions.items():
            print(f"  {'every screen' if scope == '*' else scope}: {', '.join(names)}")
    for problem in problems:
        print(f"mirage-tui: warning: {problem}", file=sys.stderr)
    return 1 if problems else 0


_DEFAULTS = {"dataset": "none: New run offers the first; `run` needs --dataset",
             "generators": "none: New run offers the first; `run` needs --generator",
             "judge": "none: `arena judge` and `judge calibrate` need --judge",
             "embedder": "none: `index` and `retrieve` need --embedder",
             "thinking": "auto: each model's default (New run, `run --thinking`)",
             "theme": "textual-dark"}


def _model_problems(config, db) -> list[str]:
    """One line for each configured generator or judge that does not exist, with a
    did-you-mean (a fitted judge only when the workspace is there to look in)."""
    from engine.arena.judges.names import judge_problem
    from engine.runs.plan import check_generator

    out = []
    for name in config.generators:
        try:
            check_generator(name)
        except LookupError as exc:
            out.append(f"{config.path}: generators: {exc}")
    if config.judge:
        store = None
        if db is not None:
            from engine.store import StorageError, Store

            try:
                store = Store(db)
            except StorageError:                # the file's own problem: other commands say it
                store = None
        try:
            problem = judge_problem(config.judge, store)
        finally:
            if store is not None:
                store.close()
        if problem:
            out.append(f"{config.path}: judge: {problem}")
    return out
