"""Runs: plan systems × settings × queries, execute them with a cache, resume after anything.

- :mod:`engine.runs.config`: :class:`RunConfig` (TOML or flags) and what may change on resume;
- :mod:`engine.runs.sampling`: the seeded stratified order behind samples and adaptive batches;
- :mod:`engine.runs.plan`: :func:`plan_run` → :class:`Plan` (ordered for prefix sharing,
  model checks), :func:`dataset_reference` (how a run names its dataset);
- :mod:`engine.runs.estimates`: the one time estimator (New run, ``--dry-run``, Live ETA) from
  measured speeds (model checks, stored generations);
- :mod:`engine.runs.prompting`: contexts, the truncation rule, the generation cache key;
- :mod:`engine.runs.header`: the run header (what reproduces a run);
- :mod:`engine.runs.rows`: the run row and one transaction per item; what is stored;
- :mod:`engine.runs.events`: :func:`run_event` (the :class:`~engine.jobs.JobEvent` a run
  reports, with :class:`RunProgress` as its detail) and :class:`RunSummary`;
- :mod:`engine.runs.execute`: :func:`execute`, with progress callbacks and cooperative cancel.
"""

from engine.runs.config import BASIC_SETTINGS, ConfigError, RunConfig
from engine.runs.events import RunProgress, RunSummary, run_event
from engine.runs.execute import execute
from engine.runs.header import (
                                identity_json,
                                initial_header,
                                machine,
                                now,
                                package_versions,
                                record_generator,
                                start_session,
)
from engine.runs.plan import (
                                Plan,
                                PlanItem,
                                RunConfigMismatch,
                                System,
                                check_embedder,
                                check_generator,
                                check_run_models,
                                dataset_reference,
                                plan_run,
)
from engine.runs.estimates import (
                                Speed,
                                estimate,
                                estimate_remaining,
                                latest_model_check,
                                latest_model_speed,
                                measured_speeds,
                                model_file_size,
                                record_model_check,
)
from engine.runs.live_eta import LiveEta
from engine.runs.prompting import (
                                FittedPrompt,
                                PromptTooLong,
                                QueryFacts,
                                context_length,
                                context_rowids,
                                fit_prompt,
                                generation_key,
                                load_chunks,
                                load_queries,
                                params_json,
                                render,
                                sampling_params,
)
from engine.runs.rows import (
                                SCORER_MARK,
                                finished_items,
                                generation_text,
                                is_scored,
                                loose_labels,
                                save_plan,
                                stored_loose,
                                stored_status,
                                write_error,
                                write_item,
                                write_run,
)
from engine.runs.sampling import (
                                adaptive_batch_size,
                                allocation,
                                ci_half_widths,
                                stratified_order,
)

__all__ = ["BASIC_SETTINGS", "ConfigError", "FittedPrompt", "LiveEta", "Plan", "PlanItem",
           "PromptTooLong", "QueryFacts", "RunConfig", "RunConfigMismatch", "RunProgress", "RunSummary",
           "SCORER_MARK", "Speed", "System", "adaptive_batch_size", "allocation",
           "check_embedder", "check_generator", "check_run_models", "ci_half_widths",
           "context_length", "context_rowids", "dataset_reference", "estimate",
           "estimate_remaining", "execute", "finished_items",
           "fit_prompt", "generation_key", "generation_text", "identity_json", "initial_header",
           "is_scored", "latest_model_check", "latest_model_speed", "load_chunks",
           "load_queries", "loose_labels", "machine",
           "measured_speeds", "model_file_size", "now", "package_versions", "params_json",
           "plan_run", "record_generator", "record_model_check", "render", "run_event", "sampling_params", "save_plan",
           "start_session", "stored_loose", "stored_status", "stratified_order", "write_error",
           "write_item", "write_run"]
