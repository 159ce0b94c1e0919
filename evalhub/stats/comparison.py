"""Comparisons: Welch's unequal-variance t-test with Cohen's d; the one-sided one-sample t-test; the
Benjamini-Hochberg (and -Yekutieli) adjustment of a family of tests' p-values (the analysis adjusts its Welch
tests as one family, its per-rater kappa tests as another); undefined p-values stay in place."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

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
        reason = f"each group needs at least 2 values (it has {n_a} and {n_b})"
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
    from scipy import special  # on use: importing scipy.special takes 0.15 s (STYLE 15)

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


def t_test_p_less(values: np.ndarray, popmean: float) -> float:
    """p of the one-sample t-test against H1: mean < ``popmean``, as ``scipy.stats.ttest_1samp(values, popmean,
    alternative="less").pvalue`` gives it: the same operations in the same order, so the same float
    (tests/evalhub/stats/test_scipy_free.py checks equality), without importing scipy.stats (0.7 s; STYLE 15).

    Formula: t = (mean - popmean) / sqrt(v / n), v = mean((x - mean)^2) * n / (n - 1); p = F_t(t; n - 1)
    (``scipy.special.stdtr``). Missing data: none; ``values`` is a 1-D array of finite numbers, n >= 2.
    Undefined: when every value is equal, v is 0 (up to rounding of the mean), so t is -inf, +inf or nan and
    p is 0, 1 or nan, as scipy gives them.
    """
    from scipy import special  # on use: importing scipy.special takes 0.15 s (STYLE 15)

    a = np.asarray(values, dtype=float)
    n = a.size
    deviations = a - np.mean(a, keepdims=True)
    variance = np.mean(deviations**2) * (np.float64(n) / np.float64(n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.divide(np.mean(a) - np.float64(popmean), np.sqrt(variance / n))
    return float(special.stdtr(np.float64(n - 1), t))


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
