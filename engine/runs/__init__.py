"""Runs: plan systems × settings × queries, execute them with a cache, resume after anything.

- :mod:`engine.runs.config`: :class:`RunConfig` (TOML or flags) and what may change on resume;
- :mod:`engine.runs.sampling`: the seeded stratified order behind samples and adaptive batches;
- :mod:`engine.runs.plan`: :func:`plan_run` → :class:`Plan` (ordered for prefix sharing,
  model checks, the stored run it is given checked once), :func:`dataset_reference` (how a
  run names its dataset);
- :mod:`engine.runs.estimates`: the one time estimator (New run, ``--dry-run``, Live ETA) from
  measured speeds (model checks, stored generations);
- :mod:`engine.runs.prompting`: contexts, the truncation rule, the generation cache key;
- :mod:`engine.runs.header`: :class:`RunHeader`, the run header (what reproduces a run), typed
  and frozen: ``from_json`` its one reader, ``to_json`` its one writer;
- :mod:`engine.runs.rows`: the run row and one transaction per item; what is stored
  (its statements in :mod:`engine.store.runs` and :mod:`engine.store.run_items`);
- :mod:`engine.runs.lookup`: :func:`load_run` (a stored run by name, as a user should read it:
  a dead owner's run is interrupted), :func:`find_run` (None for a new run's name),
  :func:`plan_named` (a run looked up by its configuration's name and planned) and
  :class:`RunNotFound`;
- :mod:`engine.runs.events`: :func:`run_event` (the :class:`~engine.jobs.JobEvent` a run
  reports, with :class:`RunProgress` as its detail) and :class:`RunSummary`;
- :mod:`engine.runs.execute`: :func:`execute`, with progress callbacks and cooperative cancel
  (:mod:`engine.runs.answering`: one item's prompt and generation; :mod:`engine.runs.tally`:
  what the run has done so far; :mod:`engine.runs.run_models`: its models).

Exported here: what other packages (and the tests and benchmarks) import through
``engine.runs``; everything else is imported from its module.
"""

from engine.runs.config import ConfigError, RunConfig
from engine.runs.estimates import estimate_remaining
from engine.runs.execute import execute
from engine.runs.lookup import plan_named
from engine.runs.plan import RunConfigMismatch, plan_run
from engine.runs.prompting import generation_key
from engine.runs.rows import SCORER_MARK
from engine.runs.sampling import stratified_order

__all__ = ["SCORER_MARK", "ConfigError", "RunConfig", "RunConfigMismatch", "estimate_remaining",
           "execute", "generation_key", "plan_named", "plan_run", "stratified_order"]
