"""Agreement and comparison statistics for EvalHub, free of Django.

Every function takes plain numpy data. A *matrix* is a float array with rows = items,
columns = raters and NaN = missing rating. Statistics that can be undefined return a value
of None together with a human-readable reason instead of raising or returning a misleading
0 or 1. Invalid input (not 2-D, infinite values, unknown level) raises ValueError.

Krippendorff's alpha is computed from the coincidence matrix built per *rating pattern*
(see ``_Coincidences``): identical to the ``krippendorff`` package (the tests check it), but
it makes the point estimate and a 1000-replicate bootstrap cost milliseconds on a million
ratings, where the package needs about 0.4 s per call.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import special
from scipy import stats as sps

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")

# Bootstrap replicates are drawn in chunks so that the (replicates x patterns) count
# matrix stays around this many cells (a few tens of MB) whatever the data size.
_BOOTSTRAP_CELLS_PER_CHUNK = 4_000_000
_NO_EXPECTED_DISAGREEMENT = "no variation: expected disagreement D_e is 0"


@dataclass(frozen=True)
class Stat:
    """A statistic that may be undefined: ``value`` is None exactly when ``reason`` says why."""

    value: float | None
    reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class AlphaCI:
    """Percentile bootstrap interval for Krippendorff's alpha."""

    low: float | None
    high: float | None
    confidence: float
    n_boot: int
    n_valid: int  # replicates whose alpha was defined; the interval uses only these
    reason: str | None = None


@dataclass(frozen=True)
class TauResult:
    tau: float | None
    p: float | None
    n: int
    reason: str | None = None


@dataclass(frozen=True)
class PairwiseTau:
    mean_tau: float | None
    n_pairs: int  # rater pairs whose tau was defined and entered the mean
    reason: str | None = None


@dataclass(frozen=True)
class WelchResult:
    t: float | None
    df: float | None
    p: float | None
    mean_diff: float | None
    cohens_d: float | None
    n_a: int
    n_b: int
    unit: str
    reason: str | None = None


@dataclass(frozen=True)
class CorrResult:
    r: float | None
    p: float | None
    n: int
    reason: str | None = None


@dataclass(frozen=True)
class Describe:
    n_items: int
    n_ratings: int
    mean: float | None
    std: float | None
    reason: str | None = None


# ---------------------------------------------------------------------------
# Input helpers


def _as_matrix(matrix: npt.ArrayLike) -> np.ndarray:
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"expected a 2-D matrix (items x raters), got shape {m.shape}")
    if np.isinf(m).any():
        raise ValueError("matrix contains infinite values; use NaN for missing ratings")
    return m


def _as_vector(x: npt.ArrayLike, name: str) -> np.ndarray:
    v = np.asarray(x, dtype=float)
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {v.shape}")
    if np.isinf(v).any():
        raise ValueError(f"{name} contains infinite values; use NaN for missing values")
    return v


