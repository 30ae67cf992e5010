"""The screens' mixins keep to a written contract: a mixin (a plain class mixed into a screen,
a widget or the app) reads of its host only public names, which its docstring lists, never a
private attribute of the host; a feature widget (a screen's part with state of its own) that
declares ``KEYS`` has them bound by a screen, so that they act wherever the focus is; and no
two classes of the app share a name (two ``RunKeys`` once did)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap
from collections import Counter

from testkit.paths import ROOT


def _app_modules():
    import mirage_tui

    for info in pkgutil.walk_packages(mirage_tui.__path__, "mirage_tui."):
        if not info.name.startswith("mirage_tui.cli"):
            yield importlib.import_module(info.name)


def mixins() -> set[type]:
    """Classes of mirage_tui that are no Textual node but are bases of one."""
    from textual.dom import DOMNode

    found = set()
    for module in _app_modules():
        for cls in vars(module).values():
            if inspect.isclass(cls) and issubclass(cls, DOMNode) \
                    and cls.__module__.startswith("mirage_tui"):
                found |= {b for b in cls.__mro__[1:] if b.__module__.startswith("mirage_tui")
                          and not issubclass(b, DOMNode)}
    return found


def private_reads(source: str, defined: set[str]) -> list[str]:
    """The ``self._name`` the class in ``source`` reads that it neither assigns nor finds in
    ``defined`` (what it and its own bases define)."""
    tree = ast.parse(textwrap.dedent(source)).body[0]
    own = set(defined)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            own.add(node.name)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "self" and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
    return sorted({node.attr for node in ast.walk(tree)
                   if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                   and node.value.id == "self" and node.attr.startswith("_")
                   and not node.attr.startswith("__") and node.attr not in own})


def test_no_mixin_reads_a_private_attribute_of_its_host():
    found = {}
    for mixin in mixins():
        defined = {name for base in mixin.__mro__ if base.__module__.startswith("mirage_tui")
                   for name in vars(base)}
        found[f"{mixin.__module__}.{mixin.__name__}"] = private_reads(
            inspect.getsource(mixin), defined)
    assert {"mirage_tui.app_runs.AppRuns",                  # the scan sees the mixins
            "mirage_tui.screens.base.WorkbenchAccess"} <= set(found), sorted(found)
    bad = {name: reads for name, reads in found.items() if reads}
    assert not bad, f"mixins reading their host's private attributes: {bad}"


def test_the_scan_sees_a_private_read_of_the_host():
    source = """
        class Peeks:
            def look(self):
                return self._secret + self._mine + self.public + self._helper()
            def _helper(self):
                self._mine = 2
    """
    assert private_reads(source, set()) == ["_secret"]


def test_a_feature_widgets_keys_are_bound_by_a_screen():
    from textual.screen import Screen
    from textual.widget import Widget

    classes = {cls for module in _app_modules() for cls in vars(module).values()
               if inspect.isclass(cls) and cls.__module__.startswith("mirage_tui")}
    parts = {c for c in classes if issubclass(c, Widget) and not issubclass(c, Screen)
             and "KEYS" in vars(c)}
    screens = [c for c in classes if issubclass(c, Screen)]
    assert {"LeaderboardJobs", "ViewExport", "RunManage"} <= {p.__name__ for p in parts}
    unbound = sorted(p.__name__ for p in parts
                     if not any(all(key in s.BINDINGS for key in p.KEYS) for s in screens))
    assert not unbound, f"feature widgets whose keys no screen binds: {unbound}"


def test_no_two_classes_of_the_app_share_a_name():
    names = Counter()
    for path in sorted((ROOT / "mirage_tui").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                names[node.name] += 1
    assert not [n for n, k in names.items() if k > 1], names.most_common(3)
