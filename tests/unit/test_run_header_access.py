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
(``tests/unit/test_arena_header_access.py``)."""

from __future__ import annotations

from testkit.header_access import keyed_header_reads as keyed_reads
from testkit.header_access import keyed_reads_outside

from engine.runs.header import RunHeader

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
