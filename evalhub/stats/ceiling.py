"""The human ceiling: how well each rater agrees with the other raters, and how well the judge does on the same items.

Scored as the alternative annotator test scores a label against the other humans' labels of an item
(Calderon, Reichart & Dror 2025): accuracy for nominal data, negative RMSE for Likert.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from evalhub.stats.inputs import as_matrix, as_vector, distinct_codes
from evalhub.stats.results import Stat

Scoring = Literal["accuracy", "neg_rmse"]
SCORINGS: tuple[Scoring, ...] = ("accuracy", "neg_rmse")

# Krippendorff (2004, Content Analysis, 2nd ed., p. 241): alpha >= 0.800 for reliable data, 0.667 as the
# lowest value that allows tentative conclusions. Below it the raters disagree so much that "the judge
# agrees with them as well as they agree with each other" says little about the judge.
LOW_HUMAN_ALPHA = 0.667

@dataclass(frozen=True)
class MeanCI:
    """Student's t interval of a mean score over the rater's items (``low``/``high`` None with ``reason``)."""

    low: float | None
    high: float | None
    confidence: float
    reason: str | None = None


@dataclass(frozen=True)
class RaterCeiling:
    """One rater's mean agreement with the other raters of their items, and the judge's on the same items."""

    rater: int  # column of the matrix
    n_items: int  # items the rater and the judge labelled that have at least one other rating
    human: float | None
    judge: float | None
    human_ci: MeanCI
    judge_ci: MeanCI
    reason: str | None = None


@dataclass(frozen=True)
class HumanCeiling:
    """Every rater's ceiling, and where the judge falls among the raters."""

    scoring: Scoring
    raters: tuple[RaterCeiling, ...]
    judge_better: int  # raters whose own score is below the judge's on their items
    n_compared: int  # raters with a defined score
    summary: str | None  # "the judge agrees with your raters better than k of n of them do"
    notes: tuple[str, ...]


