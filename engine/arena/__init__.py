"""The arena (MIRAGE-Bench §2, RAG-QA Arena §4 of docs/METRICS.md): local judges compare
systems' answers, Bradley–Terry turns the battle log into ratings with bootstrap CIs, and a
random-forest surrogate predicts the ratings from heuristic features.

- ``judgments``: the cache of every judge call
- ``types``: Battle, SystemRating, Ratings
- ``planning`` / ``judging`` / ``reference``: what to judge, running a judge over a run's
  answers and storing battles, the RAG-QA Arena reference mode
- ``bradley_terry`` / ``tournaments`` / ``leaderboard``: the fit, the bootstrap, the table
- ``features`` / ``surrogate``: heuristic features per response, the surrogate judge
"""
