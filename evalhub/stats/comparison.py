"""Comparisons: Welch's unequal-variance t-test with Cohen's d, and the Benjamini-Hochberg adjustment of a
family of tests' p-values (the analysis adjusts its Welch tests as one family, its per-rater kappa tests as
another)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy import special
from scipy import stats as sps

from evalhub.stats.inputs import as_vector, finite_or_none
from evalhub.stats.results import WelchResult


def welch(a: npt.ArrayLike, b: npt.ArrayLike, *, unit: str = "item means") -> WelchResult:
    """Welch's unequal-variance t-test of mean(a) vs mean(b), with Cohen's d.

    Formula: t = (mean_a - mean_b) / sqrt(s_a^2/n_a + s_b^2/n_b); Welch-Satterthwaite
    df = (s_a^2/n_a + s_b^2/n_b)^2 / ((s_a^2/n_a)^2/(n_a-1) + (s_b^2/n_b)^2/(n_b-1));
    two-sided p = 2 F_t(-|t|; df) (``scipy.special.stdtr``, equal to
    ``scipy.stats.ttest_ind(equal_var=False)``); mean_diff = mean_a - mean_b;
    Cohen's d = mean_diff / sqrt(((n_a-1) s_a^2 + (n_b-1) s_b^2) / (n_a + n_b - 2)), with
    sample variances (ddof=1). ``unit`` records what a value is (item means, ratings...).
    Missing data: NaNs are dropped from each group independently.
    Undefined (None fields, with reason): either group has fewer than 2 values, or both
    groups have zero variance.
    """
    av = as_vector(a, "a")
    bv = as_vector(b, "b")
    av, bv = av[~np.isnan(av)], bv[~np.isnan(bv)]
    n_a, n_b = int(av.size), int(bv.size)
    if n_a < 2 or n_b < 2:
        reason = f"each group needs at least 2 values (n_a={n_a}, n_b={n_b})"
        return WelchResult(None, None, None, None, None, n_a, n_b, unit, reason)
    var_a, var_b = float(av.var(ddof=1)), float(bv.var(ddof=1))
    mean_diff = float(av.mean() - bv.mean())
    if var_a == 0 and var_b == 0:
        reason = "no variation: both groups have zero variance"
        return WelchResult(None, None, None, mean_diff, None, n_a, n_b, unit, reason)
    se_a, se_b = var_a / n_a, var_b / n_b
    t = mean_diff / math.sqrt(se_a + se_b)
    df = (se_a + se_b) ** 2 / (se_a**2 / (n_a - 1) + se_b**2 / (n_b - 1))
    # The t distribution's CDF directly: the value of scipy.stats.ttest_ind(equal_var=False)
    # (tested) without its per-call argument handling, which dominates on a dashboard's
    # hundreds of small tests.
    p = 2.0 * float(special.stdtr(df, -abs(t)))
    pooled_sd = math.sqrt(((n_a - 1) * var_a + (n_b - 1) * var_b) / (n_a + n_b - 2))
    return WelchResult(
        t=finite_or_none(t),
        df=df,
        p=finite_or_none(p),
        mean_diff=mean_diff,
        cohens_d=mean_diff / pooled_sd,
        n_a=n_a,
        n_b=n_b,
        unit=unit,
    )


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
        adjusted = sps.false_discovery_control(array[defined], method="bh")
        for position, value in zip(np.flatnonzero(defined), adjusted, strict=True):
            out[int(position)] = float(value)
    return out
