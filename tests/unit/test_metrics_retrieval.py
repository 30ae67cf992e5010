"""engine.metrics.retrieval against hand-worked cases (MIRAGE §1 retrieval)."""

import math

import pytest

from engine.metrics.retrieval import (
    dcg_at_k,
    f1_at_k,
    ndcg_at_k,
    ndcg_mirage_at_k,
    precision_at_k,
    recall_at_k,
    retrieval_report,
    retrieval_scores,
)

L3 = 1 / math.log2(3)  # the discount at rank 2: 0.6309


def test_precision_recall_f1_hand_worked():
    rel = [1, 0, 1, 0, 0]  # two gold chunks, found at ranks 1 and 3
    assert precision_at_k(rel, 1) == 1.0
    assert precision_at_k(rel, 3) == pytest.approx(2 / 3)
    assert precision_at_k(rel, 5) == pytest.approx(2 / 5)
    assert recall_at_k(rel, 1, 2) == 0.5
    assert recall_at_k(rel, 3, 2) == 1.0
    # P = 2/3, R = 1 -> F1 = 2 * 2/3 / (5/3) = 0.8
    assert f1_at_k(rel, 3, 2) == pytest.approx(0.8)
    assert f1_at_k(rel, 1, 2) == pytest.approx(2 * 1 * 0.5 / 1.5)


def test_recall_and_f1_without_gold_are_zero():
    assert recall_at_k([0, 0, 0], 3, 0) == 0.0
    assert f1_at_k([0, 0, 0], 3, 0) == 0.0
    assert ndcg_at_k([0, 0, 0], 3, 0) == 0.0


def test_dcg_hand_worked():
    # 1/log2(2) + 0/log2(3) + 1/log2(4) = 1 + 0.5
    assert dcg_at_k([1, 0, 1], 3) == pytest.approx(1.5)
    assert dcg_at_k([1, 0, 1], 1) == 1.0
    assert dcg_at_k([], 5) == 0.0


def test_ndcg_standard_hand_worked():
    # ideal for |gold| = 2: 1 + 1/log2(3)
    assert ndcg_at_k([1, 0, 1], 3, 2) == pytest.approx(1.5 / (1 + L3))
    assert ndcg_at_k([0, 1, 0], 3, 1) == pytest.approx(L3)


def test_mirage_quirk_one_hit_at_rank_one_with_two_gold_scores_one():
    """METRICS.md §1: the reference's ideal DCG sorts the retrieved relevances."""
    rel = [1, 0, 0, 0, 0]
    assert ndcg_mirage_at_k(rel, 5) == 1.0
    assert ndcg_at_k(rel, 5, 2) == pytest.approx(1 / (1 + L3))  # 0.6131


def test_mirage_variant_sorts_the_whole_retrieved_list_before_cutting():
    rel = [0, 1, 0, 0, 1]  # hits at ranks 2 and 5
    # ideal = sorted(all five)[:3] = [1, 1, 0] -> 1 + 1/log2(3); DCG@3 = 1/log2(3)
    assert ndcg_mirage_at_k(rel, 3) == pytest.approx(L3 / (1 + L3))  # 0.3869
    # cutting first would give [0, 1, 0] -> ideal 1 -> 0.6309: not what the reference does
    assert ndcg_mirage_at_k(rel[:3], 3) == pytest.approx(L3)


def test_no_hit_scores_zero_in_both_ndcgs():
    assert ndcg_mirage_at_k([0, 0, 0, 0, 0], 5) == 0.0
    assert ndcg_at_k([0, 0, 0, 0, 0], 5, 2) == 0.0


def test_k_larger_than_the_list():
    assert precision_at_k([1], 5) == pytest.approx(0.2)  # still divided by k
    assert recall_at_k([1], 5, 1) == 1.0
    assert ndcg_at_k([1], 5, 1) == 1.0
    assert ndcg_mirage_at_k([1], 5) == 1.0
    # [0, 1] with three gold chunks, k = 5: ideal = 1 + 1/log2(3) + 1/2
    assert ndcg_at_k([0, 1], 5, 3) == pytest.approx(L3 / (1 + L3 + 0.5))
    assert ndcg_mirage_at_k([0, 1], 5) == pytest.approx(L3)


def test_k_must_be_positive():
    with pytest.raises(ValueError):
        precision_at_k([1], 0)
    with pytest.raises(ValueError):
        dcg_at_k([1], 0)


def test_retrieval_scores_keys():
    scores = retrieval_scores([1, 0, 0], 2, ks=(1, 3))
    assert set(scores) == {f"{m}@{k}" for m in ("p", "r", "f1", "ndcg", "ndcg_mirage")
                           for k in (1, 3)}
    assert scores["ndcg_mirage@3"] == 1.0
    assert scores["r@1"] == 0.5


def test_retrieval_report_means_over_queries_with_cis():
    per_query = [([1, 0, 0, 0, 0], 2), ([0, 0, 1, 0, 1], 2), ([0, 0, 0, 0, 0], 1)]
    report = retrieval_report(per_query, n_boot=200, seed=1)
    assert set(report) == set(retrieval_scores([], 0))
    assert report["p@1"].value == pytest.approx(1 / 3)
    assert report["r@5"].value == pytest.approx((0.5 + 1 + 0) / 3)
    # query 2: DCG@5 = 1/log2(4) + 1/log2(6) over the ideal [1, 1, 0, 0, 0] = 1 + 1/log2(3)
    second = (0.5 + 1 / math.log2(6)) / (1 + L3)
    assert report["ndcg_mirage@5"].value == pytest.approx((1 + second + 0) / 3)
    for est in report.values():
        assert est.n == 3
        assert est.lo <= est.value + 1e-12 and est.value <= est.hi + 1e-12
    assert retrieval_report(per_query, n_boot=200, seed=1) == report


def test_retrieval_report_empty():
    report = retrieval_report([])
    assert report["p@1"].value is None and report["p@1"].n == 0
