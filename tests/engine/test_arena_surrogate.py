"""The surrogate judge (MIRAGE-Bench): Kendall τ and held-out R² on known cases, the forest on
synthetic features (predictable, noise, missing), determinism, unjudged contestants, errors, the
text and JSON reports, and ``surrogate_for_run`` on a real store with stored battles
(the arena's own battles and leaderboard modules, not stand-ins)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.arena.surrogate.forest import (MIN_SYSTEMS, fit_surrogate, format_surrogate, heldout_r2,
                                           kendall_tau)
from engine.runs.lookup import load_run

FAST = dict(n_boot=100, n_estimators=40)


def synthetic(n: int = 12, seed: int = 1, noise_only: bool = False):
    rng = np.random.default_rng(seed)
    y = {f"sys{i:02d} | mixed": 900.0 + 25.0 * i for i in range(n)}
    X = {}
    for s, elo in y.items():
        row = {"feat:noise": float(rng.random())}
        if not noise_only:
            row["feat:signal"] = elo / 100.0
        else:
            row["feat:noise2"] = float(rng.random())
        X[s] = row
    return X, y


def test_kendall_tau_known_rankings():
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert kendall_tau([1, 2, 3], [5, 5, 5]) is None
    assert kendall_tau([1], [2]) is None
    with pytest.raises(ValueError):
        kendall_tau([1, 2], [1])


def test_heldout_r2_known_values():
    assert heldout_r2([1, 2, 3], [1, 2, 3]) == 1.0
    assert heldout_r2([1, 2, 3], [2, 2, 2]) == 0.0            # the mean itself
    assert heldout_r2([1, 2, 3], [3, 2, 1]) == pytest.approx(1 - 8 / 2)
    assert heldout_r2([2, 2, 2], [1, 2, 3]) is None


def test_predictable_feature_gives_high_tau_and_r2():
    X, y = synthetic()
    report = fit_surrogate(X, y, seed=0, **FAST)
    assert report.tau.value > 0.8 and report.r2.value > 0.7
    assert report.tau.n == report.r2.n == 12 == report.n_judged
    assert report.tau.lo <= report.tau.value <= report.tau.hi <= 1.0
    assert report.r2.lo <= report.r2.hi
    assert report.importances["feat:signal"] > report.importances["feat:noise"]
    assert sum(report.importances.values()) == pytest.approx(1.0)
    assert report.boot_used == {"tau": 100, "r2": 100}


def test_noise_features_give_r2_at_most_zero():
    X, y = synthetic(noise_only=True)
    report = fit_surrogate(X, y, seed=0, **FAST)
    assert report.r2.value <= 0.05
    assert abs(report.tau.value) < 0.5


def test_deterministic_under_a_seed():
    X, y = synthetic()
    first = fit_surrogate(X, y, seed=3, **FAST).as_json()
    assert fit_surrogate(X, y, seed=3, **FAST).as_json() == first
    other = fit_surrogate(X, y, seed=4, **FAST).as_json()
    assert other["rows"] != first["rows"] or other["tau"] != first["tau"]


def test_unjudged_contestants_are_predicted_and_ranked_with_the_judged():
    X, y = synthetic()
    X["new-top | mixed"] = {"feat:signal": 12.0, "feat:noise": 0.5}
    X["new-low | mixed"] = {"feat:signal": 8.9, "feat:noise": 0.5}
    report = fit_surrogate(X, y, seed=0, **FAST)
    rows = {r.system: r for r in report.rows}
    assert report.n_unjudged == 2 and report.n_judged == 12
    top, low = rows["new-top | mixed"], rows["new-low | mixed"]
    assert not top.judged and top.elo is None and top.judged_rank is None
    assert top.predicted > low.predicted
    assert top.predicted_rank <= 3 and low.predicted_rank >= 12
    assert [r.predicted_rank for r in report.rows] == sorted(r.predicted_rank for r in report.rows)
    best = rows["sys11 | mixed"]
    assert best.judged and best.judged_rank == 1 and best.elo == 1175.0


def test_missing_features_are_imputed_or_dropped():
    X, y = synthetic(8)
    del X["sys03 | mixed"]["feat:noise"]
    for row in X.values():
        row["feat:support@judge:x"] = None
    X["unjudged | mixed"] = {"feat:signal": 10.0, "feat:fluency@judge:x": float("nan")}
    y["reference:lfrqa"] = 1010.0          # judged, but a reference has no features
    report = fit_surrogate(X, y, seed=0, **FAST)
    assert report.features == ["feat:noise", "feat:signal"]
    assert report.imputed == {"feat:noise": ["sys03 | mixed", "unjudged | mixed"]}
    assert report.dropped_features == ["feat:fluency@judge:x", "feat:support@judge:x"]
    assert report.left_out == ["reference:lfrqa"]
    text = " ".join(report.notes)
    assert "imputed with the column mean" in text and "dropped" in text and "left out" in text


def test_too_few_judged_systems_is_an_error():
    X, y = synthetic(MIN_SYSTEMS - 1)
    X["unjudged | mixed"] = {"feat:signal": 1.0}
    with pytest.raises(ValueError, match="at least 4 judged contestants"):
        fit_surrogate(X, y)
    X, y = synthetic(5)
    with pytest.raises(ValueError, match="at least 4"):
        fit_surrogate({s: X[s] for s in list(X)[:3]}, y)
    with pytest.raises(ValueError, match="no feature"):
        fit_surrogate({s: {"feat:a": None} for s in y}, y)


def test_format_and_json():
    X, y = synthetic(6)
    X["new | mixed"] = {"feat:signal": 10.0, "feat:noise": 0.1}
    report = fit_surrogate(X, y, seed=0, **FAST)
    text = format_surrogate(report)
    assert "Kendall τ" in text and "held-out R²" in text and "n=6" in text
    assert "unjudged" in text and "impurity" in text and "0.909" in text
    assert "only 6 judged contestants" in text
    data = json.loads(json.dumps(report.as_json()))
    assert data["tau"]["n"] == 6 and data["paper_tau"] == 0.909
    assert len(data["rows"]) == 7 and data["heldout"].startswith("leave-one-out")


# --------------------------------------------------------------------------- from a run

def test_surrogate_for_run_with_stored_features_and_battles(store):
    """The whole path on a real store: features from the feature pass, battles stored in an
    arena, ratings from the leaderboard, the forest on top."""
    from engine.arena.ratings.battles import ArenaNotFound
    from engine.arena.surrogate.features import compute_features
    from engine.arena.surrogate.forest import surrogate_for_run
    from engine.arena.types import arena_system

    systems = [f"gen-{i}/mirage-bench@1" for i in range(6)]
    names = [arena_system(s, "base") for s in systems]
    judged = names[:5]     # the sixth was never judged
    with store.write() as db:
        c = db.conn
        c.execute("INSERT INTO datasets (id, name, version, kind, format, content_hash, "
                  "created_at) VALUES (1, 'toy', 1, 'qa', 'mirage', 'h', 'x')")
        for q in range(1, 4):
            c.execute("INSERT INTO queries (id, dataset_id, query_id, text, language, answers, "
                      "reference_answer) VALUES (?, 1, ?, 'Which city is the capital?', 'en', "
                      "'[]', 'Paris is the capital of France.')", (q, f"q{q}"))
        c.execute("INSERT INTO runs (id, name, dataset_id, config, header, status, created_at, "
                  "updated_at) VALUES (1, 'r', 1, '{}', '{}', 'done', 'x', 'x')")
        c.execute("INSERT INTO arenas (id, run_id, name, mode, config, header, status, "
                  "created_at, updated_at) VALUES (1, 1, 'a1', 'pairwise', '{}', '{}', 'done', "
                  "'x', 'x')")
        words = "Paris is the capital of France".split()
        for i, system in enumerate(systems):
            for q in range(1, 4):
                # gen-i says the first i + 1 words of the reference: ROUGE-L grows with i
                text = " ".join(words[:i + 1]) + " and other things."
                key = f"{system}|{q}"
                c.execute("INSERT INTO generations (key, model_key, model_name, prompt, params, "
                          "text, created_at) VALUES (?, 'm', 'm', ?, '{}', ?, 'x')",
                          (key, key, text))
                c.execute("INSERT INTO run_items (run_id, system, setting, query_rowid, "
                          "generation_key, context) VALUES (1, ?, 'base', ?, ?, '[]')",
                          (system, q, key))
        # on queries 1 and 2 the higher-numbered system wins, except one upset per query
        for q in (1, 2):
            for i, a in enumerate(judged):
                for j in range(i + 1, len(judged)):
                    winner = "a" if (i, j) == (q, q + 1) else "b"
                    c.execute("INSERT INTO battles (arena_id, query_rowid, system_a, system_b, "
                              "winner, shown, judgment_keys, created_at) VALUES "
                              "(1, ?, ?, ?, ?, 'ab', '[]', 'x')", (q, a, judged[j], winner))
    compute_features(store, load_run(store, "r"))
    run = load_run(store, "r")
    report = surrogate_for_run(store, run, n_boot=50, seed=2, n_estimators=30)
    assert report.source == {"run": "r", "arena": "a1", "queries": 2, "battles": 20}
    assert report.n_judged == 5 and report.n_unjudged == 1
    assert "feat:rouge_l" in report.features
    assert "feat:citation_recall@10" in report.dropped_features   # no contexts: NULL for all
    rows = {r.system: r for r in report.rows}
    assert rows[names[4]].elo > rows[names[0]].elo and not rows[names[5]].judged
    assert rows[names[5]].predicted_rank <= 3     # says the most words of the reference
    assert report.tau.value > 0.5
    assert surrogate_for_run(store, run, "a1", n_boot=50, seed=2,
                             n_estimators=30).as_json() == report.as_json()
    with pytest.raises(ArenaNotFound, match="no arena named 'nope'"):
        surrogate_for_run(store, run, "nope")
