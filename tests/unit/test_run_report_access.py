"""A run's report is read as the typed :class:`engine.results.report.RunReport` (its
attributes), never as its JSON: no module outside ``engine/results/report.py`` reads a report by
string key, and none rebuilds the run header from a report (``RunHeader.from_json(report…)``:
the report holds the typed header). The JSON is written by ``RunReport.as_json`` alone and
handed on as it is (``--json`` prints it, the HTML page embeds it).

The scan (AST, engine/, mirage_tui/ and models/) looks at expressions that name a report: a
name or attribute with ``report`` in it (``report``, ``reports[0]``, ``self.report``), a call
of one (``build_report(...)``) and ``X.as_json()`` of one. On those it refuses a subscript, a ``.get`` / ``.setdefault`` /
``.pop`` or an ``in`` test with a key the report's JSON has (the fields of :class:`RunReport`:
``run``, ``items``, ``systems``, ...), and a ``from_json`` of one or of its parts. It refuses
``as_json()`` of a report kept in a name to be read later (``data = report.as_json()``); passing
it on (to ``json.dumps``, into a page's data) is writing it. Keys no run report has are other
reports' and pass; a module whose "report" is not a run's (an index's retrieval report) is
named in :data:`OTHER_REPORTS`. The parts' own rows (an adaptability row, an estimate) are
still dicts, read by key where they are drawn."""

from __future__ import annotations

import ast
from dataclasses import fields

from testkit.keyed_reads import keyed_read
from testkit.paths import ROOT, sources

from engine.results.report import RunReport

PACKAGES = ("engine", "mirage_tui", "models")
ALLOWED = ("engine/results/report.py",)
OTHER_REPORTS = {
    "mirage_tui/cli/index.py": "an index's retrieval report (engine.retrieval.scores)",
    "engine/retrieval/scores.py": "writes that retrieval report",
}
REPORT_KEYS = frozenset(f.name for f in fields(RunReport))
KEPT = (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.AugAssign)
CARRIED = (ast.IfExp, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.Tuple, ast.List,
           ast.Starred)


def _names_a_report(node: ast.AST) -> bool:
    """Whether ``node`` is an expression that names a report (module docstring)."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = node.id if isinstance(node, ast.Name) else node.attr
        return "report" in name.lower()
    if isinstance(node, ast.BoolOp):
        return any(_names_a_report(v) for v in node.values)
    if isinstance(node, ast.Subscript):             # reports[0], not report["run"]
        return _names_a_report(node.value) and not _report_key(node.slice)
    if not isinstance(node, ast.Call):
        return False
    as_json = isinstance(node.func, ast.Attribute) and node.func.attr == "as_json"
    return _names_a_report(node.func.value if as_json else node.func)   # build_report(...)


def _kept(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether ``node`` ends up in a name (through a conditional, a comprehension, a tuple)."""
    parent = parents.get(node)
    while isinstance(parent, CARRIED):
        parent = parents.get(parent)
    return isinstance(parent, KEPT)


def _report_key(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in REPORT_KEYS


def _of_a_report(node: ast.AST) -> bool:
    """A report, or a part read from one by key (``report["header"]``)."""
    if _names_a_report(node):
        return True
    if isinstance(node, ast.Subscript):
        return _of_a_report(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "get":
        return _of_a_report(node.func.value)
    if isinstance(node, ast.BoolOp):
        return any(_of_a_report(v) for v in node.values)
    return False


def keyed_report_reads(source: str, path: str = "<source>") -> list[str]:
    """``path:line text`` of each read of a run report by key or of its JSON (see above)."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        hit = keyed_read(node, _names_a_report, _report_key)
        if not hit and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "from_json":
                hit = any(_of_a_report(a) for a in node.args)
            elif node.func.attr == "as_json":
                hit = _names_a_report(node.func.value) and _kept(node, parents)
        if hit:
            found.append((node.lineno, f"{path}:{node.lineno} {ast.unparse(node)}"))
    return list(dict(sorted(found, key=lambda hit: (hit[0], len(hit[1])))).values())


def test_no_module_reads_a_run_report_by_key():
    bad = [hit for rel, text in sources(PACKAGES)
           if rel not in ALLOWED and rel not in OTHER_REPORTS
           for hit in keyed_report_reads(text, rel)]
    assert not bad, ("read a run report through engine.results.report.RunReport (its "
                     "attributes; its header is typed), not by key or from its JSON:\n"
                     + "\n".join(bad))


def test_the_scan_sees_keyed_reads_and_spares_other_reports():
    caught = keyed_report_reads(
        'a = report["systems"]\n'
        'b = reports[0]["accuracy"]\n'
        'c = self.report.get("partial")\n'
        'h = RunHeader.from_json(report.get("header"))\n'
        'data = report.as_json()\n'
        'if "sample" in report:\n    pass\n'
        'n = report.as_json()["items"]\n'
        'g = RunHeader.from_json(report["header"])\n'
        'r = [build_report(s, run).as_json() for run in runs]\n'
        'd = report.as_json() if hasattr(report, "as_json") else report\n')
    assert [line.split()[0] for line in caught] == [f"<source>:{n}" for n in
                                                    (1, 2, 3, 4, 5, 6, 8, 9, 10, 11)]
    assert keyed_report_reads(
        'a = report.systems\n'                                  # typed: attributes
        'b = report.items["done"]\n'                            # a part's own keys
        'print(json.dumps(report.as_json()))\n'                 # the writer, handed on
        'p = {"kind": "run", "report": report.as_json()}\n'
        'n = report["groups"]\n'                                # no run report has it
        'd = result.get("systems")\n') == []


def test_the_other_reports_are_still_there():
    for rel in OTHER_REPORTS:
        assert (ROOT / rel).exists(), f"{rel} is gone: drop it from OTHER_REPORTS"
