"""The datasets screen (:mod:`.screen`) and its queries table as data (:mod:`.queries`)."""

from mirage_tui.screens.datasets.queries import PAGE_SIZE
from mirage_tui.screens.datasets.screen import DatasetsScreen

__all__ = ["PAGE_SIZE", "DatasetsScreen"]
