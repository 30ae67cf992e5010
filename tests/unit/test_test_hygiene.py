"""The tests' own rules: a test file is named by the topic it tests, never by an issue number
(``test_h18_units.py``, ``test_app_i27_explained.py``), and no test asserts a wall-clock bound
(``assert elapsed < 0.8``): on a loaded 2-core machine such a bound fails a test whose
behaviour is fine. A test shows order and events instead (a held answer, a barrier, a log
line); speed targets are measured in ``benchmarks/``.

Allowed, on purpose: a lower bound (``elapsed >= retry_after``: a machine under load only makes
a wait longer, so it never fails for that reason) and a deadline that ends a wait for a test
that hung (``time.monotonic() < deadline``: both sides are clock readings). The scan is simple:
it follows clock readings through assignments within a function, not through calls or
containers; it found 12 of the 14 bounds this rule replaced (not ``took < 10`` where ``took``
came back from a helper, nor a bound checked by ``if`` into a list)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
CLOCKS = {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns"}
ISSUE_NAME = re.compile(r"(?:^|_)(?:[a-z]\d{1,3}|issue_?\d+|stop_?\d+|finding_?\d+)(?:_|$)")
"""A part of a file name such as ``h18``, ``i27``, ``issue35`` or ``stop38``."""


def python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__snapshots__" not in p.parts)


def issue_numbered(stem: str) -> bool:
    return bool(ISSUE_NAME.search(stem.lower()))


def test_the_name_rule_finds_issue_numbers_and_spares_topics():
    for stem in ("test_h18_units", "test_app_i27_explained", "test_config_runs_cli_h18",
                 "test_issue35_exports", "test_stop_38"):
        assert issue_numbered(stem), stem
    for stem in ("test_e2e_xquad", "test_metric_units", "test_models_embedders",
                 "test_app_symbols_explained", "test_html_svg"):
        assert not issue_numbered(stem), stem


def test_no_test_file_is_named_by_an_issue_number():
    named = [str(p.relative_to(TESTS)) for p in python_files() if issue_numbered(p.stem)]
    assert named == [], f"name these by the topic they test: {named}"


def _is_clock_call(node: ast.AST) -> bool:
    """``time.monotonic()``, ``perf_counter()`` and the like."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in CLOCKS:
        return False
    # ``time()`` alone or ``time.time()``; ``x.time()`` of anything else is not a clock
    return name != "time" or (isinstance(func, ast.Attribute)
                              and getattr(func.value, "id", None) == "time")


class _Scope:
    """Names bound (anywhere in a function, or at module level) to a clock reading or to
    arithmetic on one: ``started``, ``elapsed``, ``deadline``."""

    def __init__(self, tree: ast.AST):
        self.names: set[str] = set()
        changed = True
        while changed:                      # ``a = monotonic(); b = monotonic() - a; ...``
            changed = False
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                    targets = [node.target]
                else:
                    continue
                if node.value is None or not self.clocky(node.value):
                    continue
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and name.id not in self.names:
                            self.names.add(name.id)
                            changed = True

    def clocky(self, node: ast.AST) -> bool:
        return any(_is_clock_call(n) or (isinstance(n, ast.Name) and n.id in self.names)
                   for n in ast.walk(node))


def _upper_bounds(tree: ast.AST) -> list[tuple[int, str]]:
    """The comparisons in ``assert`` statements (and in ``if …: pytest.fail``) that put an upper
    bound on a clock reading: one side a clock, the other not, the clock side the smaller."""
    found = []
    scopes = [tree, *(n for n in ast.walk(tree)
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    module = _Scope(tree)
    for scope in scopes:
        names = _Scope(scope) if scope is not tree else module
        checks = []
        for node in ast.walk(scope):
            if isinstance(node, ast.Assert):
                checks.append((node.test, False))
            elif isinstance(node, ast.If) and any(
                    isinstance(n, ast.Attribute) and n.attr == "fail"
                    for s in node.body for n in ast.walk(s)):
                checks.append((node.test, True))          # the condition to fail on
        for check, fails in checks:
            for cmp in (n for n in ast.walk(check) if isinstance(n, ast.Compare)):
                sides = [cmp.left, *cmp.comparators]
                for op, left, right in zip(cmp.ops, sides, sides[1:]):
                    lc, rc = names.clocky(left), names.clocky(right)
                    if lc == rc:
                        continue                  # no clock, or a deadline (both clocks)
                    if fails:
                        lc, rc = rc, lc           # ``if elapsed > 10: fail`` bounds it above
                    if (lc and isinstance(op, (ast.Lt, ast.LtE))) or \
                            (rc and isinstance(op, (ast.Gt, ast.GtE))):
                        found.append((cmp.lineno, ast.unparse(cmp)))
    return sorted(set(found))


def test_the_clock_rule_finds_upper_bounds_and_spares_waits():
    bad = '''
import time
def test_a():
    started = time.monotonic()
    work()
    elapsed = time.monotonic() - started
    assert elapsed < 0.8
def test_b():
    t0 = time.perf_counter()
    assert 2.0 > time.perf_counter() - t0
def test_c(x):
    start = time.monotonic()
    if time.monotonic() - start > 10:
        pytest.fail("slow")
'''
    assert [line for line, _ in _upper_bounds(ast.parse(bad))] == [7, 10, 13]
    fine = '''
import time
def test_d():
    started = time.monotonic()
    deadline = time.monotonic() + 30
    while not done():
        assert time.monotonic() < deadline, "never happened"
    assert time.monotonic() - started >= 0.2          # a lower bound: waited at least
    assert len(items) < 3 and clock.time() < 5        # not the time module's clock
'''
    assert _upper_bounds(ast.parse(fine)) == []


def test_no_test_asserts_a_wall_clock_bound():
    found = [f"{path.relative_to(TESTS)}:{line}: {text}" for path in python_files()
             for line, text in _upper_bounds(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == [], ("an upper bound on wall-clock time fails on a loaded machine; check "
                         "an order or an event instead, and measure the speed in benchmarks/:\n"
                         + "\n".join(found))


def test_the_headless_tests_import_no_textual():
    """tests/engine and tests/models test the headless packages: none imports textual (the
    app's screens are tested under tests/tui)."""
    found = []
    for folder in ("engine", "models"):
        for path in sorted((TESTS / folder).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                if any(n == "textual" or n.startswith("textual.") for n in names):
                    found.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert not found, f"headless tests importing textual: {found}"
