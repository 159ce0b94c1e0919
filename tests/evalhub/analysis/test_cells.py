"""``common_items`` gives np.intersect1d's indices of two cells' sorted distinct items; ``distinct_pairs`` counts what
np.unique counts."""

from __future__ import annotations

import numpy as np
import pytest

from evalhub.analysis.cells import common_items
from evalhub.analysis.reading import distinct_pairs


@pytest.mark.parametrize("seed", range(6))
def test_common_items_are_intersect1d_indices(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = np.flatnonzero(rng.random(2_000) < 0.6)
    b = np.flatnonzero(rng.random(2_000) < [0.0, 0.3, 0.9, 1.0][seed % 4])
    _, expected_a, expected_b = np.intersect1d(a, b, assume_unique=True, return_indices=True)
    got_a, got_b = common_items(a, b)
    np.testing.assert_array_equal(got_a, expected_a)
    np.testing.assert_array_equal(got_b, expected_b)


def test_common_items_of_empty_cells() -> None:
    empty = np.empty(0, dtype=np.int64)
    for a, b in ((empty, np.arange(3)), (np.arange(3), empty), (empty, empty)):
        assert [x.size for x in common_items(a, b)] == [0, 0]


@pytest.mark.parametrize("seed", range(4))
def test_common_items_of_unsorted_items_are_intersect1d_indices(seed: int) -> None:
    # The "(all)" cell's items come group by group ([3, 4, 5, 0, 1, 2]): the second dashboard review found 2 of 6
    # common items by a binary search that assumed sorted input.
    rng = np.random.default_rng(seed)
    a = rng.permutation(np.flatnonzero(rng.random(500) < 0.7))
    b = np.concatenate([np.arange(250, 500), np.arange(0, 250)]) if seed % 2 else rng.permutation(500)
    _, expected_a, expected_b = np.intersect1d(a, b, assume_unique=True, return_indices=True)
    got_a, got_b = common_items(a, b)
    np.testing.assert_array_equal(got_a, expected_a)
    np.testing.assert_array_equal(got_b, expected_b)
    assert got_a.size == np.intersect1d(a, b).size > 0


@pytest.mark.parametrize("n, items, questions", [(0, 1, 1), (1, 1, 1), (7, 3, 2), (5_000, 50, 4), (20_000, 2_000, 7)])
def test_distinct_pairs_counts_what_numpy_unique_counts(n: int, items: int, questions: int) -> None:
    """A pool's number of (item, question) pairs, as np.unique over the stacked pairs counts them."""
    rng = np.random.default_rng(n)
    item, question = rng.integers(0, items, n), rng.integers(0, questions, n)
    expected = np.unique(np.stack([item, question]), axis=1).shape[1] if n else 0
    assert distinct_pairs(item, question) == expected
