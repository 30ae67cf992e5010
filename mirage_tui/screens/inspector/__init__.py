"""The inspector screen (:mod:`.screen`) and its parts, widgets that share one run looked up
once (:mod:`.handle`): the filters and search (:mod:`.filters`), the list and its sort
(:mod:`.list_view`, its cells in :mod:`.cells`), one item in full (:mod:`.detail`, its words
in :mod:`.item_text`), your own verdict (:mod:`.human`) and the export of the view
(:mod:`.export_view`); what they post (:mod:`.messages`)."""

from mirage_tui.screens.inspector.detail import ORACLE_MARK
from mirage_tui.screens.inspector.screen import InspectorScreen

__all__ = ["ORACLE_MARK", "InspectorScreen"]
