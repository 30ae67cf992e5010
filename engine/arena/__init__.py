"""The arena (MIRAGE-Bench §2, RAG-QA Arena §4 of docs/METRICS.md): local judges compare
systems' answers, Bradley–Terry turns the battle log into ratings with bootstrap CIs, and a
random-forest surrogate predicts the ratings from heuristic features.

- ``judgments``: the cache of every judge call
- ``types``: Battle, SystemRating, Ratings
- ``orders``: position bias (which order a battle is shown in, combining both orders)
- ``planning`` / ``judging`` / ``recording``: what to judge (pairwise or against a reference),
  running a judge over a run's answers, the arena and battle rows it writes
- ``battles`` / ``verdicts`` / ``reference``: reading arenas and battles back, one query's
  verdicts, the RAG-QA Arena reference report
- ``bradley_terry`` / ``tournaments`` / ``leaderboard``: the fit, the bootstrap, the table
- ``features`` / ``surrogate``: heuristic features per response, the surrogate judge
- ``events``: judging's progress events

Import the modules themselves (``from engine.arena.ratings.battles import …``): the package
exports nothing, so importing one module does not load the rest. The SQL behind them is in
``engine/store/`` (``arenas``, ``calibration``, ``features``, ``fitted_judges``); a function
that reads a run takes the ``RunInfo`` its caller loaded.
"""
