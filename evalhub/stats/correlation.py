"""Rank and linear correlation between two per-item vectors, and between raters."""

from __future__ import annotations

import itertools
import math

import numpy as np
import numpy.typing as npt

from evalhub.stats.inputs import as_matrix, complete_pairs, distinct_codes, finite_or_none
from evalhub.stats.results import CorrResult, PairwiseTau, TauResult


def _constant_reason(x: np.ndarray, y: np.ndarray) -> str | None:
    if np.ptp(x) == 0:
        return f"x is constant over the {x.size} paired items"
    if np.ptp(y) == 0:
        return f"y is constant over the {y.size} paired items"
    return None


def kendall_tau(x: npt.ArrayLike, y: npt.ArrayLike) -> TauResult:
    """Kendall's tau-b between two per-item vectors (e.g. mean teacher vs mean LLM scores).

    Formula: tau_b = (P - Q) / sqrt((P + Q + T_x)(P + Q + T_y)), P/Q concordant/discordant
    pairs, T_x/T_y pairs tied only in x/y; p-value as ``scipy.stats.kendalltau`` gives it
    (two-sided; exact for small untied samples, else normal approximation with the tie-corrected
    variance), and ``p_method`` says which of the two it is ("exact" or "asymptotic", the method
    scipy's ``method="auto"`` chose; None where p is undefined). Tied data with few distinct values
    is counted on their contingency table (``_kendall_from_table``, same formulas, much faster on
    Likert data); the rest goes to scipy.
    Missing data: only positions where both x and y are not NaN (n = their number).
    Undefined (None, with reason): n < 2 or x or y constant over the paired positions.
    """
    xv, yv = complete_pairs(x, y)
    n = int(xv.size)
    if n < 2:
        return TauResult(None, None, n, f"fewer than 2 paired items ({n})")
    reason = _constant_reason(xv, yv)
    if reason:
        return TauResult(None, None, n, reason)
    table = _kendall_from_table(xv, yv)
    if table is not None:  # there are ties: scipy's "auto" takes the normal approximation
        p = finite_or_none(table[1])
        return TauResult(finite_or_none(table[0]), p, n, p_method=None if p is None else "asymptotic")
    from scipy import stats as sps  # on use: importing scipy.stats takes 0.7 s (STYLE 15)

    res = sps.kendalltau(xv, yv, variant="b")
    tau, p = finite_or_none(res.statistic), finite_or_none(res.pvalue)
    method = None if p is None or tau is None else _scipy_p_method(xv, yv, tau)
    return TauResult(tau, p, n, p_method=method)


def _scipy_p_method(x: np.ndarray, y: np.ndarray, tau: float) -> str:
    """The p-value method ``scipy.stats.kendalltau(method="auto")`` chooses (scipy 1.17, ``_stats_py.kendalltau``):
    "exact" when neither x nor y has a tie and there are at most 33 items or at most one discordant (or at most
    one concordant) pair; else "asymptotic" (the normal approximation with the tie-corrected variance)."""
    n = x.size
    if np.unique(x).size < n or np.unique(y).size < n:
        return "asymptotic"
    if n <= 33:
        return "exact"
    tot = n * (n - 1) // 2
    dis = round(tot * (1.0 - tau) / 2.0)  # no ties: tau = (tot - 2 dis) / tot
    return "exact" if min(dis, tot - dis) <= 1 else "asymptotic"


# Above this many (distinct x) x (distinct y) cells the contingency table costs more than sorting.
_KENDALL_TABLE_MAX_CELLS = 250_000


