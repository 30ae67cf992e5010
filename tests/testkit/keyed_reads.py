"""Reads by key, found in the source (AST; nothing is imported): what the hygiene scans of the
typed records (the run header, the run report) refuse outside their one reader and writer."""

from __future__ import annotations

import ast
from typing import Callable

Test = Callable[[ast.AST], bool]


def keyed_read(node: ast.AST, names: Test, is_key: Test) -> bool:
    """Whether ``node`` reads an expression ``names`` accepts by a key ``is_key`` accepts:
    ``X[k]``, ``X.get(k)`` / ``X.setdefault(k, ...)`` / ``X.pop(k)``, ``k in X`` (or
    ``not in``)."""
    if isinstance(node, ast.Subscript):
        return names(node.value) and is_key(node.slice)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("get", "setdefault", "pop") and node.args:
        return names(node.func.value) and is_key(node.args[0])
    if isinstance(node, ast.Compare) and is_key(node.left):
        return any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and any(
            names(c) for c in node.comparators)
    return False
