"""A study's ratings split into cells, one per question x group x pool, and each cell's matrices.

A cell holds the pool's ratings as two matrices (rows = items, NaN = missing):

- the *compact* matrix, whose column j is an item's j-th rating. Krippendorff's alpha, full
  agreement, the descriptives and the one-way ICC treat raters as interchangeable within an item,
  so they are unchanged by that reordering, and the matrix stays small when many crowd workers
  each rate a few items (1,000 workers x 200,000 items would not fit in memory as rater columns);
- the *rater* matrix, whose columns are the pool's raters (human raters, or a judge run's sample
  indices), built only for the pairwise Kendall's tau (table 6), which needs rater identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evalhub import stats
from evalhub.analysis.reading import ALL_GROUPS, Pool, StudyData


@dataclass
class Cell:
    """One question x group x pool: its ratings, sorted by item then rater."""

    question: str
    group: str
    pool: Pool
    item: np.ndarray  # study item index per rating
    rater: np.ndarray  # index into pool.raters
    score: np.ndarray
    _items: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _means: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _raters: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    # Built once: the cell rows, kappa, the ceiling, pairwise tau and the alt-test's pool labels each read them.
    # Read-only, so that no reader can change what the next one sees.
    _compact: np.ndarray | None = field(default=None, repr=False)
    _rater_matrix: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    # Each item's count of each value: alpha, Fleiss' kappa and the human majority each count them.
    _value_counts: stats.ValueCounts | None = field(default=None, repr=False)

    def raters(self) -> tuple[np.ndarray, np.ndarray]:
        """(the pool's rater indices present in this cell, column of each rating).

        Counting over the pool's dense rater index avoids a sort per cell.
        """
        if self._raters is None:
            present = np.bincount(self.rater, minlength=self.pool.raters.size) > 0
            column_of = np.cumsum(present) - 1
            self._raters = (np.flatnonzero(present), column_of[self.rater])
        return self._raters

    def items_and_inverse(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(unique item indices, row of each rating, first rating of each item); ratings are item-sorted."""
        if self._items is None:
            new_item = np.empty(self.item.size, dtype=bool)
            new_item[:1] = True
            np.not_equal(self.item[1:], self.item[:-1], out=new_item[1:])
            starts = np.flatnonzero(new_item)
            self._items = (self.item[starts], np.cumsum(new_item) - 1, starts)
        return self._items

    def compact_matrix(self) -> np.ndarray:
        """The compact matrix (read-only)."""
        if self._compact is None:
            items, inverse, starts = self.items_and_inverse()
            if items.size == 0:
                matrix = np.empty((0, 0))
            else:
                position = np.arange(self.item.size) - starts[inverse]
                matrix = np.full((items.size, int(position.max()) + 1), np.nan)
                matrix[inverse, position] = self.score
            matrix.flags.writeable = False
            self._compact = matrix
        return self._compact

    def rater_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """(rater matrix, rater id of each column), read-only."""
        if self._rater_matrix is None:
            items, inverse, _ = self.items_and_inverse()
            raters, column = self.raters()
            matrix = np.full((items.size, raters.size), np.nan)
            matrix[inverse, column] = self.score
            matrix.flags.writeable = False
            self._rater_matrix = (matrix, raters)
        return self._rater_matrix

    def value_counts(self) -> stats.ValueCounts:
        """Each item's (row's) count of each distinct score; the same for the compact and the rater matrix."""
        if self._value_counts is None:
            items, inverse, _ = self.items_and_inverse()
            self._value_counts = stats.item_value_counts(inverse, self.score, items.size)
        return self._value_counts

    def item_means(self) -> tuple[np.ndarray, np.ndarray]:
        """(item indices, mean score of each)."""
        if self._means is None:
            items, inverse, _ = self.items_and_inverse()
            sums = np.bincount(inverse, weights=self.score, minlength=items.size)
            counts = np.bincount(inverse, minlength=items.size)
            self._means = (items, sums / np.maximum(counts, 1))
        return self._means


def common_items(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``a`` and in ``b`` of the items both hold, in item order, for distinct item indices:
    ``np.intersect1d(a, b, assume_unique=True, return_indices=True)[1:]``, by a binary search instead of a sort of
    both when both are sorted (a group's cell is; the pooled "(all)" cell need not be)."""
    if b.size == 0:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    if (a.size > 1 and np.any(a[1:] < a[:-1])) or (b.size > 1 and np.any(b[1:] < b[:-1])):
        # The "(all)" cell joins its groups' items group by group, so they need not be in item order, and a
        # binary search then misses items (the second dashboard review: 2 of 6 found, a tau of -1.00 for 0.16).
        _, in_a, in_b = np.intersect1d(a, b, assume_unique=True, return_indices=True)
        return in_a, in_b
    position = np.minimum(np.searchsorted(b, a), b.size - 1)
    in_both = b[position] == a
    return np.flatnonzero(in_both), position[in_both]


def study_cells(data: StudyData) -> dict[tuple[str, str, str], Cell]:
    """Split every pool into question x group cells (plus the pooled ALL_GROUPS cell per question)."""
    cells: dict[tuple[str, str, str], Cell] = {}
    n_groups = len(data.groups)
    n_items = max(int(data.item_ids.size), 1)
    for pool in data.pools:
        group = data.item_group[pool.item] if pool.item.size else np.empty(0, dtype=np.int64)
        block = pool.question * n_groups + group
        rater_index = pool.rater_index
        n_raters = max(int(pool.raters.size), 1)
        if (len(data.questions) * n_groups + 1) * n_items * n_raters < 2**62:
            order = np.argsort((block * n_items + pool.item) * n_raters + rater_index, kind="stable")
        else:  # would overflow int64: slower but exact
            order = np.lexsort((rater_index, pool.item, block))
        item, rater, score, block = pool.item[order], rater_index[order], pool.score[order], block[order]
        bounds = np.searchsorted(block, np.arange(len(data.questions) * n_groups + 1))
        for qi, question in enumerate(data.questions):
            for gi, group_name in enumerate(data.groups):
                lo, hi = bounds[qi * n_groups + gi], bounds[qi * n_groups + gi + 1]
                cells[(question.key, group_name, pool.name)] = Cell(
                    question.key, group_name, pool, item[lo:hi], rater[lo:hi], score[lo:hi])
            if n_groups > 1:
                lo, hi = bounds[qi * n_groups], bounds[(qi + 1) * n_groups]
                # Groups are disjoint item sets, so the concatenated slices stay item-contiguous.
                cells[(question.key, ALL_GROUPS, pool.name)] = Cell(
                    question.key, ALL_GROUPS, pool, item[lo:hi], rater[lo:hi], score[lo:hi])
    return cells

