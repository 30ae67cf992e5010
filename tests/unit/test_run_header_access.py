"""The run header has one reader and one writer (:class:`engine.runs.header.RunHeader`): no
module outside ``engine/runs/header.py`` and ``engine/store/`` indexes a run header by key or
reads its JSON itself.

The scan (AST, engine/, mirage_tui/ and models/) looks at expressions that name a header: a name
or attribute with ``header`` in it (``header``, ``run_header``, ``run.header``, ``report.header``),
``X["header"]`` and ``X.get("header")`` (a report's JSON). On those it refuses a subscript, a
``.get`` / ``.setdefault`` / ``.pop`` or an ``in`` test with a key the run header has
(:meth:`RunHeader.json_keys`: ``models``, ``sessions``, ``devices``, ...), and ``json.loads`` /
``json_column`` of one. Keys no run header has are other headers' (an export's ``rows``, an
HTTP response's ``retry-after``, an arena's ``judge``) and pass. The arena's own header
(``arenas.header``: judge, sessions, counts, timings) is written by one module and read by
another, named in :data:`OTHER_HEADERS`."""

from __future__ import annotations

import ast

from testkit.keyed_reads import keyed_read
from testkit.paths import ROOT, sources

from engine.runs.header import RunHeader

PACKAGES = ("engine", "mirage_tui", "models")
ALLOWED = ("engine/runs/header.py", "engine/store/")
OTHER_HEADERS = {
    "engine/arena/judging/recording.py": "writes the arena's header (arenas.header)",
    "engine/arena/ratings/battles.py": "reads the arena's header (ArenaInfo.header)",
}
RUN_KEYS = frozenset(RunHeader.json_keys())
READERS = {"loads", "json_column"}


def _names_a_header(node: ast.AST) -> bool:
    """Whether ``node`` is an expression that names a header (module docstring)."""
    if isinstance(node, ast.Name):
        return "header" in node.id.lower()
    if isinstance(node, ast.Attribute):
        return "header" in node.attr.lower()
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in ("header",
                                                                            "run_header")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "get" and node.args:
        first = node.args[0]
        return isinstance(first, ast.Constant) and first.value in ("header", "run_header")
    if isinstance(node, ast.BoolOp):
        return any(_names_a_header(v) for v in node.values)
    return False


def _run_key(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in RUN_KEYS


def keyed_header_reads(source: str, path: str = "<source>") -> list[str]:
    """``path:line text`` of each read of a run header by key, or of its JSON (see above)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        hit = keyed_read(node, _names_a_header, _run_key)
        if not hit and isinstance(node, ast.Call):        # json.loads(header), json_column(...)
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            hit = called in READERS and any(_names_a_header(a) for a in node.args)
        if hit:
            found.append(f"{path}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_module_reads_a_run_header_by_key():
    bad = [hit for rel, text in sources(PACKAGES)
           if not rel.startswith(ALLOWED) and rel not in OTHER_HEADERS
           for hit in keyed_header_reads(text, rel)]
    assert not bad, ("read the run header through engine.runs.header.RunHeader (from_json "
                     "once, then its attributes), not by key:\n" + "\n".join(bad))


def test_the_scan_sees_keyed_reads_and_spares_other_headers():
    caught = keyed_header_reads(
        'a = run.header.get("models")\n'
        'b = report["header"]["devices"]\n'
        'c = (report.get("header") or {}).get("concurrency")\n'
        'header["message"] = "x"\n'
        'if "sessions" in self.header:\n    pass\n'
        'd = json.loads(row["header"])\n'
        'e = json_column(run_header_text, {})\n'
        'self.header.setdefault("retrievers", {})\n')
    assert [line.split()[0] for line in caught] == [f"<source>:{n}" for n in
                                                    (1, 2, 3, 4, 5, 7, 8, 9)]
    assert keyed_header_reads(
        'n = header["rows"]\n'                            # an export's header
        'r = response.headers.get("retry-after")\n'       # HTTP
        'j = info.header.get("judge")\n'                  # an arena's
        'm = run.header.models["a"].backend\n'            # typed: attributes
        't = table.header\n'
        'h = json.loads(header_path(p).read_text())\n') == []


def test_the_other_headers_are_still_there():
    for rel in OTHER_HEADERS:
        assert (ROOT / rel).exists(), f"{rel} is gone: drop it from OTHER_HEADERS"
