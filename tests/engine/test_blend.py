"""``reference:blend`` and ``judge fit --method standardized-sum`` (issue 34): the sum of each
feature's difference divided by its standard deviation, worked out by hand on a tiny label
set; the packaged judge's verdicts with the real embedders; the shipped weights fitted again
from the shared RAGChecker labels (always there in CI: never skipped).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from testkit.labels import import_rows
from testkit.paths import SHARED_DATA

from engine.arena.judges.blend import (CPU_DEPENDENT_SD, SPEC, WEIGHTS_FILE, BlendJudge,
                                       record_differences, refit_record, shipped_blend)
from engine.arena.trust.calibrate import calibrate_judge
from engine.arena.judges.fit_methods import fit_standardized_sum, leave_one_domain_out
from engine.arena.judges.fitted import fit_judge, load_fitted_judge
from engine.arena.judges.specs import open_judge
from engine.arena.judges.reference import NeedsReference, logistic, reference_judge_names
from engine.store import Store
from mirage_tui import cli

RAGCHECKER = SHARED_DATA / "ragchecker-meta" / "human_labeled_pairs.json"

# --------------------------------------------------------------------------- by hand

REF = "alpha beta gamma delta"
FULL, PART, WRONG = REF, "alpha", "zeta eta theta iota kappa lambda"
# token F1 to REF: FULL 1, PART 2·1·0.25/1.25 = 0.4, WRONG 0; words 4, 1, 6
F1 = {FULL: 1.0, PART: 0.4, WRONG: 0.0}
WORDS = {FULL: 4, PART: 1, WRONG: 6}
# (answer A, answer B, people's label): the full answer beats the others, the partial one
# beats the wrong one
KINDS = ((WRONG, FULL, 2), (FULL, PART, -2), (PART, WRONG, -1))
DOMAINS = ("d1", "d2", "d3")


def tiny_rows(layout=((3, 3, 3),) * 3):
    """Per domain, how many pairs of each kind; two annotators agreeing on each."""
    rows, i = [], 0
    for domain, counts in zip(DOMAINS, layout):
        for (a, b, label), n in zip(KINDS, counts):
            for _ in range(n):
                for annotator in ("ann", "bob"):
                    rows.append({"query": f"question {i}?", "reference": REF, "answer_a": a,
                                 "answer_b": b, "label": label, "annotator": annotator,
                                 "pair_id": f"p{i}", "domain": domain})
                i += 1
    return rows


def hand_differences(rows):
    """Each pair's (ΔF1, Δlength) = f(B) - f(A), from the tables above."""
    pairs = {r["pair_id"]: r for r in rows}.values()
    x = np.array([[F1[p["answer_b"]] - F1[p["answer_a"]],
                   math.log1p(WORDS[p["answer_b"]]) - math.log1p(WORDS[p["answer_a"]])]
                  for p in pairs])
    y = np.array([1 if p["label"] > 0 else -1 for p in pairs])
    return x, y, [p["domain"] for p in pairs]


def population_sd(column) -> float:
    mean = sum(column) / len(column)
    return math.sqrt(sum((v - mean) ** 2 for v in column) / len(column))


def test_standardized_sum_weights_are_one_over_the_sd_and_verdicts_its_sign(store, tmp_path):
    rows = tiny_rows()
    import_rows(store, tmp_path, "tiny", rows)
    fit = fit_judge(store, "sum", "tiny", features=["f1", "length"], method="standardized-sum")
    x, y, domains = hand_differences(rows)
    sd = [population_sd(x[:, 0]), population_sd(x[:, 1])]
    assert fit.coefficients == [1.0, 1.0]
    assert fit.scale == pytest.approx(sd, rel=1e-9)
    assert fit.config["method"] == "standardized-sum" and "C" not in fit.config
    # z = ΔF1/sd_F1 + Δlen/sd_len: the full answer wins both ways, but the longer wrong
    # answer beats the one-word partial answer on length: people disagree on that kind
    z = {kind: (F1[b] - F1[a]) / sd[0]
         + (math.log1p(WORDS[b]) - math.log1p(WORDS[a])) / sd[1]
         for kind, (a, b, _) in enumerate(KINDS)}
    assert z[0] > 0 and z[1] < 0 and z[2] > 0
    judge = load_fitted_judge(store, "sum")
    for kind, (a, b, _) in enumerate(KINDS):
        v = judge.verdict({"query": "q?", "answer_a": a, "answer_b": b, "reference": REF})
        assert v.label == ("B" if z[kind] > 0 else "A")
        assert v.probs["B"] == pytest.approx(logistic(z[kind]))
    assert fit.cv_estimate("in_sample").value == pytest.approx(2 / 3)
    assert fit.cv_estimate("in_sample").n == 27
    # the F1 feature alone puts every pair on the people's side, whatever its scale
    assert fit.cv["by_feature"]["f1"]["value"] == 1.0


def test_leave_one_domain_out_fits_on_the_other_domains(store, tmp_path):
    # the kinds in other proportions per domain: each held-out domain gets another scale
    rows = tiny_rows(((4, 0, 1), (1, 4, 1), (2, 2, 6)))
    import_rows(store, tmp_path, "tiny", rows)
    fit = fit_judge(store, "sum", "tiny", features=["f1", "length"], method="standardized-sum")
    x, y, domains = hand_differences(rows)
    lodo = fit.cv["leave_one_domain_out"]
    assert lodo["domains"] == 3 and set(lodo["by_domain"]) == set(DOMAINS)
    hits = 0
    for held in DOMAINS:
        train = np.array([d != held for d in domains])
        sd = np.array([population_sd(x[train, 0]), population_sd(x[train, 1])])
        predicted = np.sign((x[~train] / sd).sum(axis=1))
        k = int((predicted == y[~train]).sum())
        hits += k
        assert lodo["by_domain"][held]["value"] == pytest.approx(k / int((~train).sum()))
    assert lodo["pooled"]["n"] == 21 and lodo["pooled"]["value"] == pytest.approx(hits / 21)
    assert lodo["pooled"]["lo"] < lodo["pooled"]["value"] < lodo["pooled"]["hi"]
    assert fit.leave_one_domain_out.value == pytest.approx(hits / 21)
    # no domains, or one: nothing to hold out
    assert leave_one_domain_out(x, y, ["d1"] * len(y), fit_standardized_sum) is None
    assert leave_one_domain_out(x, y, [None] * len(y), fit_standardized_sum) is None


