"""The grid fast paths of evalhub.stats.inputs give exactly np.unique's and np.searchsorted's results."""

from __future__ import annotations

import numpy as np
import pytest

from evalhub.stats.inputs import distinct_codes, positions_in, unique_first_counts

CASES = {
    "whole points": np.array([3, 1, 5, 5, 2, 1, 4], dtype=float),
    "half points": np.array([1.5, 1, 5, 4.5, 2, 1.5, 3], dtype=float),
    "negative halves and zero": np.array([-2.5, 0, -0.0, 2, -2.5, 7.5], dtype=float),
    "thirds (off the grid)": np.array([1 / 3, 2 / 3, 1, 7 / 3, 1 / 3]),
    "continuous": np.random.default_rng(0).normal(size=500),
    "a wide span": np.array([0, 1e9, 3, 1e9], dtype=float),
    "large random Likert": np.random.default_rng(1).integers(1, 6, size=10_000).astype(float),
    "large random halves": np.random.default_rng(2).integers(2, 11, size=10_000) / 2,
    "one value": np.array([4.0]),
    "empty": np.empty(0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_distinct_codes_equal_np_unique(name: str) -> None:
    values = CASES[name]
    expected, inverse = np.unique(values, return_inverse=True)
    distinct, codes = distinct_codes(values)
    np.testing.assert_array_equal(distinct, expected)
    np.testing.assert_array_equal(codes, inverse.reshape(-1))


@pytest.mark.parametrize("name", list(CASES))
def test_positions_in_equals_searchsorted_for_values_among_the_sorted_ones(name: str) -> None:
    values = np.tile(CASES[name], 20)  # above the lookup's size threshold
    domain = np.unique(values)
    np.testing.assert_array_equal(positions_in(domain, values), np.searchsorted(domain, values))


def test_positions_in_falls_back_for_values_outside_the_grid_range() -> None:
    domain = np.array([1.0, 2.0, 3.0])
    values = np.tile([0.0, 4.0, 2.0], 30)
    np.testing.assert_array_equal(positions_in(domain, values), np.searchsorted(domain, values))


@pytest.mark.parametrize("keys", [
    np.array([5, 3, 5, 0, 3, 3, 9]),
    np.random.default_rng(3).integers(0, 50, size=5_000),
    np.array([2**40, 7, 2**40]),  # a wide span: np.unique's path
    np.array([4]),
], ids=["small", "random", "wide", "one"])
def test_unique_first_counts_equals_np_unique(keys: np.ndarray) -> None:
    for got, expected in zip(unique_first_counts(keys), np.unique(keys, return_index=True, return_counts=True),
                             strict=True):
        np.testing.assert_array_equal(got, expected)
