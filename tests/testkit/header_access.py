"""The scan behind the header hygiene tests (``tests/unit/test_run_header_access.py``,
``tests/unit/test_arena_header_access.py``): reads of a header by key, or of its JSON, outside
the header's own module.

It looks (AST) at expressions that name a header: a name or attribute with ``header`` in it
(``header``, ``run_header``, ``run.header``, ``info.header``), ``X["header"]`` and
``X.get("header")`` (a report's JSON). On those it refuses a subscript, a ``.get`` /
``.setdefault`` / ``.pop`` or an ``in`` test with one of the header's keys (what its typed
record reads: ``json_keys()``), and ``json.loads`` / ``json_column`` of one. Keys the header
has not are other headers' (an export's ``rows``, an HTTP response's ``retry-after``) and pass."""

from __future__ import annotations

import ast
from typing import Collection

from testkit.keyed_reads import keyed_read
from testkit.paths import sources

PACKAGES = ("engine", "mirage_tui", "models")
READERS = {"loads", "json_column"}


def _names_a_header(node: ast.AST) -> bool:
    """Whether ``node`` is an expression that names a header (module docstring)."""
    if isinstance(node, ast.Name):
        return "header" in node.id.lower()
    if isinstance(node, ast.Attribute):
        return "header" in node.attr.lower()
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in ("header",
                                                                            "run_header")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "get" and node.args:
        first = node.args[0]
        return isinstance(first, ast.Constant) and first.value in ("header", "run_header")
    if isinstance(node, ast.BoolOp):
        return any(_names_a_header(v) for v in node.values)
    return False


def keyed_header_reads(source: str, keys: Collection[str], path: str = "<source>") -> list[str]:
    """``path:line text`` of each read of a header by one of ``keys``, or of its JSON (module
    docstring), by line."""
    def is_key(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and node.value in keys

    found = []
    for node in ast.walk(ast.parse(source)):
        hit = keyed_read(node, _names_a_header, is_key)
        if not hit and isinstance(node, ast.Call):          # json.loads(header), json_column(…)
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            hit = called in READERS and any(_names_a_header(a) for a in node.args)
        if hit:
            found.append((node.lineno, f"{path}:{node.lineno} {ast.unparse(node)}"))
    return [text for _, text in sorted(found, key=lambda hit: hit[0])]


def keyed_reads_outside(keys: Collection[str], allowed: tuple[str, ...]) -> list[str]:
    """Every keyed read (:func:`keyed_header_reads`) in the project's modules but those under
    ``allowed`` (paths or folders, from the repository root)."""
    return [hit for rel, text in sources(PACKAGES) if not rel.startswith(allowed)
            for hit in keyed_header_reads(text, keys, rel)]