# --------------------------------------------------------------------------- the packaged judge

def test_packaged_blend_verdicts_with_the_real_embedders(store):
    judge = open_judge(SPEC, "ignored", store=store)
    assert isinstance(judge, BlendJudge) and SPEC in reference_judge_names()
    assert judge.judge_name == SPEC and judge.template.id == "reference_blend@1"
    assert judge.needs_reference
    shipped = shipped_blend()
    ref = "The Eiffel Tower is 330 metres tall and stands in Paris."
    a = "It is in Paris and is about 330 metres tall."
    b = "Bananas are a good source of potassium."
    fields = {"query": "How tall is the Eiffel Tower?", "answer_a": a, "answer_b": b,
              "reference": ref}
    v = judge.verdict(fields)
    raw = json.loads(v.raw)
    diffs = [raw["features"][f] for f in shipped.features]
    z = sum(d / s for d, s in zip(diffs, shipped.scale))
    assert all(d < 0 for d in diffs)            # every similarity prefers A here
    # the record keeps each difference and the logit to 6 decimals, so z from the rounded
    # differences can be off by half a unit in the 6th place of each, divided by its scale
    rounding = 0.5e-6 * (1 + sum(1 / s for s in shipped.scale))
    assert abs(raw["logit"] - z) <= rounding
    assert v.label == "A" and v.method == "reference"
    assert v.probs["B"] == pytest.approx(logistic(raw["logit"]))
    swapped = judge.verdict({**fields, "answer_a": b, "answer_b": a})
    assert swapped.label == "B" and swapped.probs["B"] == pytest.approx(v.probs["A"])
    assert judge.verdict({**fields, "answer_b": a}).label == "tie"
    with pytest.raises(NeedsReference, match="judge 'reference:blend' compares each answer"):
        judge.fields("q?", a, b, reference=None)
    # its identity is the blend's, not the fitted judge's it was fitted as
    assert judge.generator.identity.backend == "reference"
    assert judge.generator.identity.sha256 != shipped.record["fit_sha256"]


def test_shipped_figures_say_where_they_came_from():
    shipped = shipped_blend()
    assert shipped.features == ("f1", "cos:minilm-l6-v2", "cos:e5-small-q4")
    assert shipped.weights == pytest.approx([1 / s for s in shipped.scale])
    src = shipped.source
    assert src["file"].endswith("ragchecker-meta/human_labeled_pairs.json")
    assert len(src["sha256"]) == 64 and src["pairs"] == 196 and src["domains"] == 7
    assert src["decisive_pairs"] == shipped.in_sample.n == shipped.leave_one_domain_out.n
    assert "scripts/fit_blend.py" in src["command"] and src["fitted_on"]
    assert sum(e.n for e in shipped.by_domain.values()) == shipped.leave_one_domain_out.n
    assert shipped.in_sample.lo < shipped.in_sample.value < shipped.in_sample.hi
    assert "leave-one-domain-out (7 domains)" in shipped.summary()


# --------------------------------------------------------------------------- the shared labels

@pytest.mark.slow
def test_shipped_weights_reproduce_from_the_shared_labels_and_calibrate(tmp_path, capsys,
                                                                       monkeypatch):
    """Every embedding of the 583 texts, once: minutes on 2 cores."""
    monkeypatch.setenv("COLUMNS", "250")     # judge list's row read whole, on one line
    assert RAGCHECKER.exists(), f"the shared labels are missing: {RAGCHECKER}"
    db = tmp_path / "w.db"
    store = Store(db)
    try:
        fresh = refit_record(store, RAGCHECKER)
    finally:
        store.close()
    shipped = json.loads(WEIGHTS_FILE.read_text())
    assert record_differences(shipped, fresh) == []
    for f, refit, kept in zip(shipped["features"], fresh["scale"], shipped["scale"]):
        assert refit == pytest.approx(kept, rel=max(1e-6, CPU_DEPENDENT_SD.get(f, 0.0))), f
    assert CPU_DEPENDENT_SD.keys() <= set(shipped["features"]) - {"f1"}   # F1 is always exact
    assert fresh["figures"]["in_sample"] == shipped["figures"]["in_sample"]
    assert fresh["figures"]["leave_one_domain_out"] == shipped["figures"]["leave_one_domain_out"]
    # the packaged judge calibrated in the product agrees as the fit said, and is marked
    assert cli.main(["judge", "calibrate", "--judge", SPEC, "--labels", "ragchecker",
                     "--db", str(db), "--boot", "50", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["figures"]
    assert figures["sign_accuracy"] == pytest.approx(shipped["figures"]["in_sample"])
    assert cli.main(["judge", "list", "--db", str(db)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith(SPEC))
    assert row.endswith("(in-sample: fitted on these labels)")
    store = Store(db)
    try:
        again = calibrate_judge(store, "ragchecker", SPEC, n_boot=50)
    finally:
        store.close()
    assert again.judge_calls == 0                # cached verdicts: the same identity
