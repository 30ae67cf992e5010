"""Results: what a stored run says, read back from its rows (never kept as the only copy).

- :mod:`.records`: a run's header and items (:class:`RunInfo`, :class:`ItemRecord`) loaded from
  the store, and what setting and metric names mean;
- :mod:`.report`: :func:`build_report`, the run report with n and a 95% CI on every number
  (loads the rows, then aggregates them);
- :mod:`.text`: the report as terminal text;
- :mod:`.inspector`: item rows and one item's full detail, for drill-down;
- :mod:`.export`: a run's items as CSV or JSON lines with a header;
- :mod:`.comparison`: the run history's rows, one run's summary and two runs compared.
"""

from engine.results.comparison import (
                                      RunComparison,
                                      RunRow,
                                      compare_reports,
                                      run_row,
                                      run_rows,
)
from engine.results.export import export_rows, export_run, header_path, run_header
from engine.results.inspector import (
                                      ChunkRow,
                                      ItemDetail,
                                      ItemRow,
                                      ScoreRow,
                                      SettingRow,
                                      item_detail,
                                      items_for,
)
from engine.results.records import (
                                      ItemRecord,
                                      count_items,
                                      is_mixed_like,
                                      item_counts,
                                      load_items,
                                      metric_order,
                                      parse_retrieved,
                                      retriever_name,
                                      setting_order,
                                      split_system,
                                      stored_counts,
)
from engine.results.report import (
                                      RunReport,
                                      build_report,
                                      format_report,
                                      run_retrievers,
                                      system_label,
)
from engine.results.text import ADAPTABILITY_COLUMNS, num, pct, short_setting, table

__all__ = ["ADAPTABILITY_COLUMNS", "RunComparison", "RunRow", "compare_reports", "run_row",
           "run_rows", "ChunkRow", "ItemDetail", "ItemRecord", "ItemRow",
           "RunReport", "ScoreRow", "SettingRow", "build_report", "count_items",
           "export_rows", "export_run", "format_report", "header_path", "is_mixed_like",
           "item_counts", "item_detail", "items_for", "load_items",
           "metric_order", "num", "parse_retrieved", "pct", "retriever_name", "run_header",
           "run_retrievers", "setting_order", "short_setting", "split_system", "stored_counts",
           "system_label",
           "table"]