def _paired(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    xv, yv = _as_vector(x, "x"), _as_vector(y, "y")
    if xv.shape != yv.shape:
        raise ValueError(f"x and y differ in length: {xv.shape[0]} != {yv.shape[0]}")
    keep = ~(np.isnan(xv) | np.isnan(yv))
    return xv[keep], yv[keep]


def _finite_or_none(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


# ---------------------------------------------------------------------------
# Krippendorff's alpha


@dataclass(frozen=True)
class _Coincidences:
    """Coincidence contributions grouped by rating pattern.

    A unit's *pattern* is its vector of value counts n_u (how many of its ratings took
    each domain value). Its contribution to the coincidence matrix is
    ``(n_u n_u^T - diag(n_u)) / (m_u - 1)`` with m_u = sum(n_u), so units sharing a pattern
    contribute identically and o = sum_p freq_p * C_p. Resampling items with replacement
    is then a multinomial draw of pattern frequencies. Items with fewer than two ratings
    form one extra pattern with a zero contribution (they are resampled like any item
    but, being unpairable, never count).
    """

    domain: np.ndarray  # (V,) sorted values
    contributions: np.ndarray  # (P, V*V); the last row is the zero "unpairable" pattern
    freq: np.ndarray  # (P,) number of items with each pattern
    n_items: int


def _coincidences(matrix: npt.ArrayLike, value_domain: Sequence[float] | None) -> _Coincidences | str:
    """Group the matrix's items by rating pattern, or return why alpha is undefined."""
    m = _as_matrix(matrix)
    rated = ~np.isnan(m)
    pairable = rated.sum(axis=1) >= 2
    n_pairable = int(pairable.sum())
    if n_pairable == 0:
        return "fewer than 1 pairable item: no item has 2 or more ratings"
    values = m[pairable][rated[pairable]]
    observed = np.unique(values)
    if observed.size == 1:
        return f"no variation: all pairable ratings are identical ({observed[0]:g})"
    # The coincidence matrix is built over the observed values only. Declared domain values
    # nobody used have zero marginal count and change no level's alpha (the ordinal distance
    # sums marginals, which are 0 for them), while every extra value makes each of the
    # bootstrap's V x V matrices bigger; observed values outside the declared domain are
    # therefore kept, not rejected. ``value_domain`` documents the scale.
    del value_domain
    domain = observed
    n_values = domain.size

    sub = m[pairable]
    rows, cols = np.nonzero(~np.isnan(sub))
    value_index = np.searchsorted(domain, sub[rows, cols])
    counts = np.bincount(rows * n_values + value_index, minlength=n_pairable * n_values).reshape(n_pairable, n_values)

    max_count = int(counts.max())
    if (max_count + 1) ** n_values < 2**62:
        # Encode each count vector as one integer: np.unique on a 1-D array is ~100x
        # faster than np.unique(axis=0) on rows.
        powers = (max_count + 1) ** np.arange(n_values, dtype=np.int64)
        _, first, freq = np.unique(counts @ powers, return_index=True, return_counts=True)
        patterns = counts[first]
    else:
        patterns, freq = np.unique(counts, axis=0, return_counts=True)

    patterns = patterns.astype(float)
    per_unit = patterns[:, :, None] * patterns[:, None, :]
    per_unit -= patterns[:, :, None] * np.eye(n_values)[None, :, :]
    per_unit /= (patterns.sum(axis=1) - 1)[:, None, None]
    n_items = m.shape[0]
    contributions = np.vstack([per_unit.reshape(len(patterns), -1), np.zeros((1, n_values**2))])
    freq = np.append(freq, n_items - n_pairable)
    return _Coincidences(domain=domain, contributions=contributions, freq=freq, n_items=n_items)


def _distances(level: Level, domain: np.ndarray, n_v: np.ndarray) -> np.ndarray:
    """Squared distance delta^2(c, k) for each pair of domain values; (..., V, V).

    n_v (..., V) are the pairable marginal counts; only the ordinal metric uses them.
    """
    c, k = domain[:, None], domain[None, :]
    if level == "nominal":
        return (c != k).astype(float)
    if level == "interval":
        return (c - k) ** 2
    if level == "ratio":
        total = c + k
        # As in the krippendorff package: 0 where c + k == 0 (only c == k == 0 for
        # non-negative data, the only data a ratio scale admits).
        return np.divide(c - k, total, out=np.zeros_like(total), where=total != 0) ** 2
    if level == "ordinal":
        # delta(c, k) = sum_{g=c..k} n_g - (n_c + n_k) / 2, written with cumulative sums
        # so it is vectorised over bootstrap replicates.
        cum = np.cumsum(n_v, axis=-1)
        return (cum[..., None, :] - cum[..., :, None] + (n_v[..., :, None] - n_v[..., None, :]) / 2) ** 2
    raise ValueError(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")


def _alpha_from_weights(co: _Coincidences, weights: np.ndarray, level: Level) -> np.ndarray:
    """Alpha for each row of pattern weights (B, P); NaN where D_e == 0 (no variation)."""
    n_values = co.domain.size
    o = (weights @ co.contributions).reshape(-1, n_values, n_values)
    n_v = o.sum(axis=2)
    n = n_v.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = (n_v[:, :, None] * n_v[:, None, :] - n_v[:, :, None] * np.eye(n_values)) / (n - 1)[:, None, None]
        d = _distances(level, co.domain, n_v)
        observed = (o * d).sum(axis=(1, 2))
        expected = (e * d).sum(axis=(1, 2))
        alpha = 1.0 - observed / expected
    return np.where(expected > 0, alpha, np.nan)


def _check_level(level: str) -> Level:
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")
    return level  # type: ignore[return-value]


def krippendorff_alpha(matrix: npt.ArrayLike, *, level: str, value_domain: Sequence[float] | None = None) -> Stat:
    """Krippendorff's alpha at the given level of measurement.

    Formula: alpha = 1 - D_o / D_e with D_o = sum_ck o_ck delta^2_ck and
    D_e = sum_ck e_ck delta^2_ck, where the coincidence matrix is
    o_ck = sum_u (number of c-k rating pairs in unit u) / (m_u - 1), n_c = sum_k o_ck,
    n = sum_c n_c and e_ck = n_c (n_k - [c == k]) / (n - 1). delta^2 is nominal (c != k),
    ordinal ((sum_{g=c..k} n_g - (n_c + n_k)/2)^2), interval ((c - k)^2) or ratio
    (((c - k)/(c + k))^2). Equal to ``krippendorff.alpha`` (Krippendorff 2011).

    Missing data: NaN ratings are ignored; items with fewer than two ratings are not
    pairable and are dropped. ``value_domain`` lists the scale points (half points
    allowed); observed values outside it are added to it. Unused domain values have zero
    marginal count and change no level's alpha, so the domain serves documentation only.

    Undefined (value None, with reason): no item has two or more ratings, or all
    pairable ratings are one single value (D_e = 0).
    """
    level = _check_level(level)
    co = _coincidences(matrix, value_domain)
    if isinstance(co, str):
        return Stat(None, co)
    value = _alpha_from_weights(co, co.freq[None, :].astype(float), level)[0]
    return Stat(float(value)) if math.isfinite(value) else Stat(None, _NO_EXPECTED_DISAGREEMENT)


def alpha_all_levels(matrix: npt.ArrayLike, *, value_domain: Sequence[float] | None = None) -> dict[str, Stat]:
    """``krippendorff_alpha`` at all four levels, keyed nominal/ordinal/interval/ratio.

    Same formula, missing-data rule and undefined cases as ``krippendorff_alpha``; the
    coincidence patterns are built once for the four levels.
    """
    co = _coincidences(matrix, value_domain)
    if isinstance(co, str):
        return {level: Stat(None, co) for level in LEVELS}
    weights = co.freq[None, :].astype(float)
    result = {}
    for level in LEVELS:
        value = _alpha_from_weights(co, weights, level)[0]
        result[level] = Stat(float(value)) if math.isfinite(value) else Stat(None, _NO_EXPECTED_DISAGREEMENT)
    return result


def alpha_bootstrap_ci(
    matrix: npt.ArrayLike,
    *,
    level: str,
    value_domain: Sequence[float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> AlphaCI:
    """Percentile bootstrap confidence interval for Krippendorff's alpha over items.

    Method: each replicate resamples all rows (items) of the matrix with replacement and
    recomputes alpha (formula as in ``krippendorff_alpha``). Because the coincidence matrix
    is a sum of per-item contributions that depend only on the item's value counts, a
    replicate is computed as sum_p w_p C_p with pattern counts w ~ Multinomial(n_items,
    freq / n_items): the same distribution as resampling rows, without touching the
    ratings again. The interval is the (1 - confidence)/2 and (1 + confidence)/2
    percentiles (numpy's linear interpolation) of the replicate alphas.
    ``np.random.default_rng(seed)`` makes it reproducible. Cost grows with n_boot x the
    number of distinct rating patterns (a few hundred on a Likert scale), not with items.

    Missing data: as in ``krippendorff_alpha``; resampled items with fewer than two
    ratings contribute nothing. Replicates whose alpha is undefined (no variation) are
    left out and counted in ``n_boot - n_valid``.

    Undefined (low = high = None, with reason): the point estimate is undefined, or no
    replicate gives a defined alpha.
    """
    level = _check_level(level)
    if n_boot < 1:
        raise ValueError("n_boot must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    co = _coincidences(matrix, value_domain)
    if isinstance(co, str):
        return AlphaCI(None, None, confidence, n_boot, 0, co)
    return _bootstrap(co, level, n_boot, seed, confidence)


def _bootstrap(co: _Coincidences, level: Level, n_boot: int, seed: int, confidence: float) -> AlphaCI:
    rng = np.random.default_rng(seed)
    probabilities = co.freq / co.n_items
    chunk = max(1, _BOOTSTRAP_CELLS_PER_CHUNK // len(probabilities))
    replicates = []
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        weights = rng.multinomial(co.n_items, probabilities, size=size).astype(float)
        replicates.append(_alpha_from_weights(co, weights, level))
    alphas = np.concatenate(replicates)
    valid = alphas[~np.isnan(alphas)]
    if valid.size == 0:
        return AlphaCI(None, None, confidence, n_boot, 0, "alpha undefined in every replicate")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(valid, [tail, 100 - tail])
    return AlphaCI(float(low), float(high), confidence, n_boot, int(valid.size))


def alpha_with_ci(
    matrix: npt.ArrayLike,
    *,
    ci_level: str,
    value_domain: Sequence[float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[dict[str, Stat], AlphaCI]:
    """``alpha_all_levels`` and ``alpha_bootstrap_ci`` at ``ci_level`` from one pass over the matrix.

    Same formulas, missing-data rules, undefined cases and results as calling the two functions
    (same seed, same replicates); the coincidence patterns are built once, which halves the cost
    when a dashboard reports both for many cells.
    """
    ci_level = _check_level(ci_level)
    if n_boot < 1:
        raise ValueError("n_boot must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    co = _coincidences(matrix, value_domain)
    if isinstance(co, str):
        return {level: Stat(None, co) for level in LEVELS}, AlphaCI(None, None, confidence, n_boot, 0, co)
    weights = co.freq[None, :].astype(float)
    alphas = {}
    for level in LEVELS:
        value = _alpha_from_weights(co, weights, level)[0]
        alphas[level] = Stat(float(value)) if math.isfinite(value) else Stat(None, _NO_EXPECTED_DISAGREEMENT)
    if alphas[ci_level].value is None:
        return alphas, AlphaCI(None, None, confidence, n_boot, 0, alphas[ci_level].reason)
    return alphas, _bootstrap(co, ci_level, n_boot, seed, confidence)


# ---------------------------------------------------------------------------
# Agreement summaries


def full_agreement_pct(matrix: npt.ArrayLike) -> Stat:
    """Percentage (0-100) of items on which all raters gave the identical score.

    Formula: 100 * #{items with >= 2 ratings, max == min} / #{items with >= 2 ratings}.
    Missing data: NaN ratings are ignored; items with fewer than two ratings are left out
    of numerator and denominator.
    Undefined (None, with reason): no item has two or more ratings.
    """
    m = _as_matrix(matrix)
    pairable = m[(~np.isnan(m)).sum(axis=1) >= 2]
    if pairable.shape[0] == 0:
        return Stat(None, "no item has 2 or more ratings")
    high, low = _row_extremes(pairable)
    return Stat(100.0 * float((high == low).mean()))


def majority_choice(matrix: npt.ArrayLike) -> np.ndarray:
    """Each item's (row's) most frequent value, for nominal data such as pairwise A/B choices.

    Formula: argmax_v #{ratings == v} per row.
    Missing data: NaN ratings are ignored.
    Undefined: NaN for an item with no rating, or whose most frequent values are tied (a 1-1 split
    has no majority; no value is favoured to break it).
    """
    m = _as_matrix(matrix)
    out = np.full(m.shape[0], np.nan)
    values = np.unique(m[~np.isnan(m)])
    if values.size == 0:
        return out
    counts = np.stack([(m == v).sum(axis=1) for v in values], axis=1)
    best = counts.max(axis=1)
    unique_best = (counts == best[:, None]).sum(axis=1) == 1
    chosen = values[counts.argmax(axis=1)]
    keep = (best > 0) & unique_best
    out[keep] = chosen[keep]
    return out


def agreement_pct(x: npt.ArrayLike, y: npt.ArrayLike) -> Stat:
    """Percentage (0-100) of paired positions where x and y hold the same value (nominal agreement).

    Formula: 100 * #{i : x_i == y_i} / #{i : both defined}.
    Missing data: a position where either value is NaN is left out.
    Undefined (None, with reason): no position has both values.
    """
    a, b = _paired(x, y)
    if a.size == 0:
        return Stat(None, "no item has a value in both")
    return Stat(100.0 * float((a == b).mean()))


def _row_extremes(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Largest and smallest non-NaN value of each row (rows hold at least one value).

    fmax/fmin skip NaN. Column by column rather than ``reduce(axis=1)``: a reduction over rows of
    three or five values costs about ten times more than a few whole-column passes.
    """
    if m.shape[1] > 64:
        return np.fmax.reduce(m, axis=1), np.fmin.reduce(m, axis=1)
    high = m[:, 0].copy()
    low = high.copy()
    for j in range(1, m.shape[1]):
        np.fmax(high, m[:, j], out=high)
        np.fmin(low, m[:, j], out=low)
    return high, low


def _one_way_anova(matrix: npt.ArrayLike) -> tuple[float, float, int] | str:
    """(MSB, MSW, k) over complete items, or the reason it is undefined."""
    m = _as_matrix(matrix)
    m = m[:, ~np.isnan(m).all(axis=0)]
    complete = m[~np.isnan(m).any(axis=1)]
    n, k = complete.shape
    if n < 2:
        return f"fewer than 2 complete items ({n} item(s) rated by all {k} raters)"
    if k < 2:
        return "fewer than 2 raters"
    if np.ptp(complete) == 0:
        return "no variation: all ratings identical"
    row_means = complete.mean(axis=1)
    msw = float(((complete - row_means[:, None]) ** 2).sum() / (n * (k - 1)))
    # Identical item means must give MSB == 0 exactly, not a rounding residue.
    if np.ptp(row_means) == 0:
        return 0.0, msw, k
    msb = float(k * ((row_means - complete.mean()) ** 2).sum() / (n - 1))
    return msb, msw, k


def icc1(matrix: npt.ArrayLike) -> Stat:
    """ICC(1): one-way random effects, single rater (Shrout & Fleiss 1979).

    Formula: (MSB - MSW) / (MSB + (k - 1) MSW), with MSB = k sum_i (mean_i - mean)^2 / (n - 1)
    and MSW = sum_ij (x_ij - mean_i)^2 / (n (k - 1)) over n items and k raters.
    Missing data: the design must be balanced, so columns with no rating at all are
    dropped, then every item with a missing rating (listwise deletion).
    Undefined (None, with reason): fewer than 2 raters or 2 complete items, or all
    ratings identical (0 / 0). Identical item means but varying ratings give -1/(k-1).
    """
    anova = _one_way_anova(matrix)
    if isinstance(anova, str):
        return Stat(None, anova)
    msb, msw, k = anova
    return Stat((msb - msw) / (msb + (k - 1) * msw))


def icc1k(matrix: npt.ArrayLike) -> Stat:
    """ICC(1,k): one-way random effects, mean of k raters (Shrout & Fleiss 1979).

    Formula: (MSB - MSW) / MSB, MSB and MSW as in ``icc1``.
    Missing data: as in ``icc1`` (all-missing columns dropped, then incomplete items).
    Undefined (None, with reason): fewer than 2 raters or 2 complete items, all ratings
    identical, or no between-item variance (MSB = 0).
    """
    anova = _one_way_anova(matrix)
    if isinstance(anova, str):
        return Stat(None, anova)
    msb, msw, _ = anova
    if msb == 0:
        return Stat(None, "no between-item variance (MSB = 0): all item means equal")
    return Stat((msb - msw) / msb)


def icc1_and_icc1k(matrix: npt.ArrayLike) -> tuple[Stat, Stat]:
    """``icc1`` and ``icc1k`` from one one-way ANOVA (same formulas, rules and undefined cases)."""
    anova = _one_way_anova(matrix)
    if isinstance(anova, str):
        return Stat(None, anova), Stat(None, anova)
    msb, msw, k = anova
    single = Stat((msb - msw) / (msb + (k - 1) * msw))
    if msb == 0:
        return single, Stat(None, "no between-item variance (MSB = 0): all item means equal")
    return single, Stat((msb - msw) / msb)


# ---------------------------------------------------------------------------
# Rank and linear correlation, group comparison


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
    variance). Tied data with few distinct values is counted on their contingency table
    (``_kendall_from_table``, same formulas, much faster on Likert data); the rest goes to scipy.
    Missing data: only positions where both x and y are not NaN (n = their number).
    Undefined (None, with reason): n < 2 or x or y constant over the paired positions.
    """
    xv, yv = _paired(x, y)
    n = int(xv.size)
    if n < 2:
        return TauResult(None, None, n, f"fewer than 2 paired items ({n})")
    reason = _constant_reason(xv, yv)
    if reason:
        return TauResult(None, None, n, reason)
    table = _kendall_from_table(xv, yv)
    if table is not None:
        return TauResult(_finite_or_none(table[0]), _finite_or_none(table[1]), n)
    res = sps.kendalltau(xv, yv, variant="b")
    return TauResult(_finite_or_none(res.statistic), _finite_or_none(res.pvalue), n)


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
    x_values, x_index = np.unique(x, return_inverse=True)
    y_values, y_index = np.unique(y, return_inverse=True)
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
    p = 2.0 * float(special.ndtr(-abs(con_minus_dis / math.sqrt(var))))
    return tau, p


def mean_pairwise_kendall(matrix: npt.ArrayLike) -> PairwiseTau:
    """Average pairwise Kendall's tau-b between raters (Chiang & Lee 2023, table 6).

    Formula: mean over rater pairs (i < j) of ``kendall_tau(column i, column j)``.
    Missing data: each pair uses the items rated by both; pairs whose tau is undefined
    (fewer than 2 shared items, or a constant rater) are left out; ``n_pairs`` counts the
    pairs that entered the mean.
    Undefined (None, with reason): fewer than 2 raters or no pair with a defined tau.
    """
    m = _as_matrix(matrix)
    if m.shape[1] < 2:
        return PairwiseTau(None, 0, "fewer than 2 raters")
    taus = []
    for i, j in itertools.combinations(range(m.shape[1]), 2):
        tau = kendall_tau(m[:, i], m[:, j]).tau
        if tau is not None:
            taus.append(tau)
    if not taus:
        return PairwiseTau(None, 0, "no rater pair has a defined tau")
    return PairwiseTau(float(np.mean(taus)), len(taus))


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
    av = _as_vector(a, "a")
    bv = _as_vector(b, "b")
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
        t=_finite_or_none(t),
        df=df,
        p=_finite_or_none(p),
        mean_diff=mean_diff,
        cohens_d=mean_diff / pooled_sd,
        n_a=n_a,
        n_b=n_b,
        unit=unit,
    )


def _correlation(x: npt.ArrayLike, y: npt.ArrayLike, method: str) -> CorrResult:
    xv, yv = _paired(x, y)
    n = int(xv.size)
    if n < 2:
        return CorrResult(None, None, n, f"fewer than 2 paired items ({n})")
    reason = _constant_reason(xv, yv)
    if reason:
        return CorrResult(None, None, n, reason)
    res = sps.pearsonr(xv, yv) if method == "pearson" else sps.spearmanr(xv, yv)
    return CorrResult(_finite_or_none(res.statistic), _finite_or_none(res.pvalue), n)


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


def tau_band(tau: float | None) -> str:
    """Verbal band of a Kendall tau (Chiang & Lee 2023): by |tau|,
    < 0.1 "very weak", < 0.2 "weak", < 0.3 "moderate", otherwise "strong".

    Undefined: None or NaN gives "undefined".
    """
    if tau is None or math.isnan(tau):
        return "undefined"
    size = abs(tau)
    if size < 0.1:
        return "very weak"
    if size < 0.2:
        return "weak"
    if size < 0.3:
        return "moderate"
    return "strong"


# ---------------------------------------------------------------------------
# Descriptives


def item_means(matrix: npt.ArrayLike) -> np.ndarray:
    """Mean rating per item (row): sum of non-NaN ratings / their number.

    Missing data: NaNs are ignored. Undefined: an item with no rating gets NaN (no
    RuntimeWarning is emitted).
    """
    m = _as_matrix(matrix)
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
    m = _as_matrix(matrix)
    values = m[~np.isnan(m)]
    n_items = int((~np.isnan(m)).any(axis=1).sum())
    n = int(values.size)
    if n == 0:
        return Describe(n_items, 0, None, None, "no ratings")
    if n == 1:
        return Describe(n_items, 1, float(values[0]), None, "std needs at least 2 ratings")
    return Describe(n_items, n, float(values.mean()), float(values.std(ddof=1)))
