"""The human ceiling, checked against plain loops over the raw annotator dicts of ../shared/data/AltTest.

SummEval (3 experts, 1-5, negative RMSE) and CEBaB aspects (4 of 10 crowd workers per item, accuracy).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from evalhub import stats
from tests.support.shared_ratings import AltTestData, load_alttest

NAN = np.nan


def ceiling_by_loops(
    humans: dict[str, dict[str, float]], judge: dict[str, float], scoring: str
) -> dict[str, tuple[int, float, float]]:
    """Per annotator: (items, mean score of the annotator, mean score of the judge), as the docstring defines."""
    per_item: dict[str, dict[str, float]] = {}
    for annotator, labels in humans.items():
        for instance, label in labels.items():
            per_item.setdefault(instance, {})[annotator] = label

    def score(label: float, others: list[float]) -> float:
        if scoring == "accuracy":
            return sum(1.0 for o in others if o == label) / len(others)
        return -math.sqrt(sum((label - o) ** 2 for o in others) / len(others))

    out = {}
    for annotator, labels in humans.items():
        own, judged = [], []
        for instance, label in labels.items():
            others = [v for a, v in per_item[instance].items() if a != annotator]
            if not others or instance not in judge:
                continue
            own.append(score(label, others))
            judged.append(score(judge[instance], others))
        if own:
            out[annotator] = (len(own), sum(own) / len(own), sum(judged) / len(judged))
    return out


def check_against_loops(data: AltTestData, scoring: str) -> int:
    matrix = data.matrix()
    checked = 0
    for llm, labels in data.llms.items():
        result = stats.human_ceiling(matrix, data.llm_vector(llm), scoring=scoring)
        expected = ceiling_by_loops(data.humans, labels, scoring)
        assert result.scoring == scoring
        assert [r.rater for r in result.raters] == list(range(len(data.annotators)))
        better = 0
        for annotator, rater in zip(data.annotators, result.raters, strict=True):
            n, human, judge = expected[annotator]
            assert rater.n_items == n
            assert rater.human == pytest.approx(human, abs=1e-9)
            assert rater.judge == pytest.approx(judge, abs=1e-9)
            assert rater.human_ci.low <= rater.human <= rater.human_ci.high
            assert rater.judge_ci.low <= rater.judge <= rater.judge_ci.high
            better += judge > human
            checked += 1
        assert (result.judge_better, result.n_compared) == (better, len(data.annotators))
        assert (
            result.summary
            == f"the judge agrees with your raters better than {better} of {len(data.annotators)} of them do"
        )
    return checked


def test_ceiling_equals_plain_loops_on_summeval_with_negative_rmse() -> None:
    assert check_against_loops(load_alttest("summeval"), "neg_rmse") == 6 * 3


def test_ceiling_equals_plain_loops_on_cebab_aspects_with_accuracy() -> None:
    assert check_against_loops(load_alttest("cebab_aspects"), "accuracy") == 6 * 10


def test_ceiling_with_a_fractional_judge_mean_equals_plain_loops() -> None:
    # A pool's mean of three samples (thirds), as the alt-test uses for Likert.
    data = load_alttest("summeval")
    rng = np.random.default_rng(3)
    judge = {i: float(v) for i, v in zip(data.instances, rng.integers(3, 16, len(data.instances)) / 3, strict=True)}
    vector = np.array([judge[i] for i in data.instances])
    result = stats.human_ceiling(data.matrix(), vector, scoring="neg_rmse")
    expected = ceiling_by_loops(data.humans, judge, "neg_rmse")
    for annotator, rater in zip(data.annotators, result.raters, strict=True):
        assert rater.judge == pytest.approx(expected[annotator][2], abs=1e-9)
        assert rater.human == pytest.approx(expected[annotator][1], abs=1e-9)


def test_ceiling_by_hand_with_missing_ratings_and_an_unjudged_item() -> None:
    humans = [[1, 1, 2], [2, 2, 2], [1, 2, NAN], [1, NAN, NAN], [2, 1, 1]]
    judge = [1, 2, 2, 1, NAN]
    result = stats.human_ceiling(humans, judge, scoring="accuracy")
    first, second, third = result.raters
    # Rater 0: item 0 others (1, 2) -> 1/2; item 1 others (2, 2) -> 1; item 2 others (2) -> 0. Item 3 has no
    # other rating and item 4 no judge label. The judge on the same items: 1/2, 1, 1.
    assert (first.n_items, first.human, first.judge) == (3, pytest.approx(0.5), pytest.approx(5 / 6))
    # Rater 1: item 0 (1, 2) -> 1/2, item 1 -> 1, item 2 (1) -> 0; judge 1/2, 1, 0.
    assert (second.n_items, second.human, second.judge) == (3, pytest.approx(0.5), pytest.approx(0.5))
    # Rater 2: item 0 (1, 1) -> 0, item 1 -> 1; judge 1, 1.
    assert (third.n_items, third.human, third.judge) == (2, pytest.approx(0.5), pytest.approx(1.0))
    assert (result.judge_better, result.n_compared) == (2, 3)  # a tie (rater 1) is not better
    rmse = stats.human_ceiling(humans, judge, scoring="neg_rmse")
    # Rater 0, item 0: -sqrt((0 + 1) / 2); item 1: 0; item 2: -1.
    assert rmse.raters[0].human == pytest.approx((-math.sqrt(0.5) + 0 - 1) / 3)
    # The judge on rater 0's items: item 0 label 1 -> -sqrt(0.5); item 1 -> 0; item 2 label 2 vs (2) -> 0.
    assert rmse.raters[0].judge == pytest.approx(-math.sqrt(0.5) / 3)


def test_a_rater_without_a_shared_item_is_undefined_with_a_reason() -> None:
    result = stats.human_ceiling([[1, 1, NAN], [2, 2, NAN], [NAN, NAN, 1]], [1, 2, 1], scoring="accuracy")
    lonely = result.raters[2]
    assert lonely.human is None and lonely.judge is None and lonely.n_items == 0
    assert "no item" in (lonely.reason or "") and lonely.human_ci.low is None
    assert result.n_compared == 2


def test_no_comparable_rater_gives_no_summary_and_a_note() -> None:
    for humans, judge in (([[1, NAN], [NAN, 2]], [1, 2]), ([[1, 2]], [NAN]), (np.empty((0, 2)), [])):
        result = stats.human_ceiling(humans, judge, scoring="neg_rmse")
        assert result.summary is None and result.n_compared == 0
        assert any("undefined" in note for note in result.notes)


def test_low_or_undefined_human_alpha_adds_a_note_and_a_high_one_does_not() -> None:
    humans, judge = [[1, 1, 2], [2, 2, 2], [1, 2, 1]], [1, 2, 1]
    low = stats.human_ceiling(humans, judge, scoring="accuracy", human_alpha=stats.Stat(0.5))
    assert low.notes == (
        "the raters agree little with each other (alpha 0.50 < 0.667): comparisons with them mean little",
    )
    undefined = stats.human_ceiling(humans, judge, scoring="accuracy", human_alpha=stats.Stat(None, "no variation"))
    assert "undefined (no variation)" in undefined.notes[0]
    assert (
        stats.human_ceiling(humans, judge, scoring="accuracy", human_alpha=stats.Stat(stats.LOW_HUMAN_ALPHA)).notes
        == ()
    )
    assert stats.human_ceiling(humans, judge, scoring="accuracy").notes == ()


def test_each_interval_is_scipys_t_interval_of_the_raters_item_scores() -> None:
    # CEBaB aspects (accuracy): per rater, the scores behind each mean, recomputed by plain loops, and
    # scipy's t interval of their mean.
    data = load_alttest("cebab_aspects")
    matrix, judge = data.matrix(), data.llm_vector("gpt-4o")
    result = stats.human_ceiling(matrix, judge, scoring="accuracy", confidence=0.9)
    checked = 0
    for rater in result.raters:
        column = matrix[:, rater.rater]
        rows = [i for i in range(matrix.shape[0]) if not np.isnan(column[i]) and not np.isnan(judge[i])
                and (~np.isnan(matrix[i])).sum() >= 2]
        others = [[matrix[i, k] for k in range(matrix.shape[1]) if k != rater.rater and not np.isnan(matrix[i, k])]
                  for i in rows]
        own = np.array([np.mean([o == column[i] for o in os]) for i, os in zip(rows, others, strict=True)])
        judged = np.array([np.mean([o == judge[i] for o in os]) for i, os in zip(rows, others, strict=True)])
        assert rater.n_items == len(rows)
        for ci, scores in ((rater.human_ci, own), (rater.judge_ci, judged)):
            expected = sps.ttest_1samp(scores, 0).confidence_interval(0.9)
            assert ci.confidence == 0.9
            assert ci.low == pytest.approx(expected.low, abs=1e-9)
            assert ci.high == pytest.approx(expected.high, abs=1e-9)
            checked += 1
    assert checked == 2 * len(data.annotators)


def test_an_interval_of_equal_scores_is_a_point_and_one_item_has_none() -> None:
    assert stats.mean_ci(np.array([0.5, 0.5, 0.5]), 0.95) == stats.MeanCI(0.5, 0.5, 0.95)
    single = stats.mean_ci(np.array([0.5]), 0.95)
    assert single.low is None and single.high is None and "one item" in (single.reason or "")
    # Two raters, one shared item: each rater has one scored item, so a mean but no interval.
    result = stats.human_ceiling([[1, 2]], [1], scoring="accuracy")
    assert [r.n_items for r in result.raters] == [1, 1]
    assert all(r.human is not None and r.human_ci.low is None for r in result.raters)


def test_an_interval_stays_within_the_scores_range() -> None:
    # Three of four items unanimous: the rater's mean accuracy is near 1 and its t interval would pass 1.
    result = stats.human_ceiling([[1, 1, 1], [1, 1, 1], [1, 1, 2], [2, 2, 2]], [1, 1, 1, 2], scoring="accuracy")
    unclipped = sps.ttest_1samp([1.0, 1.0, 0.5, 1.0], 0).confidence_interval(0.95)
    rater = result.raters[0]
    assert unclipped.high > 1 and rater.human_ci.high == 1.0
    assert rater.human_ci.low == pytest.approx(unclipped.low, abs=1e-12)
    humans = np.array([[1, 2, 1], [5, 5, 4], [3, 3, 3], [2, 1, 1]], dtype=float)
    for r in stats.human_ceiling(humans, [1, 5, 3, 2], scoring="neg_rmse").raters:
        assert r.human_ci.high <= 0 and r.judge_ci.high <= 0


def test_bad_ceiling_input_raises_a_one_line_error() -> None:
    with pytest.raises(ValueError, match="unknown scoring 'kappa'"):
        stats.human_ceiling([[1, 2]], [1], scoring="kappa")
    with pytest.raises(ValueError, match="judge has 2 labels for 1 items"):
        stats.human_ceiling([[1, 2]], [1, 2], scoring="accuracy")
    with pytest.raises(ValueError, match="2-D"):
        stats.human_ceiling([1, 2], [1, 2], scoring="accuracy")
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        stats.human_ceiling([[1, 2]], [1], scoring="accuracy", confidence=1.0)
