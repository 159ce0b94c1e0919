"""Counted once, passed along (issue 22): the statistics given an item's value counts, or the kappa margins taken as
matrix products, give exactly (bit for bit) what they give counting themselves, so the analysis JSON is unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from evalhub import stats
from evalhub.stats.kappa import _cohen_from_counts, _weight_matrix


def _matrices() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    likert = rng.integers(1, 6, size=(400, 4)).astype(float)
    likert[rng.random(likert.shape) < 0.3] = np.nan  # some items with one rating or none
    halves = rng.integers(2, 11, size=(300, 3)) / 2
    only_unpairable = np.full((5, 3), np.nan)
    only_unpairable[np.arange(5), np.arange(5) % 3] = [1, 2, 3, 4, 5]
    thirds = rng.integers(0, 9, size=(200, 3)) / 3  # off the whole/half-point grid
    # A value seen only on an item with one rating: not in alpha's domain, nor in Fleiss' categories.
    lone = np.array([[1, 2, np.nan], [2, 2, 1], [np.nan, 7, np.nan], [1, 1, 2]], dtype=float)
    return {"likert with gaps": likert, "halves": halves, "no pairable item": only_unpairable, "thirds": thirds,
            "a lone value": lone, "no rating": np.full((3, 2), np.nan)}


@pytest.mark.parametrize("name", list(_matrices()))
def test_statistics_given_the_value_counts_equal_the_statistics_counting_themselves(name: str) -> None:
    matrix = _matrices()[name]
    counts = stats.value_counts(matrix)
    assert stats.alpha_with_ci(matrix, ci_level="ordinal", n_boot=50, counts=counts) == stats.alpha_with_ci(
        matrix, ci_level="ordinal", n_boot=50)
    assert stats.fleiss_kappa(matrix, n_boot=50, counts=counts) == stats.fleiss_kappa(matrix, n_boot=50)
    np.testing.assert_array_equal(stats.majority_choice(matrix, counts=counts), stats.majority_choice(matrix))


def test_counts_from_long_ratings_equal_the_matrix_counts() -> None:
    matrix = _matrices()["likert with gaps"]
    item, _ = np.nonzero(~np.isnan(matrix))
    long = stats.item_value_counts(item, matrix[~np.isnan(matrix)], matrix.shape[0])
    counts = stats.value_counts(matrix)
    np.testing.assert_array_equal(long.values, counts.values)
    np.testing.assert_array_equal(long.counts, counts.counts)


def test_counts_of_other_items_are_refused() -> None:
    matrix = _matrices()["halves"]
    with pytest.raises(ValueError, match="items"):
        stats.fleiss_kappa(matrix, counts=stats.value_counts(matrix[:10]))


def _cohen_summed(counts: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The kappa of each replicate as it was computed before the margins became matrix products."""
    rows = counts.sum(axis=2)
    cols = counts.sum(axis=1)
    n = rows.sum(axis=1)
    expected = rows[:, :, None] * cols[:, None, :] / n[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = 1.0 - (w * counts).sum(axis=(1, 2)) / (w * expected).sum(axis=(1, 2))
    return np.where((w * expected).sum(axis=(1, 2)) > 0, kappa, np.nan)


@pytest.mark.parametrize("k", [2, 3, 5, 9])
def test_kappa_margins_as_products_give_the_summed_kappas_bit_for_bit(k: int) -> None:
    rng = np.random.default_rng(k)
    freq = rng.integers(0, 4000, size=k * k).astype(float)
    counts = rng.multinomial(int(freq.sum()), freq / freq.sum(), size=1000).astype(float).reshape(-1, k, k)
    counts[0] = 0
    counts[0, 1, 1] = 5  # one category only: undefined
    weightings = [_weight_matrix(k, name) for name in stats.WEIGHTS]
    for w, kappa in zip(weightings, _cohen_from_counts(counts, weightings), strict=True):
        np.testing.assert_array_equal(kappa, _cohen_summed(counts, w))
