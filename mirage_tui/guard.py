"""Stop early, in one line, when ``engine`` or ``models`` is not mirage-tui's own.

The project's top-level packages have generic names: a pip-installed ``models``, or a folder
``engine/`` in the current directory, would be imported in place of ours and fail far from the
cause. :func:`shadowing_problem` finds where each name resolves without importing it, and
checks that it is the package beside ``mirage_tui/`` carrying the ``MIRAGE_TUI_PACKAGE``
marker line in its ``__init__.py``.

Standard library only: this module must never import engine or models.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

PACKAGES = ("engine", "models")
MARKER = "MIRAGE_TUI_PACKAGE"
HOME = Path(__file__).resolve().parent  # this mirage_tui/; ours are its siblings


def shadowing_problem(names: tuple[str, ...] = PACKAGES, home: Path = HOME) -> str | None:
    """The first of names that is not mirage-tui's own package, said in one line, or None."""
    for name in names:
        problem = _problem(name, home)
        if problem:
            return problem
    return None


def _problem(name: str, home: Path) -> str | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:  # e.g. a module in sys.modules without a spec
        return f"the module {name!r} cannot be looked up ({exc}); reinstall mirage-tui"
    if spec is None:
        return f"the module {name!r} is missing (expected beside {home}); reinstall mirage-tui"
    where = _location(spec)
    if where is None or where.name != "__init__.py" or where.parent != (home.parent / name).resolve():
        return (f"the module {name!r} is {where or spec.origin or 'built in'}, not mirage-tui's "
                f"own (expected beside {home}); rename or remove it, or run from another "
                "directory")
    if not _marked(where, name):
        return (f"the module {name!r} is {where}, not mirage-tui's own (it lacks the {MARKER} "
                f"line: another package may have been installed over it); reinstall mirage-tui")
    return None


def _location(spec) -> Path | None:
    """The file a spec loads from, or for a namespace package its first folder."""
    if spec.has_location and spec.origin:
        return Path(spec.origin).resolve()
    folders = list(spec.submodule_search_locations or ())
    return Path(folders[0]).resolve() if folders else None


def _marked(init: Path, name: str) -> bool:
    """Whether the __init__.py has the top-level line ``MIRAGE_TUI_PACKAGE = "<name>"``."""
    try:
        tree = ast.parse(init.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return False
    return any(isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
               and node.value.value == name
               and any(isinstance(t, ast.Name) and t.id == MARKER for t in node.targets)
               for node in tree.body)
