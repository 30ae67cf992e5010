"""The inspector screen (:mod:`.screen`) and its parts: filters, search and sort
(:mod:`.list_view`, the filter rows in :mod:`.filters`), one item in full (:mod:`.item_view`,
the detail view in :mod:`.detail`), your own verdict (:mod:`.human`), the export of the view
(:mod:`.export_view`), the list's cells (:mod:`.cells`) and its workers' messages
(:mod:`.messages`)."""

from mirage_tui.screens.inspector.detail import ORACLE_MARK
from mirage_tui.screens.inspector.screen import InspectorScreen

__all__ = ["ORACLE_MARK", "InspectorScreen"]
