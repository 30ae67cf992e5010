"""``mirage-tui`` with a smaller quick comparison, for the tmux test of its flow (``g`` → Live →
the adaptability bars → the Inspector): the same two packaged generators, six settings, MiniLM
and judging, on the number of demo queries given first (``python app_small_quick.py 1 --db
W.db``: 12 items, not the 120 of the real one, whose configuration
tests/unit/test_quick_comparison_config.py checks)."""

from __future__ import annotations

import sys

from mirage_tui import quick_comparison
from mirage_tui.cli import main

if __name__ == "__main__":
    quick_comparison.QUICK_SAMPLE = int(sys.argv.pop(1))
    sys.argv[0] = "mirage-tui"
    sys.exit(main())
