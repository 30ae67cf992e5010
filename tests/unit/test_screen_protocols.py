"""The mixins of the app keep to their hosts' Protocols, and mypy holds them to it.

Each mixin (a plain class mixed into a screen or the app, found as
``test_screen_mixins.mixins`` finds them) derives, for the type checker only, from a ``…Host``
Protocol that declares what it uses of its host (:mod:`mirage_tui.screens.hosts`). mypy,
run on the mixins' modules alone (the rest of the project, Textual and the engine skipped:
imported names are ``Any``, so it takes a second or two), finds no error; a host name the
Protocol does not declare is one, as the probe below shows with the same settings. And each
host has every name its mixins' Protocols declare, so that a Protocol cannot promise what the
screen lacks.
"""

from __future__ import annotations

import ast
import inspect
import os
import textwrap
from pathlib import Path

from mypy import api as mypy_api

from testkit.paths import ROOT
from test_screen_mixins import _app_modules, mixins

MYPY_ARGS = [
    "--follow-imports=skip",        # only the files named: Textual, the engine … are Any
    "--ignore-missing-imports",
    "--check-untyped-defs",         # a method without annotations is checked too
    "--no-error-summary", "--show-error-codes", "--no-color-output",
    f"--cache-dir={os.devnull}",    # nothing written into the tree
    # a mixin's super().refresh_bindings() reaches the Textual class after it at run time,
    # never the Protocol's declaration, which is all mypy sees of the host
    "--disable-error-code=safe-super",
]
HOSTS = ROOT / "mirage_tui" / "screens" / "hosts.py"
COMMANDS = ROOT / "mirage_tui" / "commands.py"     # the palette's PaletteApp


def mypy(*files: Path) -> tuple[str, int]:
    out, err, status = mypy_api.run([*MYPY_ARGS, *map(str, files)])
    return out + err, status


def mixin_files() -> list[Path]:
    return sorted({Path(inspect.getsourcefile(m)) for m in mixins()})


def host_protocol(mixin: type) -> type:
    """The Protocol the mixin derives from for the type checker: its base ``_Host``, which its
    module's ``if TYPE_CHECKING:`` block names."""
    module = inspect.getmodule(mixin)
    tree = ast.parse(inspect.getsource(module))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == mixin.__name__)
    assert [ast.unparse(b) for b in cls.bases] == ["_Host"], \
        f"{mixin.__name__} derives from {[ast.unparse(b) for b in cls.bases]}, not _Host"
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and ast.unparse(stmt.targets[0]) == "_Host":
                    return getattr(module, ast.unparse(stmt.value))
    raise AssertionError(f"{module.__name__} names no _Host under TYPE_CHECKING")


def protocol_members(protocol: type) -> set[str]:
    """The names a Protocol declares, its Protocol bases' too."""
    names: set[str] = set()
    for base in protocol.__mro__:
        if base.__module__.startswith("mirage_tui"):
            names |= set(base.__dict__.get("__annotations__", {}))
            names |= {n for n in vars(base) if not n.startswith("_")}
    return names


def lacking(host: type, wanted: set[str], project: str = "mirage_tui") -> list[str]:
    """The names of ``wanted`` that ``host`` neither has as a class attribute (a method, a
    property, a message class, Textual's own) nor assigns to ``self`` in a class of
    ``project`` among its bases (instance state)."""
    assigned: set[str] = set()
    for base in host.__mro__:
        if base.__module__.startswith(project):
            for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(base)))):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id == "self" and isinstance(node.ctx, ast.Store):
                    assigned.add(node.attr)
    return sorted(n for n in wanted if not hasattr(host, n) and n not in assigned)


def test_every_mixin_derives_from_a_host_protocol_for_the_type_checker():
    found = {m.__name__: host_protocol(m) for m in mixins()}
    assert {"AppRuns", "WorkbenchAccess"} <= set(found), sorted(found)    # the scan sees them
    not_protocols = [n for n, p in found.items() if not getattr(p, "_is_protocol", False)]
    assert not not_protocols
    # at run time the base is object: no Protocol in a screen's bases
    assert all(m.__bases__ == (object,) for m in mixins())


def test_mypy_finds_every_host_name_a_mixin_uses_in_its_protocol():
    files = mixin_files()
    assert {"app_runs.py", "base.py"} <= {f.name for f in files}, files
    out, status = mypy(HOSTS, COMMANDS, *files)
    assert (status, out) == (0, "")


def test_mypy_reports_a_host_name_the_protocol_does_not_declare(tmp_path):
    probe = tmp_path / "probe_mixin.py"
    probe.write_text(textwrap.dedent('''
        from __future__ import annotations

        from typing import TYPE_CHECKING

        from mirage_tui.screens.base import WorkbenchAccessHost

        if TYPE_CHECKING:
            _Host = WorkbenchAccessHost
        else:
            _Host = object


        class Probe(_Host):
            def declared(self) -> None:
                self.notify(f"{self.is_current}, {self.active_bindings}")
                self.set_interval(1.0)

            def undeclared(self):
                return self.store           # BaseScreen has it; the Protocol does not


        class Bare:
            def no_protocol(self):
                return self.app
        '''))
    out, status = mypy(HOSTS, ROOT / "mirage_tui" / "screens" / "base.py", probe)
    errors = sorted(line.split(": error: ")[1] for line in out.splitlines() if ": error: " in line)
    assert status == 1
    assert errors == [
        '"Bare" has no attribute "app"  [attr-defined]',
        '"Probe" has no attribute "store"  [attr-defined]',
    ], out


def test_every_host_has_what_its_mixins_protocols_declare():
    from textual.dom import DOMNode

    hosts = {cls for module in _app_modules() for cls in vars(module).values()
             if inspect.isclass(cls) and issubclass(cls, DOMNode)
             and cls.__module__.startswith("mirage_tui")}
    missing, checked = {}, 0
    for mixin in mixins():
        wanted = protocol_members(host_protocol(mixin))
        for host in (h for h in hosts if mixin in h.__mro__):
            checked += 1
            if lacking(host, wanted):
                missing[f"{host.__name__} ({mixin.__name__})"] = lacking(host, wanted)
    assert checked >= 7
    assert not missing, f"hosts without what their mixins' Protocols declare: {missing}"


class HalfAScreen:
    """A host with some of what WorkbenchAccess needs: whether it is shown and a timer, no
    bindings."""

    def __init__(self):
        self.is_current = True

    def set_interval(self, interval, callback=None):
        return None


def test_the_host_check_sees_what_a_host_lacks():
    from mirage_tui.screens.base import WorkbenchAccessHost

    wanted = protocol_members(WorkbenchAccessHost)
    assert {"is_current", "set_interval", "active_bindings", "app", "notify"} <= wanted
    lacks = lacking(HalfAScreen, wanted, project=__name__)
    assert "active_bindings" in lacks and "app" in lacks and "notify" in lacks
    assert "is_current" not in lacks and "set_interval" not in lacks
