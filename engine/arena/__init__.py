"""The arena (MIRAGE-Bench §2, RAG-QA Arena §4 of docs/METRICS.md): local judges compare
systems' answers, Bradley–Terry turns the battle log into ratings with bootstrap CIs, and a
random-forest surrogate predicts the ratings from heuristic features.

- ``judgments``: the cache of every judge call
- ``types``: Battle, SystemRating, Ratings
- ``orders``: position bias (which order a battle is shown in, combining both orders)
- ``planning`` / ``judging``: what to judge (pairwise or against a reference), running a judge
  over a run's answers and storing battles
- ``battles`` / ``verdicts`` / ``reference``: reading arenas and battles back, one query's
  verdicts, the RAG-QA Arena reference report
- ``bradley_terry`` / ``tournaments`` / ``leaderboard``: the fit, the bootstrap, the table
- ``features`` / ``surrogate``: heuristic features per response, the surrogate judge
- ``events``: judging's progress events (import them from there)
"""

from engine.arena.battles import (
                                  BATTLE_COLUMNS,
                                  ArenaInfo,
                                  ArenaNotFound,
                                  battle_rows,
                                  battles_of,
                                  list_arenas,
                                  load_battles,
                                  resolve_arena,
)
from engine.arena.bradley_terry import (
                                  DEFAULT_ALPHA,
                                  bradley_terry_fit,
                                  bradley_terry_fit_method,
                                  bradley_terry_fit_pairs,
                                  doubled_pairs,
                                  elo_scale,
                                  win_matrix,
)
from engine.arena.features import (
                                  FEATURES,
                                  FeatureSummary,
                                  compute_features,
                                  feature_values,
                                  system_features,
)
from engine.arena.judging import ArenaConfigMismatch, judge_arena
from engine.arena.judgments import (
                                  StoredVerdict,
                                  cached_verdict,
                                  judgment_key,
                                  load_judgment,
)
from engine.arena.leaderboard import compute_ratings, format_leaderboard
from engine.arena.orders import (
                                  DEBIAS_TIE_MARGIN,
                                  ORDERS,
                                  canonical_winner,
                                  combine_orders,
                                  debiased_winner,
)
from engine.arena.planning import (
                                  REFERENCE,
                                  ArenaError,
                                  Matchup,
                                  QueryJob,
                                  choose_contestants,
                                  load_answers,
                                  plan_jobs,
                                  reference_documents,
                                  refusal,
                                  run_contestants,
                                  sample_queries,
                                  shown_order,
)
from engine.arena.reference import (
                                  ContestantResult,
                                  RateRow,
                                  ReferenceReport,
                                  format_reference_report,
                                  reference_report,
)
from engine.arena.surrogate import (
                                  MIN_SYSTEMS,
                                  SurrogateReport,
                                  SurrogateRow,
                                  fit_surrogate,
                                  format_surrogate,
                                  heldout_r2,
                                  kendall_tau,
                                  surrogate_for_run,
)
from engine.arena.tournaments import (
                                  DEFAULT_TOURNAMENTS,
                                  EncodedBattles,
                                  bootstrap_thetas,
                                  bootstrap_thetas_pairs,
                                  encode_battles,
                                  fit_tournaments,
                                  per_query_wins,
                                  resample_counts,
                                  total_wins,
                                  tournament_win_rates,
                                  tournament_wins,
)
from engine.arena.types import (
                                  Battle,
                                  Ratings,
                                  SystemRating,
                                  arena_system,
                                  split_arena_system,
)
from engine.arena.verdicts import ItemVerdict, OrderVerdict, verdicts_for

__all__ = [
    "DEBIAS_TIE_MARGIN", "ORDERS", "canonical_winner", "combine_orders", "debiased_winner",
    "ArenaConfigMismatch", "ArenaError", "ArenaInfo", "ArenaNotFound", "BATTLE_COLUMNS",
    "Battle", "ContestantResult", "DEFAULT_ALPHA", "DEFAULT_TOURNAMENTS", "EncodedBattles",
    "FEATURES", "FeatureSummary", "ItemVerdict", "MIN_SYSTEMS", "Matchup", "OrderVerdict",
    "QueryJob", "REFERENCE", "RateRow", "Ratings", "ReferenceReport", "StoredVerdict",
    "SurrogateReport", "SurrogateRow", "SystemRating", "arena_system", "battle_rows",
    "battles_of", "bootstrap_thetas", "bootstrap_thetas_pairs", "bradley_terry_fit",
    "bradley_terry_fit_method", "bradley_terry_fit_pairs", "cached_verdict",
    "choose_contestants", "compute_features", "compute_ratings", "doubled_pairs", "elo_scale",
    "encode_battles", "feature_values", "fit_surrogate", "fit_tournaments", "format_leaderboard",
    "format_reference_report", "format_surrogate", "heldout_r2", "judge_arena", "judgment_key",
    "kendall_tau", "list_arenas", "load_answers", "load_battles", "load_judgment",
    "per_query_wins", "plan_jobs", "reference_documents", "reference_report", "refusal",
    "resample_counts", "resolve_arena", "run_contestants", "sample_queries", "shown_order",
    "split_arena_system", "surrogate_for_run", "system_features", "total_wins",
    "tournament_win_rates", "tournament_wins", "verdicts_for", "win_matrix",
]
