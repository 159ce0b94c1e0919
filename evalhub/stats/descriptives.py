"""Descriptives: per-item means and a matrix's summary."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from evalhub.stats.inputs import as_matrix
from evalhub.stats.results import Describe


def item_means(matrix: npt.ArrayLike) -> np.ndarray:
    """Mean rating per item (row): sum of non-NaN ratings / their number.

    Missing data: NaNs are ignored. Undefined: an item with no rating gets NaN (no
    RuntimeWarning is emitted).
    """
    m = as_matrix(matrix)
    counts = (~np.isnan(m)).sum(axis=1)
    sums = np.nansum(m, axis=1)
    return np.divide(sums, counts, out=np.full(m.shape[0], np.nan), where=counts > 0)


def describe(matrix: npt.ArrayLike) -> Describe:
    """Count, mean and standard deviation over all ratings pooled (as in table 1).

    Formula: mean = sum x / N; std = sqrt(sum (x - mean)^2 / (N - 1)) (sample std, ddof=1),
    over the N non-NaN ratings; n_items counts items with at least one rating.
    Missing data: NaNs are ignored.
    Undefined: mean is None when N = 0; std is None when N < 2 (reason says which).
    """
    m = as_matrix(matrix)
    values = m[~np.isnan(m)]
    n_items = int((~np.isnan(m)).any(axis=1).sum())
    n = int(values.size)
    if n == 0:
        return Describe(n_items, 0, None, None, "no ratings")
    if n == 1:
        return Describe(n_items, 1, float(values[0]), None, "std needs at least 2 ratings")
    return Describe(n_items, n, float(values.mean()), float(values.std(ddof=1)))
