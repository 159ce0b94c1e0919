"""The position-bias statistics (evalhub/stats/position.py): the Wilson interval against statsmodels, and
the flip rate and first-position share counted by hand."""
from __future__ import annotations

import math

import pytest
from statsmodels.stats.proportion import proportion_confint

from evalhub.stats.position import first_position_share, position_bias, wilson_interval

NAN = math.nan


@pytest.mark.parametrize(("k", "n", "confidence"), [(0, 10, 0.95), (3, 10, 0.95), (10, 10, 0.95), (21, 24, 0.9),
                                                    (512, 1000, 0.99), (1, 1, 0.95)])
def test_the_wilson_interval_matches_statsmodels(k, n, confidence):
    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    result = wilson_interval(k, n, confidence=confidence)
    assert result.value == pytest.approx(k / n)
    assert result.low == pytest.approx(low, abs=1e-12) and result.high == pytest.approx(high, abs=1e-12)


def test_no_trials_has_no_value_and_says_why():
    result = wilson_interval(0, 0)
    assert result.value is None and result.low is None and result.reason == "no trials"


@pytest.mark.parametrize(("k", "n", "confidence"), [(3, 2, 0.95), (-1, 2, 0.95), (1, 2, 1.0)])
def test_bad_input_is_refused(k, n, confidence):
    with pytest.raises(ValueError):
        wilson_interval(k, n, confidence=confidence)


def test_a_judge_that_always_answers_a_flips_on_every_pair_and_always_picks_the_first_position():
    # Original "A" each time; the swapped prompt's "A" is the original B, so its mapped choice is 2.
    result = position_bias([1] * 20, [2] * 20)
    assert result.n_pairs == 20 and (result.flip.k, result.flip.n) == (20, 20)
    assert (result.first_position.k, result.first_position.n) == (40, 40)
    assert result.prefers_first and not result.prefers_second


def test_a_consistent_judge_never_flips_and_has_a_first_position_share_of_one_half():
    result = position_bias([1, 2, 1, 1, 2] * 4, [1, 2, 1, 1, 2] * 4)
    assert result.flip.value == 0.0 and result.first_position.value == 0.5
    assert not result.prefers_first and not result.prefers_second


def test_counts_by_hand_with_ties_and_missing_answers():
    original = [1, 2, 3, 1, NAN, 2]
    swapped = [1, 1, 3, 3, 2, 2]  # mapped back: same, flip, same (tie), flip (tie), no pair, same
    result = position_bias(original, swapped)
    assert result.n_pairs == 5 and result.flip.k == 2
    # Decisive answers: original 1, 2, 1, 2 and swapped 1, 1, 2 -> 7; first position: original A (2) + swapped B (1).
    assert (result.first_position.k, result.first_position.n) == (3, 7)


def test_a_judge_that_prefers_the_second_position_is_named_so():
    result = position_bias([2] * 30, [1] * 30)
    assert result.first_position.value == 0.0 and result.prefers_second and not result.prefers_first


def test_lengths_must_match():
    with pytest.raises(ValueError, match="same length"):
        position_bias([1, 2], [1])


def test_the_raters_first_position_share_counts_by_hand():
    # Choices in the file's orientation (1 = A, 2 = B, 3 = tie), with whether the rater saw the pair swapped.
    # Shown first: A unswapped (1st), B swapped (2nd, 5th). Not first: B unswapped (3rd), A swapped (4th).
    # Left out: the tie and the missing answer.
    choices = [1.0, 2.0, 2.0, 1.0, 2.0, 3.0, math.nan]
    swapped = [False, True, False, True, True, False, True]
    share = first_position_share(choices, swapped)
    assert (share.k, share.n) == (3, 5)
    assert (share.low, share.high) == pytest.approx(proportion_confint(3, 5, alpha=0.05, method="wilson"))


def test_the_raters_share_refuses_unequal_lengths_and_says_why_when_nothing_is_decisive():
    with pytest.raises(ValueError, match="same length"):
        first_position_share([1.0, 2.0], [True])
    empty = first_position_share([3.0, math.nan], [True, False])
    assert (empty.value, empty.reason) == (None, "no trials")
