"""Battles read back and rated: the arenas and battles stored (:mod:`.battles`), Bradley–Terry
(:mod:`.bradley_terry`), bootstrap tournaments (:mod:`.tournaments`), the leaderboard
(:mod:`.leaderboard`) and its page (:mod:`.page`), the report against a reference
(:mod:`.reference_report`), one query's verdicts (:mod:`.verdicts`) and two systems' duel
(:mod:`.duel`)."""
