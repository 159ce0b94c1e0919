"""Benjamini-Hochberg (and -Yekutieli) adjusted p-values for a family of tests; undefined p-values stay in place."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np


def fdr_adjust(pvalues: np.ndarray, *, method: Literal["bh", "by"]) -> np.ndarray:
    """Adjusted p-values of a 1-D array of p-values in [0, 1], in their order: scipy.stats'
    ``false_discovery_control(p, method=method)``, the same operations in the same order, so the same floats
    (tests/evalhub/stats/test_scipy_free.py checks equality), without importing scipy.stats (0.7 s; STYLE 15).

    Formula: with the m p-values sorted, p_(i) -> min_{k >= i} min(1, m p_(k) / k), times sum_{k=1}^m 1/k for
    Benjamini-Yekutieli ("by"), which holds under any dependence. Missing data: none allowed (the callers
    drop or replace undefined p-values). Fewer than two p-values are returned as given.
    """
    ps = np.asarray(pvalues, dtype=float)
    if ps.size <= 1:
        return ps
    m = ps.size
    order = np.argsort(ps)
    ranked = ps[order]
    i = np.arange(1, m + 1, dtype=ranked.dtype)
    ranked *= m / i
    if method == "by":
        ranked *= np.sum(1 / i)
    np.minimum.accumulate(ranked[::-1], out=ranked[::-1])
    adjusted = np.empty_like(ranked)
    adjusted[order] = ranked
    return np.clip(adjusted, 0, 1)


def bh_adjust(pvalues: Sequence[float | None]) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values (``fdr_adjust(p, method="bh")``, scipy.stats' ``false_discovery_control``).

    Formula: with the m defined p-values sorted, p_(i) -> min_{k >= i} min(1, m p_(k) / k); a test is
    significant at FDR q when its adjusted p-value is <= q.

    Missing data: None or NaN entries (a test that could not run) stay None in their place and do not
    count in m: an undefined test is not a test of the family.
    Bad input: a p-value outside [0, 1] raises ValueError. An empty or all-undefined list returns
    the same number of None.
    """
    values = [math.nan if p is None else float(p) for p in pvalues]
    array = np.asarray(values, dtype=float)
    defined = ~np.isnan(array)
    if ((array[defined] < 0) | (array[defined] > 1)).any():
        raise ValueError("p-values must lie between 0 and 1")
    out: list[float | None] = [None] * len(values)
    if defined.any():
        adjusted = fdr_adjust(array[defined], method="bh")
        for position, value in zip(np.flatnonzero(defined), adjusted, strict=True):
            out[int(position)] = float(value)
    return out
