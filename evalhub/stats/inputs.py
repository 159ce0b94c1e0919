"""Input checks shared by the statistics: matrices (items x raters, NaN = missing) and paired vectors."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


def as_matrix(matrix: npt.ArrayLike) -> np.ndarray:
    """A float items x raters matrix; ValueError unless 2-D and free of infinities (NaN marks a missing rating)."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"expected a 2-D matrix (items x raters), got shape {m.shape}")
    if np.isinf(m).any():
        raise ValueError("matrix contains infinite values; use NaN for missing ratings")
    return m


def as_vector(x: npt.ArrayLike, name: str) -> np.ndarray:
    """A float 1-D array; ValueError naming ``name`` unless 1-D and free of infinities (NaN marks a missing value)."""
    v = np.asarray(x, dtype=float)
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {v.shape}")
    if np.isinf(v).any():
        raise ValueError(f"{name} contains infinite values; use NaN for missing values")
    return v


def complete_pairs(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """x and y (same length) without the positions where either is NaN."""
    xv, yv = as_vector(x, "x"), as_vector(y, "y")
    if xv.shape != yv.shape:
        raise ValueError(f"x and y differ in length: {xv.shape[0]} != {yv.shape[0]}")
    keep = ~(np.isnan(xv) | np.isnan(yv))
    return xv[keep], yv[keep]


def finite_or_none(value: float) -> float | None:
    """The value as a float, or None for NaN and infinities (an undefined statistic is None, never NaN)."""
    value = float(value)
    return value if math.isfinite(value) else None


# Ratings lie on a grid: whole points, or half points (a mean of two samples, a half-point scale). On such
# values a lookup table over the grid replaces np.unique's sort and np.searchsorted's binary search, with
# the same results; other values (means of three ratings, continuous scores) take the sorting path.
_GRID_STEPS = (1.0, 2.0)
_GRID_MAX_SPAN = 1 << 16


def _grid_offsets(values: np.ndarray) -> tuple[np.ndarray, float, float] | None:
    """(integer offsets of the values on a grid, the grid's origin, its steps per unit), or None when the
    values are not whole or half numbers or span too wide a range."""
    if values.size == 0:
        return None
    low, high = float(values.min()), float(values.max())
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    for steps in _GRID_STEPS:
        if (high - low) * steps > _GRID_MAX_SPAN:
            return None
        scaled = values * steps if steps != 1.0 else values
        rounded = np.rint(scaled)
        if np.array_equal(scaled, rounded):
            origin = float(rounded.min())
            return (rounded - origin).astype(np.intp), origin, steps
    return None


def distinct_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of finite values: (sorted distinct values, each value's
    position among them), by a lookup table when the values lie on a whole- or half-point grid."""
    grid = _grid_offsets(values)
    if grid is None:
        distinct, codes = np.unique(values, return_inverse=True)
        return distinct, codes.reshape(-1)
    offsets, origin, steps = grid
    present = np.bincount(offsets) > 0
    return (np.flatnonzero(present) + origin) / steps, (np.cumsum(present) - 1)[offsets]


def positions_in(sorted_values: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.searchsorted(sorted_values, values)`` for values that are all among ``sorted_values`` (sorted,
    distinct), by a lookup table when both lie on a whole- or half-point grid."""
    grid = _grid_offsets(sorted_values) if values.size > 64 else None
    if grid is not None:
        offsets, origin, steps = grid
        scaled = values * steps - origin
        if scaled.size and scaled.min() >= 0 and scaled.max() <= offsets[-1]:
            table = np.zeros(int(offsets[-1]) + 1, dtype=np.intp)
            table[offsets] = np.arange(offsets.size)
            return table[scaled.astype(np.intp)]
    return np.searchsorted(sorted_values, values)


def unique_first_counts(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(keys, return_index=True, return_counts=True)`` of non-negative integer keys: by counting
    when the keys span a small range (rating patterns coded as integers do), else by np.unique."""
    if keys.size == 0 or int(keys.min()) < 0 or int(keys.max()) >= 4 * keys.size + 1_000_000:
        return np.unique(keys, return_index=True, return_counts=True)
    counts = np.bincount(keys)
    distinct = np.flatnonzero(counts)
    first = np.empty(counts.size, dtype=np.intp)
    first[keys[::-1]] = np.arange(keys.size - 1, -1, -1)  # the last write, in reverse, is the first occurrence
    return distinct, first[distinct], counts[distinct]


def id_codes(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Compact codes 0..k-1 of ids and the k distinct ids in sorted order (``np.unique``'s inverse).

    Non-negative integers of moderate size (database keys) take a lookup table instead of a sort.
    """
    if ids.dtype.kind in "iu" and ids.size and ids.min() >= 0 and ids.max() < 4 * ids.size + 1_000_000:
        seen = np.zeros(int(ids.max()) + 1, dtype=bool)
        seen[ids] = True
        return (np.cumsum(seen) - 1)[ids], np.flatnonzero(seen)
    uniques, codes = np.unique(ids, return_inverse=True)
    return codes.reshape(-1).astype(np.intp), uniques


@dataclass(frozen=True)
class ValueCounts:
    """How often each item of a matrix (items x raters, NaN = missing) took each value: ``counts[i, v]`` ratings
    of item i equal ``values[v]``. Alpha's coincidences, Fleiss' kappa and the majority choice all count
    these; computed once (``value_counts``), they are passed along instead of being counted again."""

    values: np.ndarray  # the distinct rated values, sorted
    counts: np.ndarray  # (items, values) integer counts


def value_counts(matrix: np.ndarray) -> ValueCounts:
    """``ValueCounts`` of a matrix (already checked by ``as_matrix``)."""
    rated = ~np.isnan(matrix)
    return item_value_counts(np.nonzero(rated)[0], matrix[rated], matrix.shape[0])


def checked_counts(counts: ValueCounts | None, m: np.ndarray) -> ValueCounts:
    """``counts`` if given for the matrix's items, else ``value_counts(m)``; ValueError if they differ in items."""
    if counts is None:
        return value_counts(m)
    if counts.counts.shape[0] != m.shape[0]:
        raise ValueError(f"counts has {counts.counts.shape[0]} items for {m.shape[0]} rows")
    return counts


def item_value_counts(item: np.ndarray, score: np.ndarray, n_items: int) -> ValueCounts:
    """``ValueCounts`` of ratings given as parallel arrays: the row of each rating (below ``n_items``) and its
    finite value. The same counts as ``value_counts`` of the matrix that holds those ratings."""
    values, codes = distinct_codes(score)
    k = values.size
    return ValueCounts(values, np.bincount(item * k + codes, minlength=n_items * k).reshape(n_items, k))
