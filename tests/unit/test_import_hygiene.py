"""The layering ``mirage_tui -> engine -> models``, never backwards: engine/ and models/ stay
headless (importing them never pulls in textual), no layer imports one above it, no import cycle
between the project's modules; inside engine/, the packages point one way (store <- datasets <-
retrieval <- runs <- results <- arena); and all SQL is in engine/store/ (testkit/sql_finder.py's
rule: statement literals and calls, sqlite-utils tables, raw connections)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.imports import describe_cycles, find_modules, import_cycles, import_graph, imports_of
from testkit.paths import ROOT
from testkit.sql_finder import raw_sql, sql_outside_the_store

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


# --------------------------------------------------------------------------- the engine's arrows

# engine's packages, bottom first: each may import those before it, never one after it
ENGINE_LAYERS = ("store", "datasets", "retrieval", "runs", "results", "arena")


def engine_arrows_against_the_order(root) -> list[str]:
    """``module:line imports target`` for each import in engine/ that points up the layer order:
    a package importing one after it, the store importing anything of engine's but itself, or
    a shared top-level module (jobs, stats, metrics, ...) importing a layered package.
    TYPE_CHECKING imports count too: the arrow is about what a module knows of."""
    def layer(name: str) -> str:
        parts = name.split(".")
        return parts[1] if len(parts) > 1 else ""

    bad = []
    for module in find_modules(root, ["engine"]).values():
        own = layer(module.name)
        for imp in imports_of(module):
            if imp.top != "engine" or layer(imp.base) in ("", own):
                continue
            target = layer(imp.base)
            if own == "store":
                ok = False
            elif own in ENGINE_LAYERS:
                ok = target not in ENGINE_LAYERS or \
                    ENGINE_LAYERS.index(target) < ENGINE_LAYERS.index(own)
            else:
                ok = target not in ENGINE_LAYERS or target == "store"
            if not ok:
                bad.append(f"{module.path.relative_to(root)}:{imp.line} imports {imp.base}")
    return sorted(set(bad))


def test_engine_packages_point_one_way():
    bad = engine_arrows_against_the_order(ROOT)
    assert not bad, ("engine's packages import only those below them (" +
                     " <- ".join(ENGINE_LAYERS) + "; shared modules only store):\n" +
                     "\n".join(bad))


def test_arrow_checker_sees_an_upward_import(tmp_path):
    _package(tmp_path, {
        "engine/__init__.py": "", "engine/store/__init__.py": "",
        "engine/store/runs.py": "from engine.jobs import Job\n",
        "engine/runs/__init__.py": "", "engine/results/__init__.py": "",
        "engine/runs/a.py": "def f():\n    from engine.results import b\n",
        "engine/results/b.py": "from engine.runs import a\nfrom engine.store import runs\n",
        "engine/jobs.py": "from engine.runs import a\n",
        "engine/stats.py": "from engine.store import runs\n",
    })
    assert engine_arrows_against_the_order(tmp_path) == [
        "engine/jobs.py:1 imports engine.runs",
        "engine/runs/a.py:2 imports engine.results",
        "engine/store/runs.py:1 imports engine.jobs",
    ]


# --------------------------------------------------------------------------- SQL in the store

def test_all_sql_is_in_the_store():
    bad = sql_outside_the_store(ROOT)
    assert not bad, ("SQL belongs in engine/store/ (a function named for what it reads or "
                     "writes):\n" + "\n".join(bad))


def test_sql_finder_sees_calls_tables_and_connections(tmp_path):
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "x.py").write_text(
        'rows = store.query("SELECT 1")\n'
        'db["runs"].insert({})\n'
        'store.db["items"].upsert({})\n'
        'conn = store.conn\n'
        'self.query_one("#x")\n', encoding="utf-8")
    assert raw_sql([tmp_path / "engine" / "x.py"], tmp_path) == [
        "engine/x.py:1: .query(...)", "engine/x.py:1: SELECT 1",
        "engine/x.py:2: db['runs']", "engine/x.py:3: db['items']", "engine/x.py:4: .conn"]


# --------------------------------------------------------------------------- package exports

def _from_imports(root) -> list[tuple[Path, str, set[str]]]:
    """Every ``from module import names`` of the project's code, tests, benchmarks and scripts:
    (the importing file, the module, the names), relative imports resolved. Each file is parsed
    once for all packages (parsing them again per package took half a minute)."""
    found = []
    for top in ("engine", "models", "mirage_tui", "tests", "benchmarks", "scripts"):
        for path in (root / top).rglob("*.py"):
            here = path.relative_to(root).parent.parts
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ImportFrom):
                    continue
                module = node.module or ""
                if node.level:          # relative: from the importing module's package
                    base = here[:len(here) - node.level + 1]
                    module = ".".join(base + ((module,) if module else ()))
                found.append((path, module, {alias.name for alias in node.names}))
    return found


def _imported_through(imports, root, package: str) -> set[str]:
    """The names some module outside ``package`` imports with ``from package import name``."""
    folder = root.joinpath(*package.split("."))
    return {name for path, module, names in imports
            if module == package and folder not in path.parents for name in names}


def test_package_exports_are_what_other_packages_import():
    """A package's ``__all__`` lists what others import through it, nothing else: an export
    list nobody uses only hides where a name lives."""
    unused, imports = [], _from_imports(ROOT)
    for init in sorted(ROOT.glob("*/**/__init__.py")):
        if init.parts[len(ROOT.parts)] not in PACKAGES:
            continue
        tree = ast.parse(init.read_text(encoding="utf-8"))
        exported = next((ast.literal_eval(node.value) for node in tree.body
                         if isinstance(node, ast.Assign)
                         and any(getattr(t, "id", None) == "__all__" for t in node.targets)), [])
        package = ".".join(init.parent.relative_to(ROOT).parts)
        used = _imported_through(imports, ROOT, package)
        unused += [f"{package}.{name}" for name in exported if name not in used]
    assert not unused, "exported but imported through the package by no one:\n" + \
        "\n".join(unused)


# --------------------------------------------------------------------------- folder sizes

MAX_MODULES_PER_FOLDER = 20


def crowded_folders(root, packages=PACKAGES, limit: int = MAX_MODULES_PER_FOLDER) -> list[str]:
    """``folder: n modules`` for each source folder (a package or any folder below one) that
    holds more than ``limit`` modules of its own (.py files, ``__init__.py`` included)."""
    crowded = []
    for package in packages:
        for folder in sorted({root / package, *(p for p in (root / package).rglob("*")
                                                if p.is_dir())}):
            if "__pycache__" in folder.parts:
                continue
            n = len(list(folder.glob("*.py")))
            if n > limit:
                crowded.append(f"{folder.relative_to(root).as_posix()}: {n} modules")
    return crowded


def test_no_source_folder_holds_more_than_20_modules():
    crowded = crowded_folders(ROOT)
    assert not crowded, (f"a source folder holds at most {MAX_MODULES_PER_FOLDER} modules; "
                         "group these by idea into subpackages:\n" + "\n".join(crowded))


def test_folder_counter_sees_a_crowded_subfolder(tmp_path):
    _package(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "",
                        **{f"pkg/sub/m{i}.py": "" for i in range(3)},
                        "pkg/sub/data.json": "{}"})
    assert crowded_folders(tmp_path, ["pkg"], limit=3) == ["pkg/sub: 4 modules"]
    assert crowded_folders(tmp_path, ["pkg"], limit=4) == []
