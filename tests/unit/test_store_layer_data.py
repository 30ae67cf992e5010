"""Datasets and retrieval talk to SQLite only through their store modules
(``engine/store/datasets.py``, ``labels.py``, ``indexes.py``), which sit at the bottom: they
import no other engine package. And the two packages' arrows point left only
(``store`` ← ``datasets`` ← ``retrieval`` ← ``runs`` ← ``results`` ← ``arena``)."""

import sys

import pytest

from testkit.imports import find_modules, imports_of
from testkit.paths import ROOT
from testkit.sql_finder import raw_sql

STORE_MODULES = ("engine.store.datasets", "engine.store.labels", "engine.store.indexes")
THIRD_PARTY = {"numpy", "sqlite_utils"}


@pytest.mark.parametrize("package", ["datasets", "retrieval"])
def test_no_sql_outside_the_store(package):
    found = raw_sql(sorted((ROOT / "engine" / package).rglob("*.py")), ROOT)
    assert found == [], "SQL belongs in engine/store/:\n" + "\n".join(found)


@pytest.mark.parametrize("name", STORE_MODULES)
def test_a_store_module_imports_only_the_store_and_the_stdlib(name):
    module = find_modules(ROOT, ["engine"])[name]
    bad = [f"{imp.line}: {imp.base}" for imp in imports_of(module)
           if not (imp.base == "engine.store" or imp.base.startswith("engine.store.")
                   or imp.top in THIRD_PARTY or imp.top in sys.stdlib_module_names
                   or imp.top == "__future__")]
    assert bad == [], f"{name} imports beyond the store layer: {', '.join(bad)}"


@pytest.mark.parametrize("package, right", [
    ("datasets", ("retrieval", "runs", "results", "arena")),
    ("retrieval", ("runs", "results", "arena")),
])
def test_arrows_point_left(package, right):
    modules = find_modules(ROOT, [f"engine/{package}"])
    bad = [f"{module.path.relative_to(ROOT)}:{imp.line} imports {imp.base}"
           for module in modules.values() for imp in imports_of(module)
           if imp.base.split(".")[:2] in [["engine", r] for r in right]]
    assert modules and bad == [], "\n".join(bad)
