"""Every ``MIRAGE_*`` environment variable the program reads, in one table: its meaning, its
kind and, for a number or a choice, its allowed range. A value is parsed here and nowhere
else, and a value out of range is one line naming the variable, the value and the range
(:class:`EnvSettingError`), never Python's ``could not convert string to float: 'abc'``.

An unset or empty variable is its default. The folders the program makes its files in
(``MIRAGE_DATA_DIR``, ``MIRAGE_THREAD_BUDGET_DIR``) are refused when a file is there or the
name is too long, and ``MIRAGE_LLAMA_SERVER`` when it names no executable file. Other paths and
names (``MIRAGE_DB``, ``MIRAGE_MODELS``, ...) are listed for the one table, read as text
(:func:`env_text`).
"""

from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from models.base import ModelError


class EnvSettingError(ModelError, ValueError):
    """A ``MIRAGE_*`` variable holds a value outside its range (one line)."""


@dataclass(frozen=True)
class EnvSetting:
    name: str
    meaning: str
    kind: str = "text"                  # text | seconds | count | choice | ports | folder
                                        # | program
    default: object = None
    low: float | None = None            # seconds, count: the range, inclusive
    high: float | None = None
    choices: tuple[str, ...] = ()       # choice: the values taken (lower case), first canonical

    def allowed(self) -> str:
        if self.kind == "seconds":
            return f"a number of seconds from {self.low:g} to {self.high:g}"
        if self.kind == "count":
            return f"a whole number from {self.low:.0f} to {self.high:.0f}"
        if self.kind == "choice":
            return ", ".join(self.choices[:-1]) + " or " + self.choices[-1]
        if self.kind == "ports":
            return "a comma list of port numbers from 1 to 65535"
        if self.kind == "folder":
            return "a folder (made when missing)"
        if self.kind == "program":
            return "an executable file, or empty for none"
        return "text"


SETTINGS: dict[str, EnvSetting] = {s.name: s for s in (
    EnvSetting("MIRAGE_HOST_GRACE", "seconds a model host lives on without a live client",
               "seconds", 10.0, 0.5, 86400),
    EnvSetting("MIRAGE_HOST_START_TIMEOUT", "seconds a client waits for a new model host",
               "seconds", 180.0, 1, 86400),
    EnvSetting("MIRAGE_HOSTING", "where models load: a shared model host or this process",
               "choice", "hosted", choices=("hosted", "host", "in-process", "inprocess",
                                            "local")),
    EnvSetting("MIRAGE_HOST_BACKEND", "the backend of a new model host", "choice", "auto",
               choices=("auto", "llama.cpp", "llama-server")),
    EnvSetting("MIRAGE_ENDPOINT_PORTS", "the loopback ports probed for model servers",
               "ports"),
    EnvSetting("MIRAGE_RESAMPLE_MEMORY_MB", "MiB one resampling step (a bootstrap, the "
               "tournaments) may allocate; unset: half of the available memory", "count",
               None, 1, 16 * 2**20),
    EnvSetting("MIRAGE_DB", "the workspace database file"),
    EnvSetting("MIRAGE_CONFIG_DIR", "the folder of config.toml and endpoints.toml"),
    EnvSetting("MIRAGE_DATA_DIR", "the folder of model hosts' registry and logs", "folder"),
    EnvSetting("MIRAGE_MODELS", "folders searched for GGUF models"),
    EnvSetting("MIRAGE_LLAMA_SERVER", "the llama-server binary (empty: none)", "program"),
    EnvSetting("MIRAGE_THREAD_BUDGET_DIR", "the folder of the thread budget", "folder"),
    EnvSetting("MIRAGE_CPUINFO", "a /proc/cpuinfo text standing in for this CPU's (tests)"),
    EnvSetting("MIRAGE_CPU_MACHINE", "a machine name standing in for this one's (tests)"),
    EnvSetting("MIRAGE_THINK_TAGS", "more tag pairs around a reasoning model's thinking: "
               "OPEN:CLOSE[,OPEN:CLOSE] (models/reasoning.py)"),
)}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    return None if value is None or not value.strip() else value.strip()


def _refuse(setting: EnvSetting, value: str) -> EnvSettingError:
    return EnvSettingError(f"${setting.name}={value!r}: expected {setting.allowed()} "
                           f"({setting.meaning}; unset it for the default)")


def env_seconds(name: str) -> float:
    """The number of seconds ``name`` holds, within its range; its default when unset."""
    setting = SETTINGS[name]
    value = _raw(name)
    if value is None:
        return float(setting.default)
    try:
        number = float(value)
    except ValueError:
        raise _refuse(setting, value) from None
    if not math.isfinite(number) or not setting.low <= number <= setting.high:
        raise _refuse(setting, value)
    return number


def env_count(name: str) -> int | None:
    """The whole number ``name`` holds (decimal digits), within its range; None when unset."""
    setting = SETTINGS[name]
    value = _raw(name)
    if value is None:
        return setting.default
    if not (value.isascii() and value.isdigit()) or not setting.low <= int(value) \
            <= setting.high:
        raise _refuse(setting, value)
    return int(value)


def env_choice(name: str) -> str:
    """The value ``name`` holds (lower case), one of its choices; its default when unset."""
    setting = SETTINGS[name]
    value = _raw(name)
    if value is None:
        return str(setting.default)
    if value.lower() not in setting.choices:
        raise _refuse(setting, value)
    return value.lower()


def env_ports(name: str) -> list[int] | None:
    """The ports ``name`` lists; None when unset."""
    setting = SETTINGS[name]
    value = os.environ.get(name)
    if value is None:
        return None
    ports = []
    for part in value.split(","):
        if part.strip():
            try:
                port = int(part)
            except ValueError:
                raise _refuse(setting, value) from None
            if not 1 <= port <= 65535:
                raise _refuse(setting, value)
            ports.append(port)
    return ports


def env_folder(name: str) -> Path | None:
    """The folder ``name`` names (made later, when missing), None when unset; refused when
    something else is there or the system refuses the name (too long)."""
    from models.host.registry import FolderSettingError, check_folder

    value = _raw(name)
    if value is None:
        return None
    try:
        return check_folder(Path(value).expanduser(), name)
    except FolderSettingError as exc:
        raise EnvSettingError(str(exc)) from None


def env_program(name: str) -> Path | None:
    """The executable file ``name`` names, None when unset or empty (none)."""
    value = _raw(name)
    if value is None:
        return None
    path = Path(value).expanduser()
    try:
        usable = stat.S_ISREG(path.stat().st_mode) and os.access(path, os.X_OK)
    except OSError:
        usable = False
    if not usable:
        raise _refuse(SETTINGS[name], value)
    return path


def env_text(name: str) -> str | None:
    """The text ``name`` holds (as set), None when unset."""
    SETTINGS[name]                      # a name not in the table is a programming error
    return os.environ.get(name)


def check_all() -> list[str]:
    """One line for each ``MIRAGE_*`` variable set to a value out of its range (``mirage-tui
    config`` shows them)."""
    problems = []
    readers = {"seconds": env_seconds, "count": env_count, "choice": env_choice,
               "ports": env_ports, "folder": env_folder, "program": env_program}
    for setting in SETTINGS.values():
        reader = readers.get(setting.kind)
        if reader is None:
            continue
        try:
            reader(setting.name)
        except EnvSettingError as exc:
            problems.append(str(exc))
    return problems
