"""Runs: plan systems × settings × queries, execute them with a cache, resume after anything.

- :mod:`engine.runs.config`: :class:`RunConfig` (TOML or flags) and what may change on resume;
- :mod:`engine.runs.sampling`: the seeded stratified order behind samples and adaptive batches;
- :mod:`engine.runs.plan`: :func:`plan_run` → :class:`Plan` (ordered for prefix sharing,
  model checks, time estimates);
- :mod:`engine.runs.prompting`: contexts, the truncation rule, the generation cache key;
- :mod:`engine.runs.header`: the run header (what reproduces a run);
- :mod:`engine.runs.rows`: the run row and one transaction per item; what is stored;
- :mod:`engine.runs.events`: :class:`ProgressEvent` (the :class:`~engine.jobs.JobEvent` a run
  reports, with :class:`RunProgress` as its detail) and :class:`RunSummary`;
- :mod:`engine.runs.execute`: :func:`execute`, with progress callbacks and cooperative cancel.
"""

from engine.runs.config import ConfigError, RunConfig
from engine.runs.events import ProgressEvent, RunProgress, RunSummary, run_event
from engine.runs.execute import execute
from engine.runs.plan import (Plan, PlanItem, RunConfigMismatch, Speed, System, estimate,
                              measured_speeds, plan_run)
from engine.runs.prompting import generation_key
from engine.runs.rows import SCORER_MARK, save_plan, stored_status
from engine.runs.sampling import stratified_order

__all__ = ["ConfigError", "Plan", "PlanItem", "ProgressEvent", "RunConfig", "RunConfigMismatch",
           "RunProgress", "RunSummary", "SCORER_MARK", "Speed", "System", "estimate", "execute",
           "generation_key", "measured_speeds", "plan_run", "run_event", "save_plan",
           "stored_status", "stratified_order"]
