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
named in :data:`OTHER_REPORTS`.

The typed parts (:data:`TYPED_PARTS`: the item counts, the sample, the definitions, the replies
and retrieval rows, the adaptability rows, the estimates of accuracy and the other metrics, the
config) are read by attribute too: a keyed read of one of their fields is refused on
``report.items`` (and the other parts), on a name a function keeps one in
(``items = report.items``), on a name a loop takes a part's rows in
(``for row in report.replies``, ``for system, per in report.accuracy.items()``), and through
the data keys of a map of parts (``report.accuracy[system][setting]["value"]``). A keyed read by
a key only an adaptability row's JSON has (:data:`ROW_ONLY_KEYS`: ``run_system``,
``left_out``, ``overall_lo``, ...) is refused wherever the row came from (a widget's
``entry.get("left_out")``)."""

from __future__ import annotations

import ast
from dataclasses import fields

from testkit.keyed_reads import keyed_read
from testkit.paths import ROOT, sources

from engine.metrics.adaptability import adaptability_many
from engine.metrics.definitions import Definitions
from engine.results.adaptability_rows import AdaptabilityRow, LeftOut
from engine.results.replies import ReplyRow
from engine.results.retrieval_table import RetrievalRow
from engine.results.report import ItemCounts, ReportDefinitions, RunReport, SampleNote
from engine.runs.config import RunConfig
from engine.stats import Estimate

PACKAGES = ("engine", "mirage_tui", "models")
ALLOWED = ("engine/results/report.py",)
OTHER_REPORTS = {
    "mirage_tui/cli/index.py": "an index's retrieval report (engine.retrieval.scores)",
    "engine/retrieval/scores.py": "writes that retrieval report",
}
REPORT_KEYS = frozenset(f.name for f in fields(RunReport))
ROW_KEYS = frozenset(AdaptabilityRow(
    shares=adaptability_many([[1] * 8])[0], accuracy={}, system="", run_system="",
    generator="", template="", mixed_setting="mixed", retriever=None, retriever_name=None,
    top_k=None, left_out=LeftOut(0, 0), by_language={}, by_source={}).as_json())
ESTIMATE_KEYS = frozenset(f.name for f in fields(Estimate))
TYPED_PARTS = {"items": frozenset(f.name for f in fields(ItemCounts)),
               "sample": frozenset(f.name for f in fields(SampleNote)),
               "definitions": frozenset(ReportDefinitions(Definitions(), 0).as_json()),
               "replies": frozenset(f.name for f in fields(ReplyRow)),
               "retrieval": frozenset(f.name for f in fields(RetrievalRow)),
               "systems": ROW_KEYS,
               "accuracy": ESTIMATE_KEYS,
               "metrics": ESTIMATE_KEYS,
               "config": frozenset(f.name for f in fields(RunConfig))}
"""A report's typed parts: attribute -> the keys their JSON has (a list's: its rows'; a map's
of estimates: an estimate's)."""
MAPS = frozenset({"systems", "accuracy", "metrics"})
"""Parts that hold more parts (by index or by a system's, setting's, metric's name): what a
subscript with another key reads from one is still that part."""
ROW_ONLY_KEYS = ROW_KEYS - {"system", "generator", "template", "retriever", "retriever_name",
                            "top_k", "n", "nv", "ca", "ci", "cm", "overall", "patterns",
                            "accuracy", "by_language", "by_source"}
"""The keys of an adaptability row's JSON that no other record's JSON has."""
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


Kept = dict[str, set[str]]
"""A scope's names -> the typed parts each is bound to somewhere in it."""


def _parts_of(node: ast.AST, kept: Kept) -> set[str]:
    """The typed parts ``node`` may be (``report.items``, a name one was kept in, what a data
    key reads from a map of parts: ``report.accuracy[system]``)."""
    if isinstance(node, ast.Attribute) and node.attr in TYPED_PARTS \
            and _names_a_report(node.value):
        return {node.attr}
    if isinstance(node, ast.Name):
        return kept.get(node.id, set())
    inner, key = None, None
    if isinstance(node, ast.Subscript):
        inner, key = node.value, node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "get" and node.args:
        inner, key = node.func.value, node.args[0]
    if inner is None:
        return set()
    return {part for part in _parts_of(inner, kept) & MAPS
            if not (isinstance(key, ast.Constant) and key.value in TYPED_PARTS[part])}


def _bind(kept: Kept, target: ast.AST, parts: set[str]) -> None:
    if parts and isinstance(target, ast.Name):
        kept.setdefault(target.id, set()).update(parts)


