"""Where a module reaches into SQLite itself, read from the source (nothing is imported).

The store layer (``engine/store/``) is the only place that talks to the database. Anywhere
else these count as SQL:

- a string literal that reads as a statement (``SELECT``, ``INSERT INTO``, ``UPDATE t SET``,
  ``DELETE FROM``, ``CREATE TABLE``); docstrings are prose and do not count, an f-string is one
  literal with its fields as ``x``;
- a call of a connection or store method that runs a statement: ``execute``, ``executemany``,
  ``executescript``, ``query``, ``query_tuples``, ``iterate``, ``query_in``, ``pragma``
  (in ``mirage_tui/`` Textual's ``query``/``query_one`` mean widgets, so only the literals
  and the ``db[...]`` rule apply there);
- a table reached through sqlite-utils, ``db["runs"]`` or ``x.db["runs"]``, or ``.table(...)``;
- ``.conn`` (the raw connection) taken from anything but a thread-local HTTP holder
  (``self._local.conn``).

``PYTHONPATH=tests python3 -m testkit.sql_finder engine/runs`` (from the repository root) lists
what it finds in the folders or files given; with none, everything outside the store.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Iterable, Iterator

SQL = re.compile(r"\b(SELECT\b.*\bFROM|SELECT \d|INSERT INTO|INSERT OR \w+ INTO|UPDATE \w+ SET|"
                 r"DELETE FROM|CREATE TABLE)\b", re.DOTALL)
STATEMENT_CALLS = {"execute", "executemany", "executescript", "query", "query_tuples",
                   "iterate", "query_in", "pragma"}


def string_literals(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, text) of each string literal that is not a docstring; an f-string is one literal
    with its fields as ``x``."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    inside_fstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inside_fstrings.update(id(part) for part in ast.walk(node) if part is not node)
            yield node.lineno, "".join(part.value if isinstance(part, ast.Constant) else "x"
                                       for part in node.values)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings and id(node) not in inside_fstrings):
            yield node.lineno, node.value


def _named_db(node: ast.AST) -> bool:
    return ((isinstance(node, ast.Name) and node.id == "db")
            or (isinstance(node, ast.Attribute) and node.attr == "db"))


def database_access(tree: ast.AST, *, widget_queries: bool = False) -> Iterator[tuple[int, str]]:
    """(line, what) of each reach into the database that is not a string literal."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in STATEMENT_CALLS and not (widget_queries and name == "query"):
                yield node.lineno, f".{name}(...)"
            elif name == "table" and _named_db(node.func.value):
                yield node.lineno, ".table(...)"
        elif (isinstance(node, ast.Subscript) and _named_db(node.value)
              and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            yield node.lineno, f"db[{node.slice.value!r}]"
        elif (isinstance(node, ast.Attribute) and node.attr == "conn"
              and not (isinstance(node.value, ast.Attribute) and node.value.attr == "_local")):
            yield node.lineno, ".conn"


def raw_sql(paths: Iterable[Path], root: Path, *, literals_only: bool = False,
            widget_queries: bool = False) -> list[str]:
    """``file:line: what`` for each SQL literal (and, unless literals_only, each database reach)
    in the given files."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        hits = [(line, " ".join(text.split())[:80]) for line, text in string_literals(tree)
                if SQL.search(text)]
        if not literals_only:
            hits += list(database_access(tree, widget_queries=widget_queries))
        found += [f"{path.relative_to(root)}:{line}: {what}" for line, what in sorted(hits)]
    return found


def sql_outside_the_store(root: Path) -> list[str]:
    """Every reach into the database outside ``engine/store/`` in the project's code."""
    engine = [p for p in sorted((root / "engine").rglob("*.py"))
              if "store" not in p.relative_to(root / "engine").parts[:1]]
    return (raw_sql(engine, root)
            + raw_sql(sorted((root / "models").rglob("*.py")), root)
            + raw_sql(sorted((root / "mirage_tui").rglob("*.py")), root, widget_queries=True))


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[2]     # the repository this kit belongs to
    if not argv:
        found = sql_outside_the_store(root)
    else:
        files = []
        for arg in argv:
            path = Path(arg).resolve()
            files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
        found = raw_sql(files, root, widget_queries=any("mirage_tui" in a for a in argv))
    print("\n".join(found) or "no SQL found")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
