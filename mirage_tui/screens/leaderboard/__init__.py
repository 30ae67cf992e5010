"""The leaderboard: a run's arena as FastChat's leaderboard is read, with its heatmap and the
surrogate judge's ranking beside the judged one.

Pick the run and the arena (``engine.arena.ratings.battles.list_arenas``); the ratings
(``engine.arena.ratings.leaderboard.compute_ratings`` over ``load_battles``: rank with CI-aware ties,
Elo, +x/−y, battles, win rate with n) are computed in a worker, then the surrogate
(``engine.arena.surrogate.forest.surrogate_for_run``: predicted ranking, Kendall τ and R² with CIs and
n). ``j`` judges from here (``engine.arena.judging.job.judge_arena``) with live, throttled progress,
``x`` cancels it (the arena resumes from its cache), ``u`` computes the model-free features the
surrogate needs, and Enter opens the inspector on the highlighted system. The arena modules are
imported when used, so the screen still opens (and says why) when one is missing.

The screen (:mod:`.screen`), what its workers ask the engine (:mod:`.data`) and post back
(:mod:`.messages`), and what it draws (:mod:`.board`); the judge dialog is
:mod:`mirage_tui.dialogs.judge_arena`.
"""

from mirage_tui.screens.leaderboard.board import surrogate_text
from mirage_tui.screens.leaderboard.screen import LeaderboardScreen

__all__ = ["LeaderboardScreen", "surrogate_text"]
