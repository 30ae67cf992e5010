"""The arena header has one reader and one writer (:class:`engine.arena.header.ArenaHeader`):
no module outside ``engine/arena/header.py`` and ``engine/store/`` indexes an arena header by
key or reads its JSON itself.

The scan is the run header's (:mod:`testkit.header_access`) with the arena header's keys
(:meth:`ArenaHeader.json_keys`: ``judge``, ``counts``, ``timings``, ``sessions``, ...): on an
expression that names a header (``header``, ``info.header``, ``row["header"]``) it refuses a
subscript, a ``.get`` / ``.setdefault`` / ``.pop`` or an ``in`` test with one of those keys,
and ``json.loads`` / ``json_column`` of one."""

from __future__ import annotations

from testkit.header_access import keyed_header_reads, keyed_reads_outside

from engine.arena.header import ArenaHeader

ALLOWED = ("engine/arena/header.py", "engine/store/")
ARENA_KEYS = frozenset(ArenaHeader.json_keys())


def test_no_module_reads_an_arena_header_by_key():
    bad = keyed_reads_outside(ARENA_KEYS, ALLOWED)
    assert not bad, ("read the arena header through engine.arena.header.ArenaHeader "
                     "(from_json once, then its attributes), not by key:\n" + "\n".join(bad))


KEYED = ('k = (info.header.get("judge") or {}).get("key")',
         'c = info.header.get("counts", {})',
         'header["sessions"][-1].update(x)',
         'header.setdefault("timings", {})',
         'header.pop("message", None)',
         'if "contestants" in header: pass',
         'h = json.loads(row["header"])',
         'i = json_column(r["header"], {})')
SPARED = ('n = header["rows"]',                            # an export's header
          'j = info.header.judge.key',                     # typed: attributes
          'h = ArenaHeader.from_json(row["header"])')


def test_the_scan_sees_the_arena_headers_keyed_reads():
    for line in KEYED:
        assert keyed_header_reads(line, ARENA_KEYS), f"missed: {line}"
    for line in SPARED:
        assert keyed_header_reads(line, ARENA_KEYS) == [], f"refused: {line}"
