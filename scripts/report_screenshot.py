"""A screenshot of an HTML report page, taken by headless Chromium with the network blocked
(the browser test's driver, tests/testkit/browser.py); how docs/sharing.md's picture was made:

    .venv/bin/python scripts/report_screenshot.py quick-comparison.html docs/html-report-quick-comparison.png \\
        --at "Answers per system and setting" --size 1200x1250

``--at`` scrolls to the first heading with that text. Stops with one line when the page made a
request or raised an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from testkit.browser import visit  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--at", help="scroll to the first h2/h3 with this text")
    parser.add_argument("--size", default="1200x1000", help="window WIDTHxHEIGHT")
    parser.add_argument("--dark", action="store_true", help="prefers-color-scheme: dark")
    args = parser.parse_args()
    width, height = (int(x) for x in args.size.split("x"))
    actions = []
    if args.at:
        actions.append("Array.from(document.querySelectorAll('h2,h3')).find(h => "
                       f"h.textContent.trim() === {json.dumps(args.at)}).scrollIntoView()")
    v = visit(args.page, actions=actions, size=(width, height), dark=args.dark)
    if v.external_requests or v.errors:
        print(f"report_screenshot: {args.page}: requests {v.external_requests}, errors "
              f"{v.errors}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(v.screenshot)
    print(f"wrote {args.out} ({len(v.screenshot) / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
