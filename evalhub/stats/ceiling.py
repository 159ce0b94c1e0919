"""The human ceiling: how well each rater agrees with the other raters, and how well the judge does on the same items.

Scored as the alternative annotator test scores a label against the other humans' labels of an item
(Calderon, Reichart & Dror 2025): accuracy for nominal data, negative RMSE for Likert.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from evalhub.stats.confusion import category_index
from evalhub.stats.inputs import _as_matrix, _as_vector
from evalhub.stats.kappa import BootstrapCI, _check_bootstrap, _percentile_ci
from evalhub.stats.results import Stat

Scoring = Literal["accuracy", "neg_rmse"]
SCORINGS: tuple[Scoring, ...] = ("accuracy", "neg_rmse")

# Krippendorff (2004, Content Analysis, 2nd ed., p. 241): alpha >= 0.800 for reliable data, 0.667 as the
# lowest value that allows tentative conclusions. Below it the raters disagree so much that "the judge
# agrees with them as well as they agree with each other" says little about the judge.
LOW_HUMAN_ALPHA = 0.667

# Per rater, the bootstrap resamples the rater's items. When the items take fewer distinct (rater score,
# judge score) pairs than there are items, each score's replicate is a multinomial draw of its distinct
# values' frequencies (the cost follows the distinct values, see _paired_mean_ci); otherwise indices are
# drawn. Chunks keep the (replicates x values) matrices around this many cells.
_BOOTSTRAP_CELLS_PER_CHUNK = 4_000_000


@dataclass(frozen=True)
class RaterCeiling:
    """One rater's mean agreement with the other raters of their items, and the judge's on the same items."""

    rater: int  # column of the matrix
    n_items: int  # items the rater and the judge labelled that have at least one other rating
    human: float | None
    judge: float | None
    human_ci: BootstrapCI
    judge_ci: BootstrapCI
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


def _item_scores(m: np.ndarray, judge: np.ndarray, scoring: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell (item, rater): the rater's and the judge's score against the item's other raters.

    Returns (human_scores, judge_scores, usable), each items x raters; scores are NaN where not usable.
    Both are computed from per-item totals, so the cost is a few passes over the matrix.
    """
    rated = ~np.isnan(m)
    n_i = rated.sum(axis=1)
    usable = rated & (n_i >= 2)[:, None] & ~np.isnan(judge)[:, None]
    others = (n_i - 1).astype(float)[:, None]
    human = np.full(m.shape, np.nan)
    judged = np.full(m.shape, np.nan)
    if not usable.any():
        return human, judged, usable
    if scoring == "accuracy":
        domain = np.unique(m[rated])
        codes = np.zeros(m.shape, dtype=np.intp)
        codes[rated] = category_index(m[rated], domain)
        item_rows = np.nonzero(rated)[0]
        cells = item_rows * domain.size + codes[rated]
        counts = np.bincount(cells, minlength=m.shape[0] * domain.size).reshape(m.shape[0], domain.size)
        same_as_rater = np.take_along_axis(counts, codes, axis=1)
        judge_pos = np.minimum(np.searchsorted(domain, judge), domain.size - 1)
        judge_pos = np.where(np.isnan(judge), 0, judge_pos)
        judge_in_domain = ~np.isnan(judge) & (domain[judge_pos] == judge)
        same_as_judge = np.where(judge_in_domain, counts[np.arange(m.shape[0]), judge_pos], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            human_s = (same_as_rater - 1.0) / others
            judge_s = (same_as_judge[:, None] - (m == judge[:, None])) / others
    elif scoring == "neg_rmse":
        filled = np.where(rated, m, 0.0)
        s1 = filled.sum(axis=1)[:, None]
        s2 = (filled**2).sum(axis=1)[:, None]
        o1, o2 = s1 - filled, s2 - filled**2  # sum and sum of squares of the other raters' labels

        def neg_rmse(label: np.ndarray) -> np.ndarray:
            # sum_k (a - x_k)^2 = m a^2 - 2 a sum x_k + sum x_k^2; clipped at 0 against float residue.
            squares = np.maximum(others * label**2 - 2 * label * o1 + o2, 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                return -np.sqrt(squares / others)

        human_s = neg_rmse(filled)
        judge_s = neg_rmse(np.where(np.isnan(judge), 0.0, judge)[:, None])
    else:
        raise ValueError(f"unknown scoring {scoring!r}; expected one of {', '.join(SCORINGS)}")
    human[usable] = human_s[usable]
    judged[usable] = judge_s[usable]
    return human, judged, usable


def _paired_mean_ci(
    pairs: np.ndarray,
    freq: np.ndarray,
    h: np.ndarray,
    j: np.ndarray,
    n_boot: int,
    rng: np.random.Generator,
    confidence: float,
) -> tuple[BootstrapCI, BootstrapCI]:
    """Percentile CIs of mean(h) and mean(j) under resampling of the items.

    ``pairs`` (P, 2) are the distinct (h, j) pairs and ``freq`` how many items have each. With fewer
    distinct pairs than items, each mean's replicates are a multinomial draw over its own distinct
    values: summing a multinomial over the pairs by h (or by j) gives exactly that multinomial, so each
    interval has the distribution it has when the pairs are resampled together, at the cost of H + J
    categories instead of P (about 14 + 36 against 135 per rater on a 1-5 scale with 3 raters). Only the
    joint draw of the two means is not kept, and no interval uses it. Otherwise item indices are drawn,
    shared by both means.
    """
    n = h.size
    if pairs.shape[0] < n:
        cis = []
        for column, what in ((0, "the rater's score"), (1, "the judge's score")):
            values, code = np.unique(pairs[:, column], return_inverse=True)
            counts = np.bincount(code.reshape(-1), weights=freq, minlength=values.size)
            chunk = max(1, _BOOTSTRAP_CELLS_PER_CHUNK // values.size)
            means = [rng.multinomial(n, counts / n, size=min(chunk, n_boot - start)).astype(float) @ values / n
                     for start in range(0, n_boot, chunk)]
            cis.append(_percentile_ci(np.concatenate(means), n_boot, confidence, what))
        return cis[0], cis[1]
    means_h, means_j = [], []
    chunk = max(1, _BOOTSTRAP_CELLS_PER_CHUNK // n)
    for start in range(0, n_boot, chunk):
        index = rng.integers(0, n, size=(min(chunk, n_boot - start), n))
        means_h.append(h[index].mean(axis=1))
        means_j.append(j[index].mean(axis=1))
    return (
        _percentile_ci(np.concatenate(means_h), n_boot, confidence, "the rater's score"),
        _percentile_ci(np.concatenate(means_j), n_boot, confidence, "the judge's score"),
    )


def _distinct_pairs(rater: np.ndarray, h: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, ...]:
    """Distinct (rater, h, j) triples of the usable cells: (rater, h, j, count) arrays sorted by rater.

    Built from 1-D uniques over all cells at once: np.unique(axis=0), or one per rater, sorts much more.
    The scores take few distinct values, so each is coded by a search among its distinct values and the
    triples are counted with a bincount over the codes, which avoids sorting every cell (the result,
    sorted by code, is what ``np.unique`` of the codes gives).
    """
    if rater.size == 0:
        return rater, h, j, np.zeros(0, dtype=np.intp)
    h_values = np.unique(h)
    j_values = np.unique(j)
    h_code = np.searchsorted(h_values, h)
    j_code = np.searchsorted(j_values, j)
    key = (rater.astype(np.int64) * h_values.size + h_code) * j_values.size + j_code
    n_keys = (int(rater.max()) + 1) * h_values.size * j_values.size
    if n_keys > 4 * key.size + 1024:  # sparse codes: counting over the whole range would cost more than sorting
        distinct, freq = np.unique(key, return_counts=True)
    else:
        counts = np.bincount(key, minlength=n_keys)
        distinct = np.flatnonzero(counts)
        freq = counts[distinct]
    per_rater = h_values.size * j_values.size
    return (distinct // per_rater).astype(rater.dtype), h_values[distinct // j_values.size % h_values.size], \
        j_values[distinct % j_values.size], freq


def human_ceiling(
    humans: npt.ArrayLike,
    judge: npt.ArrayLike,
    *,
    scoring: str,
    human_alpha: Stat | None = None,
    n_boot: int = 1000,
    seed: int = 0,
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

    CIs: per rater, a percentile bootstrap over I_j, seeded (one generator for all raters, in column
    order). Each interval has the distribution it has when the items are resampled; when the scores take
    few distinct values, each score's replicates are drawn over its own distinct values (a multinomial,
    the marginal of resampling the items), otherwise item indices are drawn for both scores together.

    Missing data: NaN ratings are ignored; items with a single rating or no judge label are left out
    of every I_j.

    Undefined: a rater with no item in I_j has ``human = judge = None`` with a reason; with no rater
    defined, ``summary`` is None and a note says why. When ``human_alpha`` is given and is below
    ``LOW_HUMAN_ALPHA`` (0.667, Krippendorff's lowest level for tentative conclusions) or undefined,
    a note says the raters agree too little for the comparison to mean much.
    """
    if scoring not in SCORINGS:
        raise ValueError(f"unknown scoring {scoring!r}; expected one of {', '.join(SCORINGS)}")
    _check_bootstrap(n_boot, confidence)
    m = _as_matrix(humans)
    y = _as_vector(judge, "judge")
    if y.shape[0] != m.shape[0]:
        raise ValueError(f"judge has {y.shape[0]} labels for {m.shape[0]} items")
    human_s, judge_s, usable = _item_scores(m, y, scoring)
    # Cells grouped by rater (column-major), so that each rater's cells are one slice.
    rater_of_cell, item_of_cell = np.nonzero(usable.T)
    h_cells, j_cells = human_s[item_of_cell, rater_of_cell], judge_s[item_of_cell, rater_of_cell]
    bounds = np.searchsorted(rater_of_cell, np.arange(m.shape[1] + 1))
    pair_rater, pair_h, pair_j, pair_freq = _distinct_pairs(rater_of_cell, h_cells, j_cells)
    pair_bounds = np.searchsorted(pair_rater, np.arange(m.shape[1] + 1))
    rng = np.random.default_rng(seed)
    raters = []
    for j in range(m.shape[1]):
        n = int(bounds[j + 1] - bounds[j])
        if n == 0:
            reason = "no item this rater labelled has another rating and a judge label"
            ci = BootstrapCI(None, None, confidence, n_boot, 0, reason)
            raters.append(RaterCeiling(j, 0, None, None, ci, ci, reason))
            continue
        h, g = h_cells[bounds[j] : bounds[j + 1]], j_cells[bounds[j] : bounds[j + 1]]
        own = slice(pair_bounds[j], pair_bounds[j + 1])
        pairs = np.stack([pair_h[own], pair_j[own]], axis=1)
        human_ci, judge_ci = _paired_mean_ci(pairs, pair_freq[own], h, g, n_boot, rng, confidence)
        raters.append(RaterCeiling(j, n, float(h.mean()), float(g.mean()), human_ci, judge_ci))
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
