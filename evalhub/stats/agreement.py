"""Agreement summaries: full agreement, the majority choice and vote, nominal agreement, and the ICC family."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from evalhub.stats.inputs import ValueCounts, as_matrix, checked_counts, complete_pairs
from evalhub.stats.results import ICCResult, Stat


def full_agreement_pct(matrix: npt.ArrayLike) -> Stat:
    """Percentage (0-100) of items on which all raters gave the identical score.

    Formula: 100 * #{items with >= 2 ratings, max == min} / #{items with >= 2 ratings}.
    Missing data: NaN ratings are ignored; items with fewer than two ratings are left out
    of numerator and denominator.
    Undefined (None, with reason): no item has two or more ratings.
    """
    m = as_matrix(matrix)
    pairable = m[(~np.isnan(m)).sum(axis=1) >= 2]
    if pairable.shape[0] == 0:
        return Stat(None, "no item has 2 or more ratings")
    high, low = _row_extremes(pairable)
    return Stat(100.0 * float((high == low).mean()))


def majority_choice(matrix: npt.ArrayLike, *, counts: ValueCounts | None = None) -> np.ndarray:
    """Each item's (row's) most frequent value, for nominal data such as pairwise A/B choices.

    Formula: argmax_v #{ratings == v} per row.
    Missing data: NaN ratings are ignored.
    Undefined: NaN for an item with no rating, or whose most frequent values are tied (a 1-1 split
    has no majority; no value is favoured to break it).
    ``counts`` may pass ``value_counts(matrix)`` already computed (the same result, without counting again).
    """
    m = as_matrix(matrix)
    vc = checked_counts(counts, m)
    out = np.full(m.shape[0], np.nan)
    if vc.values.size == 0:
        return out
    best = vc.counts.max(axis=1)
    unique_best = (vc.counts == best[:, None]).sum(axis=1) == 1
    chosen = vc.values[vc.counts.argmax(axis=1)]
    keep = (best > 0) & unique_best
    out[keep] = chosen[keep]
    return out


def majority_vote(scores: Sequence[float | None]) -> float | None:
    """The most frequent of one prediction's votes (a persona's characters, a run's samples), in their order.

    Formula: argmax_v #{scores == v}; among the values with the highest count, the one given first wins
    (CINEMETRIC's "if all three differ, choose the prediction of the first-listed persona", generalised):
    with three different scores the first counts, with (None, 2, 4) the second. Unlike
    ``majority_choice``, a tie is broken, because a prediction must name one score.
    Missing data: None (an unparseable or refused answer) abstains.
    Undefined: None when no score is given.
    """
    counts: dict[float, int] = {}
    for score in scores:
        if score is not None:
            counts[score] = counts.get(score, 0) + 1
    if not counts:
        return None
    best = max(counts.values())
    return next(s for s in scores if s is not None and counts[s] == best)


def agreement_pct(x: npt.ArrayLike, y: npt.ArrayLike) -> Stat:
    """Percentage (0-100) of paired positions where x and y hold the same value (nominal agreement).

    Formula: 100 * #{i : x_i == y_i} / #{i : both defined}.
    Missing data: a position where either value is NaN is left out.
    Undefined (None, with reason): no position has both values.
    """
    a, b = complete_pairs(x, y)
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


def _complete_items(matrix: npt.ArrayLike) -> tuple[np.ndarray, int]:
    """(the complete items x the raters with any rating, the number of items with any rating)."""
    m = as_matrix(matrix)
    m = m[:, ~np.isnan(m).all(axis=0)]
    return m[~np.isnan(m).any(axis=1)], int((~np.isnan(m)).any(axis=1).sum())


def _one_way_anova(matrix: npt.ArrayLike) -> tuple[float, float, int] | str:
    """(MSB, MSW, k) over complete items, or the reason it is undefined."""
    return _anova_of_complete(_complete_items(matrix)[0])


def _anova_of_complete(complete: np.ndarray) -> tuple[float, float, int] | str:
    """``_one_way_anova`` of the complete items (``_complete_items``)."""
    n, k = complete.shape
    if n < 2:
        return f"fewer than 2 complete items ({n} item{'' if n == 1 else 's'} rated by all {k} raters)"
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
        return Stat(None, "no between-item variance: all item means are equal")
    return Stat((msb - msw) / msb)


def icc1_and_icc1k(matrix: npt.ArrayLike) -> tuple[Stat, Stat]:
    """``icc1`` and ``icc1k`` from one one-way ANOVA (same formulas, rules and undefined cases)."""
    return _icc_pair(_one_way_anova(matrix))


def _icc_pair(anova: tuple[float, float, int] | str) -> tuple[Stat, Stat]:
    if isinstance(anova, str):
        return Stat(None, anova), Stat(None, anova)
    msb, msw, k = anova
    single = Stat((msb - msw) / (msb + (k - 1) * msw))
    if msb == 0:
        return single, Stat(None, "no between-item variance: all item means are equal")
    return single, Stat((msb - msw) / msb)


def icc_one_way(matrix: npt.ArrayLike) -> ICCResult:
    """``icc1_and_icc1k`` with the counts they rest on: the complete items used, the raters, and the
    items rated at all. Same formulas, missing-data rule (listwise deletion) and undefined cases;
    a reader told "ICC 0.8" must also be told when it rests on 2 of 52 items."""
    complete, n_rated = _complete_items(matrix)  # once: the ANOVA and the counts rest on the same items
    single, average = _icc_pair(_anova_of_complete(complete))
    return ICCResult(single, average, int(complete.shape[0]), int(complete.shape[1]), n_rated)
