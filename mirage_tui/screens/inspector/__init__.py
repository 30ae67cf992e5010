"""The inspector screen (:mod:`.screen`), its filters (:mod:`.filters`), the item detail view
(:mod:`.detail`) and the list's cells (:mod:`.cells`)."""

from mirage_tui.screens.inspector.detail import ORACLE_MARK
from mirage_tui.screens.inspector.filters import Filters, pattern_label
from mirage_tui.screens.inspector.screen import InspectorScreen

__all__ = ["ORACLE_MARK", "Filters", "InspectorScreen", "pattern_label"]
