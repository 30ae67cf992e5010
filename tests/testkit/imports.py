"""Who imports whom among a project's own modules, read from the source (nothing is imported).

Every ``import`` and ``from ... import`` statement counts, lazy ones inside functions too;
relative imports are resolved against the importing module's package; statements inside an
``if TYPE_CHECKING:`` block are marked (the graph leaves them out: they never run). Imports by
string (``importlib.import_module("...")``) are not seen.

``from pkg import name`` is an edge to ``pkg.name`` when that is one of the modules, else to
``pkg``. ``import a.b.c`` is an edge to ``a.b.c`` (or the nearest of its parents that is a
module). An import cycle is a strongly connected component of more than one module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping


@dataclass(frozen=True)
class Import:
    """One imported name as a statement writes it, made absolute."""

    source: str          # the importing module
    target: str          # "a.b" for ``import a.b`` and ``from a import b``; "a" for ``from a import *``
    base: str            # the module named by the statement: "a.b" / "a"
    line: int
    type_checking: bool  # inside an ``if TYPE_CHECKING:`` block

    @property
    def top(self) -> str:
        """The top-level package the import reaches into."""
        return self.base.split(".")[0]


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool  # an __init__.py

    @property
    def package(self) -> str:
        """The package that relative imports in this module start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def find_modules(root: Path, packages: Iterable[str]) -> dict[str, Module]:
    """Every .py file under root/<package> for each package, by dotted module name."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if "__pycache__" in parts:
                continue
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            modules[name] = Module(name, path, is_package)
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _absolute(module: Module, level: int, name: str | None) -> str:
    """The module a ``from <dots><name> import`` statement in module names."""
    if not level:
        return name or ""
    parts = module.package.split(".")
    if level - 1 >= len(parts):  # beyond the top-level package: Python refuses it
        return "." * level + (name or "")
    base = parts[:len(parts) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(module: Module) -> list[Import]:
    """The imports of one module, in source order."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))
    found = []
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, in_tc = stack.pop()
        if isinstance(node, ast.Import):
            found += [Import(module.name, alias.name, alias.name, node.lineno, in_tc)
                      for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node.level, node.module)
            found += [Import(module.name, base if alias.name == "*" else f"{base}.{alias.name}",
                             base, node.lineno, in_tc)
                      for alias in node.names]
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack += [(child, True) for child in node.body]
            stack += [(child, in_tc) for child in node.orelse]
        else:
            stack += [(child, in_tc) for child in ast.iter_child_nodes(node)]
    return sorted(found, key=lambda imp: (imp.line, imp.target))


def _resolve(imp: Import, modules: Mapping[str, Module]) -> str | None:
    """The module an import is an edge to, or None when it leaves the project."""
    name = imp.target if imp.target in modules else imp.base
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(modules: Mapping[str, Module]) -> dict[str, dict[str, int]]:
    """module -> {imported module: first line that imports it}, TYPE_CHECKING imports left out."""
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for name, module in modules.items():
        for imp in imports_of(module):
            target = _resolve(imp, modules)
            if imp.type_checking or target is None or target == name:
                continue
            graph[name].setdefault(target, imp.line)
    return graph


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one node (iteratively: no
    recursion limit), each sorted, sorted by their first node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    work: list[tuple[str, Iterator[str]]] = []  # the depth-first path, each with its successors

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        work.append((v, iter(sorted(graph.get(v, ())))))

    for start in sorted(graph):
        if start in index:
            continue
        visit(start)
        while work:
            v, successors = work[-1]
            for w in successors:
                if w not in index:
                    visit(w)
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:  # every successor done: v is finished
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return sorted(components)


def import_cycles(root: Path, packages: Iterable[str]) -> list[list[str]]:
    """The import cycles among the modules of the given packages under root."""
    return strongly_connected(import_graph(find_modules(root, packages)))


def describe_cycles(root: Path, packages: Iterable[str]) -> str:
    """One paragraph a cycle: its modules, then each import inside it with file:line."""
    modules = find_modules(root, packages)
    graph = import_graph(modules)
    lines = []
    for component in strongly_connected(graph):
        lines.append(f"cycle of {len(component)} modules: {', '.join(component)}")
        members = set(component)
        for source in component:
            path = modules[source].path.relative_to(root)
            lines += [f"    {source} -> {target}  ({path}:{line})"
                      for target, line in sorted(graph[source].items()) if target in members]
    return "\n".join(lines)
