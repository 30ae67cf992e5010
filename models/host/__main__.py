"""``python -m models.host serve ...``: the model host process (:mod:`models.host.server`)."""

import sys

from models.host.server import main

if __name__ == "__main__":
    sys.exit(main())
