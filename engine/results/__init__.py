"""Results: what a stored run says, read back from its rows (never kept as the only copy).

- :mod:`.records`: a run's header and items (:class:`RunInfo`, :class:`ItemRecord`);
- :mod:`.report`: :func:`build_report`, the run report with n and a 95% CI on every number;
- :mod:`.text`: the report as terminal text;
- :mod:`.inspector`: item rows and one item's full detail, for drill-down;
- :mod:`.export`: a run's items as CSV / JSONL / parquet with a header file;
- :mod:`.comparison`: the run history's rows, one run's summary and two runs compared.
"""

from engine.results.comparison import (
                                       RunComparison,
                                       RunRow,
                                       compare_reports,
                                       run_row,
                                       run_rows,
)
from engine.results.export import export_run, header_path
from engine.results.inspector import item_detail, items_for
from engine.results.records import (
                                    ItemRecord,
                                    RunInfo,
                                    RunNotFound,
                                    known_runs,
                                    load_items,
                                    load_run,
)
from engine.results.report import RunReport, build_report, format_report

__all__ = ["ItemRecord", "RunComparison", "RunInfo", "RunNotFound", "RunReport", "RunRow",
           "build_report", "compare_reports", "export_run", "format_report", "header_path",
           "item_detail", "items_for", "known_runs", "load_items", "load_run", "run_row",
           "run_rows"]
