"""The app's own settings: ``config.toml`` in the user config folder.

The file sits beside ``endpoints.toml`` (:func:`models.endpoints.config_dir`: the platformdirs
user config folder, ``$MIRAGE_CONFIG_DIR`` instead when set). Every key is optional::

    database = "~/evals/workspace.db"      # the workspace
    dataset = "demo"                       # New run's and `run`'s dataset
    generators = ["smollm2-135m-instruct"] # New run's and `run`'s generator(s)
    judge = "smollm2-135m-instruct"        # `arena judge` and `judge calibrate`
    embedder = "minilm-l6-v2"              # retriever of retrieved@k; `index`, `retrieve`
    thinking = "off"                       # New run's and `run`'s thinking mode(s)
    theme = "nord"                         # a Textual theme

    [keys]                                 # on every screen: action = "key"
    quit = "ctrl+q"
    [keys.runs]                            # on one screen (datasets, models, runs, ...)
    rename = "ctrl+r"

Precedence, for every setting: a command-line flag, then an environment variable
(``$MIRAGE_DB``), then this file, then the built-in default. A file that cannot be read, or a
key that is unknown or has a bad value, is never fatal: each problem is one line naming the
file, the key and what is allowed, and that key (or the whole file, when it is not TOML) falls
back to the default. Which themes, screens and actions exist is the app's to say: it checks
``theme`` and ``keys`` against its own (:func:`check_keys`).
"""

from __future__ import annotations

import errno
import os
import stat
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Iterable, Mapping

from engine.suggest import did_you_mean
from models.thinking import MODES as THINKING_MODES

CONFIG_FILE = "config.toml"
MAX_BYTES = 1 << 20
"""A config.toml larger than this is refused unread (one problem line)."""
GLOBAL_KEYS = "*"
"""The scope of ``[keys]`` entries that hold on every screen."""

DEFAULT_FILE = '''\
# mirage-tui settings (written by `mirage-tui config --init`; `mirage-tui config` shows
# what is in effect). Every key is optional: remove the "# " to set one.
# Precedence: a command-line flag, then an environment variable ($MIRAGE_DB), then this
# file, then the built-in default. A bad key is reported in one line and left at its default.

# database = "~/evals/workspace.db"        # the workspace (default: the user data folder)
# dataset = "demo"                         # New run's and `run`'s dataset (NAME or NAME@VERSION)
# generators = ["smollm2-135m-instruct"]   # New run's and `run`'s generator(s)
# thinking = "auto"                        # New run's and `run`'s: auto, on, off or "on,off"
# judge = "smollm2-135m-instruct"          # `arena judge` and `judge calibrate` (--judge)
# embedder = "minilm-l6-v2"                # retriever of retrieved@k; `index`, `retrieve`
# theme = "textual-dark"                   # a Textual theme: textual-dark, textual-light,
#                                          # nord, gruvbox, tokyo-night, dracula, ...

# Key overrides: each line names an action and its key (several keys: "ctrl+r,f2");
# `mirage-tui config` lists the actions of every screen.
# [keys]                                   # on every screen
# quit = "ctrl+q"
# [keys.runs]                              # one screen: datasets, models, runs,
# rename = "ctrl+r"                        # leaderboard, new_run, live
'''


