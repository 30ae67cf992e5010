"""MIRAGE-Bench's surrogate judge: heuristic features per response (:mod:`.features`) and the
random forest that predicts the arena's ratings from them (:mod:`.forest`)."""
