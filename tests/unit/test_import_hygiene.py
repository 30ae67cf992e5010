"""The layering ``mirage_tui -> engine -> models``, never backwards: engine/ and models/ stay
headless (importing them never pulls in textual), no layer imports one above it, no import cycle
between the project's modules, and no raw SQL in the UI layer (the engine owns the store)."""

import subprocess
import sys

import pytest

from testkit.imports import describe_cycles, find_modules, import_cycles, import_graph, imports_of
from testkit.paths import ROOT
from testkit.sql_finder import raw_sql

PACKAGES = ("mirage_tui", "engine", "models")


def _modules_of(package: str) -> list[str]:
    return sorted(find_modules(ROOT, [package]))


def _imported_in_fresh_interpreter(package: str, tops: tuple[str, ...]) -> list[str]:
    """Import every module of package in a new interpreter; the modules of tops it loaded."""
    modules = _modules_of(package)
    assert modules, f"{package} has no modules"
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {tops!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return [name for name in out.stdout.strip().split(",") if name]


@pytest.mark.parametrize("package", ["engine", "models"])
def test_package_never_imports_textual(package):
    loaded = _imported_in_fresh_interpreter(package, ("textual",))
    assert loaded == [], f"{package} pulled in: {','.join(loaded)}"


def test_models_never_imports_engine():
    assert _imported_in_fresh_interpreter("models", ("engine", "mirage_tui")) == []


# --------------------------------------------------------------------------- static layering

# what each layer must never import: any statement, lazy ones inside functions and
# TYPE_CHECKING ones included
FORBIDDEN = {
    "engine": ("mirage_tui", "textual"),
    "models": ("engine", "mirage_tui", "textual"),
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layer_never_imports_the_layers_above(package):
    bad = [f"{module.path.relative_to(ROOT)}:{imp.line} imports {imp.target}"
           for module in find_modules(ROOT, [package]).values()
           for imp in imports_of(module) if imp.top in FORBIDDEN[package]]
    assert not bad, f"{package}/ must not import {' or '.join(FORBIDDEN[package])}:\n" + \
        "\n".join(bad)


def test_no_import_cycle_between_the_project_modules():
    assert import_cycles(ROOT, PACKAGES) == [], \
        "import cycles (lazy imports count; `if TYPE_CHECKING:` ones do not):\n" + \
        describe_cycles(ROOT, PACKAGES)


# --------------------------------------------------------------------------- the checker itself

def _package(root, files: dict[str, str]):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_cycle_checker_finds_lazy_relative_and_package_cycles(tmp_path):
    _package(tmp_path, {
        "loop/__init__.py": "from loop.e import E\n\nhelper = 1\n",
        # a -> b at the top, b -> a lazily and relatively: one cycle
        "loop/a.py": "from loop import b\n",
        "loop/b.py": "def f():\n    from .a import x\n    return x\n",
        # `from loop import helper`: helper is no module, so the edge is to loop itself
        "loop/e.py": "from loop import helper\n\nE = helper\n",
        # c -> a only for type checkers: no cycle through c
        "loop/c.py": ("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                      "    from loop import a\nelse:\n    import json\n"),
        "other/__init__.py": "import os\nimport loop.a\n",
    })
    assert import_cycles(tmp_path, ["loop", "other"]) == [["loop", "loop.e"], ["loop.a", "loop.b"]]
    report = describe_cycles(tmp_path, ["loop", "other"])
    assert "cycle of 2 modules: loop.a, loop.b" in report
    assert "loop.b -> loop.a  (loop/b.py:2)" in report


def test_cycle_checker_accepts_an_acyclic_package(tmp_path):
    _package(tmp_path, {
        "tree/__init__.py": "",
        "tree/a.py": "from tree import b\nfrom tree.b import thing\n",
        "tree/b.py": "def f():\n    from . import c\n    return c\n\nthing = 1\n",
        "tree/c.py": ("import typing\n\nif typing.TYPE_CHECKING:\n    from tree import a\n"
                      "from .sub.m import y\n"),
        "tree/sub/__init__.py": "from .m import y\n",
        "tree/sub/m.py": "from ..d import z\ny = z\n",
        "tree/d.py": "import os.path\nz = os.path.sep\n",
    })
    modules = find_modules(tmp_path, ["tree"])
    graph = {name: sorted(targets) for name, targets in import_graph(modules).items()}
    assert graph == {
        "tree": [], "tree.a": ["tree.b"], "tree.b": ["tree.c"], "tree.c": ["tree.sub.m"],
        "tree.d": [], "tree.sub": ["tree.sub.m"], "tree.sub.m": ["tree.d"],
    }
    assert import_cycles(tmp_path, ["tree"]) == []
    assert describe_cycles(tmp_path, ["tree"]) == ""


# --------------------------------------------------------------------------- no SQL in the UI

def test_sql_finder_sees_plain_and_f_string_sql_but_not_prose(tmp_path):
    (tmp_path / "ui.py").write_text(
        '"""SELECT in a docstring is prose."""\n'
        'a = "please select a run"\n'
        'b = store.query("SELECT COUNT(*) "\n'
        '                "FROM runs")\n'
        'c = f"UPDATE {table} SET x = 1"\n'
        'd = f"{n} rows"\n', encoding="utf-8")
    assert raw_sql([tmp_path / "ui.py"], tmp_path, literals_only=True) == [
        "ui.py:3: SELECT COUNT(*) FROM runs", "ui.py:5: UPDATE x SET x = 1"]


def test_mirage_tui_has_no_raw_sql():
    bad = raw_sql(sorted((ROOT / "mirage_tui").rglob("*.py")), ROOT, widget_queries=True)
    assert not bad, "SQL belongs in engine/ (call an engine function instead):\n" + \
        "\n".join(bad)