@dataclass
class AppConfig:
    """The settings in effect (None / empty: the built-in default)."""

    database: str | None = None
    dataset: str | None = None
    generators: list[str] = field(default_factory=list)
    judge: str | None = None
    embedder: str | None = None
    theme: str | None = None
    thinking: str | None = None
    """New run's and `run`'s thinking mode(s) (``off``, ``on,off``; :mod:`models.thinking`)"""
    keys: dict[str, dict[str, str]] = field(default_factory=dict)
    """scope (a screen, or :data:`GLOBAL_KEYS`) → action → key"""
    path: Path | None = None
    problems: list[str] = field(default_factory=list)
    """One line per problem found in the file (each already names the file and the key)."""

    @property
    def found(self) -> bool:
        """Whether the file is there (False for a name the system refuses: too long, a part
        of it a file; the problem is in ``problems``)."""
        try:
            return self.path is not None and self.path.exists()
        except OSError:
            return False

    @property
    def database_path(self) -> Path | None:
        return Path(self.database).expanduser() if self.database else None

    def as_toml_values(self) -> dict:
        """The settings as their TOML keys (unset ones left out)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)
               if f.name in _KNOWN and f.name != "keys" and getattr(self, f.name)}
        if self.keys:
            out["keys"] = self.keys
        return out


_STRINGS = ("database", "dataset", "judge", "embedder", "theme")
_KNOWN = ("database", "dataset", "generators", "judge", "embedder", "theme", "thinking", "keys")


def config_path() -> Path:
    from models.endpoints import config_dir

    return config_dir() / CONFIG_FILE


def load_app_config(path: Path | None = None) -> AppConfig:
    """The settings in ``path`` (default :func:`config_path`); a missing file gives the
    defaults, and problems are collected in ``problems`` (module docstring), never raised."""
    path = Path(path) if path is not None else config_path()
    config = AppConfig(path=path)
    try:
        raw = _read_small_file(path)
    except FileNotFoundError:
        return config
    except OSError as exc:
        config.problems.append(f"{path}: cannot read it ({exc.strerror or exc}"
                               f"{folder_note(exc)}); using the built-in defaults")
        return config
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        config.problems.append(f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                               f"{exc.start}); using the built-in defaults")
        return config
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        config.problems.append(f"{path}: not valid TOML ({exc}); using the built-in defaults")
        return config
    except RecursionError:              # tomllib recurses once per nested array or table
        config.problems.append(f"{path}: not valid TOML (nested too deeply); using the "
                               "built-in defaults")
        return config
    for key, value in data.items():
        problem = _take(config, key, value)
        if problem:
            config.problems.append(f"{path}: {problem}")
    return config


def folder_note(exc: OSError) -> str:
    """``"; the folder is $MIRAGE_CONFIG_DIR='…'"`` when that variable chose a folder the
    system refuses (a file, a name too long), else ``""``."""
    from models.endpoints import CONFIG_ENV

    value = os.environ.get(CONFIG_ENV)
    if not value or exc.errno not in (errno.ENOTDIR, errno.EEXIST, errno.ENAMETOOLONG,
                                      errno.EACCES):
        return ""
    return f"; the folder is ${CONFIG_ENV}={value!r}"


def _read_small_file(path: Path) -> bytes:
    """The file's bytes; an OSError for anything but a regular file of at most
    :data:`MAX_BYTES` (a FIFO would block the command, a device never end)."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    if info.st_size > MAX_BYTES:
        raise OSError(errno.EFBIG, f"{info.st_size} bytes, more than a settings file's "
                                   f"{MAX_BYTES}")
    return path.read_bytes()


def _take(config: AppConfig, key: str, value) -> str | None:
    """Set ``key`` on ``config``; the problem (without the file) when it cannot."""
    if key not in _KNOWN:
        return (f"unknown key {key!r}{did_you_mean(key, _KNOWN)} (known: "
                f"{', '.join(_KNOWN)}); ignored")
    if key in _STRINGS:
        if not isinstance(value, str) or not value.strip():
            return f"{key}: expected a non-empty string, got {value!r}; using the default"
        setattr(config, key, value.strip())
    elif key == "generators":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value or \
                not all(isinstance(v, str) and v.strip() for v in value):
            return (f"generators: expected a list of model names such as "
                    f"[\"smollm2-135m-instruct\"], got {value!r}; using the default")
        config.generators = [v.strip() for v in value]
    elif key == "thinking":
        return _take_thinking(config, value)
    else:
        return _take_keys(config, value)
    return None


