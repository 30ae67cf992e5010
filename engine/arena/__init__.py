"""The arena (MIRAGE-Bench §2, RAG-QA Arena §4 of docs/METRICS.md): local judges compare
systems' answers, Bradley–Terry turns the battle log into ratings with bootstrap CIs, and a
random-forest surrogate predicts the ratings from heuristic features.

- ``types``: Battle, SystemRating, Ratings, ArenaError, contestant names
- ``judges/``: the kinds of judge (one table, ``kinds``), what ``--judge`` names, each kind's
  judge, the cache of every judge call, position bias
- ``judging/``: what to judge (pairwise or against a reference), the job that runs a judge over
  a run's answers, the arena and battle rows it writes, its events and time estimate
- ``trust/``: calibration against people's labels, the calibrated judges ranked, the default
  judge and the lines that head a rating table, the cross-check against accuracy, people's
  own verdicts
- ``ratings/``: reading arenas and battles back, Bradley–Terry, the bootstrap tournaments, the
  leaderboard and its page, the reference report, one query's verdicts, the duel
- ``surrogate/``: heuristic features per response, the surrogate judge

Import the modules themselves (``from engine.arena.ratings.battles import …``): the package
exports nothing, so importing one module does not load the rest. The SQL behind them is in
``engine/store/`` (``arenas``, ``calibration``, ``features``, ``fitted_judges``); a function
that reads a run takes the ``RunInfo`` its caller loaded.
"""
