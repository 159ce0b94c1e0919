"""Benjamini-Hochberg adjusted p-values for a family of tests, with undefined p-values kept in place."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def bh_adjust(pvalues: Sequence[float | None]) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values (``scipy.stats.false_discovery_control(p, method="bh")``).

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
        from scipy import stats as sps  # on use: importing scipy.stats takes 0.7 s (STYLE 15)

        adjusted = sps.false_discovery_control(array[defined], method="bh")
        for position, value in zip(np.flatnonzero(defined), adjusted, strict=True):
            out[int(position)] = float(value)
    return out