def _take_thinking(config: AppConfig, value) -> str | None:
    modes = value.split(",") if isinstance(value, str) else value
    if not isinstance(modes, list) or not all(isinstance(m, str) for m in modes):
        return f"thinking: expected auto, on, off or \"on,off\", got {value!r}; using auto"
    modes = [m.strip().lower() for m in modes if m.strip()]
    for mode in modes:
        if mode not in THINKING_MODES:
            return (f"thinking: unknown mode {mode!r}{did_you_mean(mode, THINKING_MODES)} "
                    f"(use {', '.join(THINKING_MODES)}); using auto")
    config.thinking = ",".join(dict.fromkeys(modes)) or None
    return None


def _take_keys(config: AppConfig, value) -> str | None:
    if not isinstance(value, dict):
        return "keys: expected a table ([keys] with action = \"key\" lines); ignored"
    bad = []
    for name, entry in value.items():
        if isinstance(entry, str) and entry.strip():
            config.keys.setdefault(GLOBAL_KEYS, {})[name] = entry.strip()
        elif isinstance(entry, dict):
            for action, key in entry.items():
                if isinstance(key, str) and key.strip():
                    config.keys.setdefault(name, {})[action] = key.strip()
                else:
                    bad.append(f"keys.{name}.{action} = {key!r}")
        else:
            bad.append(f"keys.{name} = {entry!r}")
    if bad:
        return (f"{', '.join(bad)}: expected a key name such as \"ctrl+r\" (or a [keys.SCREEN] "
                "table of them); ignored")
    return None


def check_keys(config: AppConfig, actions: Mapping[str, Iterable[str]]) -> None:
    """Drop (with a problem line) the key overrides whose screen or action does not exist;
    ``actions``: screen → its actions (the app's, :data:`GLOBAL_KEYS` for the app's own)."""
    known = {screen: set(names) for screen, names in actions.items()}
    every = set().union(*known.values()) if known else set()
    for scope in list(config.keys):
        if scope != GLOBAL_KEYS and scope not in known:
            screens = [s for s in known if s != GLOBAL_KEYS]
            config.problems.append(
                f"{config.path}: [keys.{scope}]: no such screen{did_you_mean(scope, screens)} "
                f"(screens: {', '.join(screens)}); ignored")
            del config.keys[scope]
            continue
        allowed = every if scope == GLOBAL_KEYS else known[scope] | known.get(GLOBAL_KEYS, set())
        for action in list(config.keys[scope]):
            if action not in allowed:
                where = "keys" if scope == GLOBAL_KEYS else f"keys.{scope}"
                on = "any screen" if scope == GLOBAL_KEYS else f"the {scope} screen"
                config.problems.append(
                    f"{config.path}: {where}.{action}: no such action on {on}"
                    f"{did_you_mean(action, allowed)} (actions: {', '.join(sorted(allowed))}); "
                    "ignored")
                del config.keys[scope][action]
        if not config.keys[scope]:
            del config.keys[scope]


def check_theme(config: AppConfig, themes: Iterable[str]) -> None:
    """Drop (with a problem line) a theme the app does not have."""
    themes = sorted(themes)
    if config.theme is not None and config.theme not in themes:
        config.problems.append(
            f"{config.path}: theme {config.theme!r}: no such theme"
            f"{did_you_mean(config.theme, themes)} (themes: {', '.join(themes)}); using the "
            "default")
        config.theme = None


def init_config_file(path: Path | None = None) -> Path:
    """Write the commented default file (its folder made first: the user's config folder);
    refuses (:class:`engine.output_files.OutputFileExists`) to overwrite one."""
    from engine.output_files import write_new_text

    path = Path(path) if path is not None else config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_new_text(path, DEFAULT_FILE)


def effective_database(flag: Path | None, config: AppConfig) -> tuple[Path | None, str]:
    """The workspace path by precedence (flag, ``$MIRAGE_DB``, the file) and where it came
    from; ``(None, "default")`` for the built-in default."""
    from engine.store import ENV_DB

    if flag is not None:
        return Path(flag).expanduser(), "--db"
    if os.environ.get(ENV_DB):
        return Path(os.environ[ENV_DB]).expanduser(), f"${ENV_DB}"
    if config.database_path is not None:
        return config.database_path, str(config.path)
    return None, "default"
