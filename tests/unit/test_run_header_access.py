"""The run header has one reader and one writer (:class:`engine.runs.header.RunHeader`): no
module outside ``engine/runs/header.py`` and ``engine/store/`` indexes a run header by key or
reads its JSON itself.

The scan (:mod:`testkit.header_access`, AST, engine/, mirage_tui/ and models/) looks at
expressions that name a header: a name or attribute with ``header`` in it (``header``,
``run_header``, ``run.header``, ``report.header``), ``X["header"]`` and ``X.get("header")`` (a
report's JSON). On those it refuses a subscript, a ``.get`` / ``.setdefault`` / ``.pop`` or an
``in`` test with a key the run header has (:meth:`RunHeader.json_keys`: ``models``,
``sessions``, ``devices``, ...), and ``json.loads`` / ``json_column`` of one. Keys no run header
has are other headers' (an export's ``rows``, an HTTP response's ``retry-after``, an arena's
``judge``) and pass. The arena's own header has its own reader and writer
(``tests/unit/test_arena_header_access.py``).

The stored header is read in one place: the store gives it raw (``StoredRun.header_json``), and
``engine/runs/lookup.py`` reads it once into the run read model, ``RunInfo.header``, a
:class:`RunHeader`; no other module reads ``header_json`` or calls ``RunHeader.from_json``."""

from __future__ import annotations

import ast
from dataclasses import fields
from typing import get_type_hints

from testkit.header_access import keyed_header_reads as keyed_reads
from testkit.header_access import keyed_reads_outside
from testkit.paths import sources

from engine.runs.header import RunHeader
from engine.runs.lookup import RunInfo
from engine.store.runs import RunRow, StoredRun

ALLOWED = ("engine/runs/header.py", "engine/store/")
RUN_KEYS = frozenset(RunHeader.json_keys())


def keyed_header_reads(source: str, path: str = "<source>") -> list[str]:
    """``path:line text`` of each read of a run header by key, or of its JSON (see above)."""
    return keyed_reads(source, RUN_KEYS, path)


def test_no_module_reads_a_run_header_by_key():
    bad = keyed_reads_outside(RUN_KEYS, ALLOWED)
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


# --------------------------------------------------------------------------- one place reads it

READER = "engine/runs/lookup.py"        # RunInfo's header: the stored JSON, read once
OWN = "engine/runs/header.py"           # RunHeader builds itself with from_json


def header_parses(source: str, path: str = "<source>") -> list[str]:
    """``path:line text`` of each read of a stored run header: a call of
    ``RunHeader.from_json`` and a read of an attribute ``header_json``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        parse = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "from_json" and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == "RunHeader"
        raw = isinstance(node, ast.Attribute) and node.attr == "header_json"
        if parse or raw:
            found.append(f"{path}:{node.lineno} {ast.unparse(node)}")
    return found


def test_the_run_read_model_holds_the_header_typed_and_the_store_holds_it_raw():
    assert get_type_hints(RunInfo)["header"] is RunHeader
    assert "header" not in {f.name for f in fields(RunRow)} | {f.name for f in fields(StoredRun)}
    assert "header_json" not in {f.name for f in fields(RunInfo)}


def test_one_place_reads_the_stored_run_header():
    reads = {rel: header_parses(text, rel) for rel, text in sources(("engine", "mirage_tui",
                                                                     "models"))}
    elsewhere = [hit for rel, hits in reads.items() if rel not in (READER, OWN) for hit in hits]
    assert not elsewhere, ("a run's header is read once, by engine/runs/lookup.py into "
                           "RunInfo.header (a RunHeader); take it from there:\n" +
                           "\n".join(elsewhere))
    assert [hit.split(" ", 1)[1] for hit in reads[READER]] == [
        "RunHeader.from_json(stored.header_json)", "stored.header_json"]
    assert all("header_json" not in hit for hit in reads[OWN])


def test_the_parse_scan_sees_a_header_read_again():
    assert [hit.split()[0] for hit in header_parses(
        'h = RunHeader.from_json(row["header"])\n'
        'raw = run.header_json["models"]\n'
        'a = ArenaHeader.from_json(text)\n'            # another header's reader
        'm = run.header.models\n')] == ["<source>:1", "<source>:2"]
