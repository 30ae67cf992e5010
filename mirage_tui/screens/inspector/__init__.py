"""The inspector screen (:mod:`.screen`), its filters (:mod:`.filters`), the item detail view
(:mod:`.detail`), the list's cells (:mod:`.cells`) and its workers' messages (:mod:`.messages`)."""

from mirage_tui.screens.inspector.detail import ORACLE_MARK
from mirage_tui.screens.inspector.filters import Filters, pattern_label
from mirage_tui.screens.inspector.screen import InspectorScreen

__all__ = ["ORACLE_MARK", "Filters", "InspectorScreen", "pattern_label"]
