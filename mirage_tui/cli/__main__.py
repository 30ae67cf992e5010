"""``python -m mirage_tui.cli``: the same as the ``mirage-tui`` command."""

import sys

from mirage_tui.cli import main

sys.exit(main())