def _cell_scores(m: np.ndarray, judge: np.ndarray, scoring: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The usable cells (a rating of an item with another rating and a judge label), each rater's together in item
    order: (the rater of each cell, the rater's score, the judge's score), each scored against the item's other
    raters. Computed from per-item totals, then for the usable cells only, so the cost is a few passes over the
    matrix."""
    rated = ~np.isnan(m)
    n_i = rated.sum(axis=1)
    usable = rated & (n_i >= 2)[:, None] & ~np.isnan(judge)[:, None]
    rater, item = np.nonzero(usable.T)  # column-major: each rater's cells are one slice
    if rater.size == 0:
        return rater, np.empty(0), np.empty(0)
    others = (n_i - 1).astype(float)[item]
    if scoring == "accuracy":
        domain, rated_codes = distinct_codes(m[rated])
        codes = np.zeros(m.shape, dtype=np.intp)
        codes[rated] = rated_codes
        item_rows = np.nonzero(rated)[0]
        counts = np.bincount(item_rows * domain.size + rated_codes,
                             minlength=m.shape[0] * domain.size).reshape(m.shape[0], domain.size)
        same_as_rater = counts[item, codes[item, rater]]
        judge_pos = np.minimum(np.searchsorted(domain, judge), domain.size - 1)
        judge_pos = np.where(np.isnan(judge), 0, judge_pos)
        judge_in_domain = ~np.isnan(judge) & (domain[judge_pos] == judge)
        same_as_judge = np.where(judge_in_domain, counts[np.arange(m.shape[0]), judge_pos], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            human_s = (same_as_rater - 1.0) / others
            judge_s = (same_as_judge[item] - (m[item, rater] == judge[item])) / others
    elif scoring == "neg_rmse":
        filled = np.where(rated, m, 0.0)
        s1, s2 = filled.sum(axis=1), (filled**2).sum(axis=1)
        own = filled[item, rater]
        o1, o2 = s1[item] - own, s2[item] - own**2  # sum and sum of squares of the other raters' labels

        def neg_rmse(label: np.ndarray) -> np.ndarray:
            # sum_k (a - x_k)^2 = m a^2 - 2 a sum x_k + sum x_k^2; clipped at 0 against float residue.
            squares = np.maximum(others * label**2 - 2 * label * o1 + o2, 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                return -np.sqrt(squares / others)

        human_s = neg_rmse(own)
        judge_s = neg_rmse(np.where(np.isnan(judge), 0.0, judge)[item])
    else:
        raise ValueError(f"unknown scoring {scoring!r}; expected one of {', '.join(SCORINGS)}")
    return rater, human_s, judge_s


def score_range(scoring: str) -> tuple[float, float]:
    """What a mean score can be, where ``mean_ci`` cuts the intervals: [0, 1] for accuracy, at most 0 for RMSE."""
    return (0.0, 1.0) if scoring == "accuracy" else (-np.inf, 0.0)


def mean_ci(scores: np.ndarray, confidence: float, bounds: tuple[float, float] = (-np.inf, np.inf)) -> MeanCI:
    """The t interval of the mean of ``scores``: mean -/+ t_{(1+c)/2, n-1} * sd / sqrt(n), sd with ddof 1,
    as ``scipy.stats.ttest_1samp(scores, 0).confidence_interval(confidence)`` gives it (checked in the tests),
    clipped to ``bounds``, the range the score can take (a t interval of a mean near 1 may pass 1).
    Scores that are all equal give the point [mean, mean]; one score gives no interval."""
    n = scores.size
    if n < 2:
        return MeanCI(None, None, confidence, "one item: an interval needs at least two")
    mean = float(scores.mean())
    se = float(scores.std(ddof=1)) / np.sqrt(n)
    # The t quantile as scipy.stats.t.ppf computes it (stdtrit), without importing scipy.stats (0.7 s; STYLE 15).
    from scipy import special  # on use: importing scipy.special takes 0.15 s

    half = float(special.stdtrit(n - 1, (1 + confidence) / 2)) * se
    return MeanCI(max(mean - half, bounds[0]), min(mean + half, bounds[1]), confidence)


def human_ceiling(
    humans: npt.ArrayLike,
    judge: npt.ArrayLike,
    *,
    scoring: str,
    human_alpha: Stat | None = None,
    confidence: float = 0.95,
) -> HumanCeiling:
    """Each rater's leave-one-out agreement with the other raters, beside the judge's on the same items.

    ``humans`` is the items x raters matrix (NaN = missing), ``judge`` the judge's label per item: the
    pool's majority for nominal data, its mean (or rounded mean, see ``pool_label``) for Likert.

    Formulas. For rater j and an item i that j rated, let O_ij be the labels of i's *other* raters
    (m_ij = |O_ij| >= 1) and a the label scored (x_ij for the rater, y_i for the judge):
    - accuracy: s(a) = (1 / m_ij) sum_{o in O_ij} [a == o], the share of the others who gave a;
    - negative RMSE: s(a) = -sqrt((1 / m_ij) sum_{o in O_ij} (a - o)^2).
    The rater's score is H_j = mean over I_j of s(x_ij); the judge's score for that rater is
    J_j = mean over I_j of s(y_i), where I_j = the items j rated that have another rating and a judge
    label. These are the alt-test's scores, averaged. The judge *agrees better than rater j* when
    J_j > H_j (a tie is not better); ``judge_better`` counts those raters among the ``n_compared``
    raters with a defined score.

    CIs: per rater, Student's t interval of each mean over I_j, clipped to the score's range ([0, 1] for
    accuracy, at most 0 for negative RMSE) (``mean_ci``; the scores are means over
    items, bounded, and the raters the alt-test counts have 30 items or more). An interval per mean, not a
    bootstrap: the strip plot reads each mean's interval, and the t interval is exact against scipy
    (``ttest_1samp(...).confidence_interval``) and costs one pass, where 1,000 replicates per rater and pool
    cost most of the evidence section's time at a million ratings (README, bench_analyze).

    Missing data: NaN ratings are ignored; items with a single rating or no judge label are left out
    of every I_j.

    Undefined: a rater with no item in I_j has ``human = judge = None`` with a reason; with no rater
    defined, ``summary`` is None and a note says why. When ``human_alpha`` is given and is below
    ``LOW_HUMAN_ALPHA`` (0.667, Krippendorff's lowest level for tentative conclusions) or undefined,
    a note says the raters agree too little for the comparison to mean much.
    """
    if scoring not in SCORINGS:
        raise ValueError(f"unknown scoring {scoring!r}; expected one of {', '.join(SCORINGS)}")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    m = as_matrix(humans)
    y = as_vector(judge, "judge")
    if y.shape[0] != m.shape[0]:
        raise ValueError(f"judge has {y.shape[0]} labels for {m.shape[0]} items")
    cells = _cell_scores(m, y, scoring)
    raters = _rater_ceilings(cells, m.shape[1], confidence, score_range(scoring))
    scores = [(r.human, r.judge) for r in raters if r.human is not None and r.judge is not None]
    better = sum(1 for human, judged in scores if judged > human)
    notes: list[str] = []
    summary = None
    if scores:
        summary = f"the judge agrees with your raters better than {better} of {len(scores)} of them do"
    else:
        notes.append("no rater shares an item with another rater and the judge: the ceiling is undefined")
    if human_alpha is not None:
        if human_alpha.value is None:
            notes.append(f"the raters' alpha is undefined ({human_alpha.reason}): comparisons with them mean little")
        elif human_alpha.value < LOW_HUMAN_ALPHA:
            notes.append(
                f"the raters agree little with each other (alpha {human_alpha.value:.2f} < {LOW_HUMAN_ALPHA}): "
                "comparisons with them mean little"
            )
    name: Scoring = "accuracy" if scoring == "accuracy" else "neg_rmse"
    return HumanCeiling(name, tuple(raters), better, len(scores), summary, tuple(notes))


def _rater_ceilings(cells: tuple[np.ndarray, np.ndarray, np.ndarray], n_raters: int, confidence: float,
                    score_range: tuple[float, float]) -> list[RaterCeiling]:
    """Each rater's mean score and the judge's on the same items (``_cell_scores``), with CIs."""
    rater_of_cell, h_cells, j_cells = cells
    bounds = np.searchsorted(rater_of_cell, np.arange(n_raters + 1))
    raters = []
    for j in range(n_raters):
        n = int(bounds[j + 1] - bounds[j])
        if n == 0:
            reason = "no item this rater labelled has another rating and a judge label"
            ci = MeanCI(None, None, confidence, reason)
            raters.append(RaterCeiling(j, 0, None, None, ci, ci, reason))
            continue
        h, g = h_cells[bounds[j] : bounds[j + 1]], j_cells[bounds[j] : bounds[j + 1]]
        raters.append(RaterCeiling(j, n, float(h.mean()), float(g.mean()), mean_ci(h, confidence, score_range),
                                   mean_ci(g, confidence, score_range)))
    return raters
