"""Write docs/parity.md's parity table from the metric docstrings (engine.metrics.parity).

    .venv/bin/python scripts/parity_table.py          # rewrite the table in docs/parity.md
    .venv/bin/python scripts/parity_table.py --check  # exit 1 when the page's table is stale
    .venv/bin/python scripts/parity_table.py --print  # print the table only

The table sits between the markers engine.metrics.parity.BEGIN and END; everything else in
docs/parity.md is left alone. tests/unit/test_parity_table.py fails when the two differ.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.metrics.parity import current_table, parity_table, replace_table  # noqa: E402

PAGE = ROOT / "docs" / "parity.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail when docs/parity.md's table is stale")
    mode.add_argument("--print", action="store_true", help="print the table, write nothing")
    args = parser.parse_args(argv)
    table = parity_table()
    if args.print:
        print(table)
        return 0
    text = PAGE.read_text(encoding="utf-8")
    if args.check:
        if current_table(text) != table:
            print("docs/parity.md's parity table differs from the metric docstrings; run "
                  "scripts/parity_table.py", file=sys.stderr)
            return 1
        return 0
    updated = replace_table(text, table)
    if updated != text:
        PAGE.write_text(updated, encoding="utf-8")
        print(f"updated the parity table in {PAGE}")
    else:
        print("the parity table is up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