def _tie_sums(counts: np.ndarray) -> tuple[int, float, float]:
    c = counts[counts > 1].astype(float)
    return int((c * (c - 1) // 2).sum()), float((c * (c - 1) * (c - 2)).sum()), float((c * (c - 1) * (2 * c + 5)).sum())


def _kendall_from_table(x: np.ndarray, y: np.ndarray) -> tuple[float, float] | None:
    """Kendall's tau-b and its asymptotic p from the contingency table of distinct values, or None.

    Ratings and their per-item means take few distinct values, so counting concordant and
    discordant pairs over the (distinct x) x (distinct y) table is O(n + cells) instead of
    scipy's O(n log n) sorts, with scipy's own tie-corrected formulas for tau-b, the variance
    of P - Q and the two-sided normal p (tested equal to ``scipy.stats.kendalltau``). Returns
    None, leaving the work to scipy, when there are no ties at all (scipy may then use its exact
    p-value) or when the table would be large (continuous data).
    """
    # The distinct values first (no sort of every value), then each value's position among them.
    (x_values, x_index), (y_values, y_index) = distinct_codes(x), distinct_codes(y)
    n_x, n_y, n = x_values.size, y_values.size, x.size
    if n_x * n_y > _KENDALL_TABLE_MAX_CELLS or (n_x == n and n_y == n):
        return None
    table = np.bincount(x_index * n_y + y_index, minlength=n_x * n_y).reshape(n_x, n_y).astype(np.int64)
    # Discordant pairs: cells (i, j), (i', j') with i' > i and j' < j.
    below = np.zeros_like(table)
    below[:-1] = np.cumsum(table[::-1], axis=0)[::-1][1:]
    below_left = np.zeros_like(table)
    below_left[:, 1:] = np.cumsum(below, axis=1)[:, :-1]
    dis = int((table * below_left).sum())
    ntie = int((table * (table - 1) // 2).sum())
    xtie, x0, x1 = _tie_sums(table.sum(axis=1))
    ytie, y0, y1 = _tie_sums(table.sum(axis=0))
    tot = n * (n - 1) // 2
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = min(1.0, max(-1.0, con_minus_dis / math.sqrt(tot - xtie) / math.sqrt(tot - ytie)))
    m = n * (n - 1.0)
    var = (m * (2 * n + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m + x0 * y0 / (9 * m * (n - 2))
    from scipy import special  # on use: importing scipy.special takes 0.15 s (STYLE 15)

    p = 2.0 * float(special.ndtr(-abs(con_minus_dis / math.sqrt(var))))
    return tau, p


def mean_pairwise_kendall(matrix: npt.ArrayLike) -> PairwiseTau:
    """Average pairwise Kendall's tau-b between raters (Chiang & Lee 2023, table 6).

    Formula: mean over rater pairs (i < j) of ``kendall_tau(column i, column j)``.
    Missing data: each pair uses the items rated by both; pairs whose tau is undefined
    (fewer than 2 shared items, or a constant rater) are left out; ``n_pairs`` counts the
    pairs that entered the mean, ``undefined`` the pairs left out with ``kendall_tau``'s reason (x: column i).
    Undefined (None, with reason): fewer than 2 raters or no pair with a defined tau.
    """
    m = as_matrix(matrix)
    if m.shape[1] < 2:
        return PairwiseTau(None, 0, "fewer than 2 raters")
    taus, undefined = [], []
    for i, j in itertools.combinations(range(m.shape[1]), 2):
        result = kendall_tau(m[:, i], m[:, j])
        if result.tau is not None:
            taus.append(result.tau)
        else:
            undefined.append((i, j, result.reason or "undefined"))
    if not taus:
        return PairwiseTau(None, 0, "no rater pair has a defined tau", tuple(undefined))
    return PairwiseTau(float(np.mean(taus)), len(taus), undefined=tuple(undefined))


def _correlation(x: npt.ArrayLike, y: npt.ArrayLike, method: str) -> CorrResult:
    xv, yv = complete_pairs(x, y)
    n = int(xv.size)
    if n < 2:
        return CorrResult(None, None, n, f"fewer than 2 paired items ({n})")
    reason = _constant_reason(xv, yv)
    if reason:
        return CorrResult(None, None, n, reason)
    from scipy import stats as sps  # on use: importing scipy.stats takes 0.7 s (STYLE 15)

    res = sps.pearsonr(xv, yv) if method == "pearson" else sps.spearmanr(xv, yv)
    return CorrResult(finite_or_none(res.statistic), finite_or_none(res.pvalue), n)


def pearson(x: npt.ArrayLike, y: npt.ArrayLike) -> CorrResult:
    """Pearson's r with two-sided p (``scipy.stats.pearsonr``).

    Formula: r = cov(x, y) / (sd_x sd_y).
    Missing data: only positions where both x and y are not NaN (n = their number).
    Undefined (None, with reason): n < 2 or x or y constant. With n = 2, r is +-1 and p = 1
    by construction; show n next to r.
    """
    return _correlation(x, y, "pearson")


def spearman(x: npt.ArrayLike, y: npt.ArrayLike) -> CorrResult:
    """Spearman's rho with two-sided p (``scipy.stats.spearmanr``).

    Formula: Pearson's r of the ranks (ties get average ranks).
    Missing data: only positions where both x and y are not NaN (n = their number).
    Undefined (None, with reason): n < 2 or x or y constant.
    """
    return _correlation(x, y, "spearman")


SIGNIFICANCE = 0.05  # a tau whose p is above this claims no strength


def tau_band(tau: float | None, p: float | None = None) -> str:
    """Verbal band of a Kendall tau (Chiang & Lee 2023), with its sign and its significance.

    By |tau|: < 0.1 "very weak", < 0.2 "weak", < 0.3 "moderate", otherwise "strong"; a negative tau
    adds "negative" ("strong negative": the LLM ranks the items opposite to the people). With p above
    0.05 (two-sided) the band is "not significant" whatever |tau| is: no strength is claimed.

    Undefined: None or NaN tau gives "undefined".
    """
    if tau is None or math.isnan(tau):
        return "undefined"
    if p is not None and p > SIGNIFICANCE:
        return "not significant"
    size = abs(tau)
    band = "very weak" if size < 0.1 else "weak" if size < 0.2 else "moderate" if size < 0.3 else "strong"
    return f"{band} negative" if tau < 0 else band
