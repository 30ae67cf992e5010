"""Results: what a stored run says, read back from its rows (never kept as the only copy).

- :mod:`.records`: a run's items (:class:`ItemRecord`, :class:`RunColumns`) read from the
  store, and what setting and metric names mean;
- :mod:`.report`: :func:`build_report`, the run report with n and a 95% CI on every number
  (loads the rows, then aggregates them);
- :mod:`.text`: the report as terminal text;
- :mod:`.inspector`: item rows and one item's full detail, for drill-down;
- :mod:`.export`: a run's items as CSV or JSON lines with a header;
- :mod:`.comparison`: the run history's rows, one run's summary and two runs compared;
- :mod:`.paired`: two systems compared on the items both answered.

Only what other packages import through the package is exported here; import the rest from
its module.
"""

from engine.results.export import export_run, header_path
from engine.results.inspector import item_detail, items_for
from engine.results.records import count_items
from engine.results.report import build_report
from engine.results.text import format_report

__all__ = ["build_report", "count_items", "export_run", "format_report", "header_path",
           "item_detail", "items_for"]