def _bind_loop(kept: Kept, target: ast.AST, source: ast.AST) -> None:
    """Binds the names a loop (or comprehension) over ``source`` takes a part in: its rows
    (``for row in report.systems``), a map's values (``for system, per in
    report.accuracy.items()``, ``for per in report.accuracy.values()``)."""
    if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) \
            and source.func.attr in ("items", "values") and not source.args:
        parts = _parts_of(source.func.value, kept) & MAPS
        if source.func.attr == "items":
            ok = isinstance(target, ast.Tuple) and len(target.elts) == 2
            target = target.elts[1] if ok else None
        _bind(kept, target, parts)
    else:
        _bind(kept, target, _parts_of(source, kept))


def _within(scope: ast.AST):
    """The nodes of ``scope`` outside the functions defined in it (each is a scope of its
    own)."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo += ast.iter_child_nodes(node)


def keyed_part_reads(tree: ast.AST) -> list[ast.AST]:
    """The keyed reads of a typed part's fields (module docstring), in each function (and the
    module's own statements) with the names that function keeps a part in."""
    scopes = [tree] + [n for n in ast.walk(tree)
                       if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    found = []
    for scope in scopes:
        kept: Kept = {}
        for _ in range(2):              # twice: a loop may read a name kept after it in the walk
            for node in _within(scope):
                if isinstance(node, (ast.Assign, ast.NamedExpr)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        _bind(kept, target, _parts_of(node.value, kept))
                elif isinstance(node, (ast.For, ast.comprehension)):
                    _bind_loop(kept, node.target, node.iter)
        seen: dict[int, set[str]] = {}

        def parts(n: ast.AST) -> set[str]:
            if id(n) not in seen:
                seen[id(n)] = _parts_of(n, kept)
            return seen[id(n)]

        for node in _within(scope):
            if not isinstance(node, (ast.Subscript, ast.Call, ast.Compare)) \
                    or not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
                continue                                # a write (``out["left_out"] = ...``)
            if keyed_read(node, lambda n: True, lambda k: isinstance(k, ast.Constant)
                          and k.value in ROW_ONLY_KEYS) or any(
                    keyed_read(node, lambda n, part=part: part in parts(n),
                               lambda k, keys=keys: isinstance(k, ast.Constant)
                               and k.value in keys)
                    for part, keys in TYPED_PARTS.items()):
                found.append(node)
    return found


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
    for node in keyed_part_reads(tree):
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
        'd = report.as_json() if hasattr(report, "as_json") else report\n'
        'b = report.items["done"]\n'
        'def f(report):\n    items = report.items\n    return items.get("pending")\n'
        'if "seed" in self.report.sample:\n    pass\n'
        'gold = self.report.definitions.get("gold")\n'
        'cut = sum(r["cut"] for r in report.replies)\n'
        'def h(report):\n    rows = report.replies\n    for e in rows:\n        print(e["n"])\n'
        'names = [e["retriever_name"] for e in report.retrieval]\n'
        'rights = {e["system"]: e for e in report.systems}\n'
        'n = report.systems[0]["n"]\n'
        'def k(report):\n    for system, per in report.accuracy.items():\n'
        '        for setting, e in per.items():\n            print(e["n"])\n'
        'v = report.accuracy[system]["base"].get("value")\n'
        'def m(report):\n    per = report.metrics[system][setting]\n'
        '    return per["em_loose"]["lo"]\n'
        't = report.config.get("template")\n'
        'left = entry.get("left_out") or {}\n'
        'lo = row["overall_lo"]\n')
    assert [line.split()[0] for line in caught] == [f"<source>:{n}" for n in
                                                    (1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 15,
                                                     16, 18, 19, 23, 24, 25, 26, 30, 31, 34,
                                                     35, 36, 37)]
    assert keyed_report_reads(
        'a = report.systems\n'                                  # typed: attributes
        'b = report.items.done\n'                               # a typed part: attributes
        'def g(header):\n    items = header.get("items")\n    return items["done"]\n'
        'print(json.dumps(report.as_json()))\n'                 # the writer, handed on
        'p = {"kind": "run", "report": report.as_json()}\n'
        'n = report["groups"]\n'                                # no run report has it
        'd = result.get("systems")\n'
        'e = report.accuracy[system]["base"].value\n'          # an estimate: attributes
        'for row in report.systems:\n    print(row.share("nv").lo, row.left_out.total)\n'
        'g = report.metrics[system].get(setting)\n'            # data keys: systems, settings
        'out["left_out"] = left.as_json()\n') == []


def test_the_other_reports_are_still_there():
    for rel in OTHER_REPORTS:
        assert (ROOT / rel).exists(), f"{rel} is gone: drop it from OTHER_REPORTS"
