"""How likely is the alternative annotator test to pass? A seeded Monte-Carlo plan for a study's design.

Framework-free (numpy and scipy only). The generative model, stated plainly:

- **Design.** ``raters`` humans each rate ``items_per_rater`` items; there are
  ``raters * items_per_rater // raters_per_item`` items, and rater r rates items
  ``(r * items_per_rater + t) mod n_items`` for t = 0 .. items_per_rater - 1 (a cyclic design: every item
  gets ``raters_per_item`` or ``raters_per_item + 1`` raters, never fewer than 2 when raters_per_item >= 2,
  and no rater rates an item twice). The judge labels every item once.
- **Truth.** Each item has a true value, uniform over ``levels`` values 0 .. levels-1 (categories for
  accuracy, scale points for neg_rmse).
- **Accuracy (nominal).** A human reports the true category with probability ``human`` and otherwise one
  of the other ``levels - 1`` categories uniformly; the judge does the same with probability ``judge``.
- **neg_rmse (Likert).** A human reports ``clip(round(truth + N(0, human^2)), 0, levels - 1)``; the
  judge the same with standard deviation ``judge`` (noise in scale points).
- **The test** is the one of ``alt_test.alt_test_long`` on every replicate: wins against the other
  humans of each item, a one-sided t-test per human at ``epsilon``, Benjamini-Yekutieli at ``q_fdr``,
  passed when the winning rate is at least 0.5. With fewer than 3 raters or fewer than 30 items per rater
  the test gives no verdict, so the power is 0 (with a note).

The power is the share of replicates that pass, with its Monte-Carlo standard error
sqrt(p (1 - p) / replicates). Replicates are drawn in vectorised chunks (no loop over raters or
replicates in Python), from a numpy Generator seeded by (seed, design): a design point's estimate does not
depend on which other points were searched. ``plan`` searches two small grids (``ITEMS_GRID`` at the
stated number of raters, ``RATERS_GRID`` at the stated items per rater), ascending, and stops each at the
first point reaching the target power (80 %).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from evalhub.stats.alt_test import (
    DEFAULT_EPSILON,
    MIN_HUMANS,
    MIN_INSTANCES_PER_HUMAN,
    Q_FDR,
    SCORINGS,
    Scoring,
)

TARGET_POWER = 0.8
DEFAULT_REPLICATES = 200
MAX_REPLICATES = 5000
ITEMS_GRID: tuple[int, ...] = (30, 40, 50, 60, 80, 100, 150, 200, 300)
RATERS_GRID: tuple[int, ...] = (3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100)
MIN_BUDGET_REPLICATES = 20
MAX_RATINGS = 2_000_000  # per replicate: a design beyond it is not a study to simulate in a request
# Ratings simulated per chunk: bounds memory (a few arrays of this many floats) whatever the design.
_CHUNK_RATINGS = 1_000_000


@dataclass(frozen=True)
class Design:
    raters: int
    items_per_rater: int
    raters_per_item: int

    @property
    def n_items(self) -> int:
        return self.raters * self.items_per_rater // self.raters_per_item


@dataclass(frozen=True)
class RatingModel:
    """The humans' and the judge's quality: for accuracy, the probability of reporting the true category;
    for neg_rmse, the standard deviation of their noise in scale points."""

    scoring: Scoring
    levels: int
    human: float
    judge: float


@dataclass(frozen=True)
class Power:
    design: Design
    power: float
    se: float
    replicates: int


@dataclass(frozen=True)
class Plan:
    """The power at the stated design, and the smallest grid points reaching ``target`` (None: none does)."""

    model: RatingModel
    epsilon: float
    target: float
    stated: Power
    items_needed: Power | None
    raters_needed: Power | None
    searched: tuple[Power, ...]
    notes: tuple[str, ...] = field(default=())
    seconds: float = 0.0

    @property
    def no_verdict(self) -> str | None:
        """Why the stated design gives no verdict (pages show it in place of its power of 0), or None."""
        return no_verdict_note(self.stated.design)


def no_verdict_note(design: Design) -> str | None:
    """The note for a design the test cannot judge (too few raters or ratings each), or None."""
    if design.raters < MIN_HUMANS or design.items_per_rater < MIN_INSTANCES_PER_HUMAN:
        return (f"the test needs at least {MIN_HUMANS} raters with {MIN_INSTANCES_PER_HUMAN} ratings "
                "(one item on one question) each: this design gives no verdict")
    return None


def items_not_reached_note(design: Design, target: float = TARGET_POWER) -> str:
    """The note when no items per rater in ``ITEMS_GRID`` reaches ``target`` at the design's raters."""
    return (f"no number of ratings per rater in {ITEMS_GRID} reaches {target:.0%} power "
            f"with {design.raters} raters")


def raters_not_reached_note(design: Design, target: float = TARGET_POWER) -> str:
    """The note when no number of raters in ``RATERS_GRID`` reaches ``target`` at the design's items per rater."""
    return (f"no number of raters in {RATERS_GRID} reaches {target:.0%} power "
            f"with {design.items_per_rater} ratings per rater")


def check_inputs(design: Design, model: RatingModel, epsilon: float, replicates: int) -> None:
    """Raise ValueError, with a one-line reason, for a design or model the simulation cannot take."""
    if design.raters < 2 or design.raters_per_item < 2 or design.raters_per_item > design.raters:
        raise ValueError(f"raters per item must be between 2 and the number of raters ({design.raters}), "
                         f"got {design.raters_per_item}")
    if design.items_per_rater < 1:
        raise ValueError(f"items per rater must be at least 1, got {design.items_per_rater}")
    if design.raters * design.items_per_rater > MAX_RATINGS:
        raise ValueError(f"the design has {design.raters * design.items_per_rater:,} ratings; "
                         f"the simulation takes at most {MAX_RATINGS:,}")
    if model.scoring not in SCORINGS:
        raise ValueError(f"unknown scoring {model.scoring!r}; expected one of {', '.join(SCORINGS)}")
    if model.levels < 2:
        raise ValueError(f"the scale needs at least 2 values, got {model.levels}")
    for who, value in (("human", model.human), ("judge", model.judge)):
        if model.scoring == "accuracy" and not 0.0 <= value <= 1.0:
            raise ValueError(f"the {who} accuracy must be between 0 and 1, got {value}")
        if model.scoring == "neg_rmse" and not (math.isfinite(value) and value >= 0.0):
            raise ValueError(f"the {who} noise (sd in scale points) must be 0 or more, got {value}")
    if not 0.0 < epsilon < 1.0:
        raise ValueError(f"epsilon must be strictly between 0 and 1, got {epsilon}")
    if not 1 <= replicates <= MAX_REPLICATES:
        raise ValueError(f"replicates must be between 1 and {MAX_REPLICATES}, got {replicates}")


def design_slots(design: Design) -> tuple[np.ndarray, np.ndarray]:
    """The cyclic design's (rater, item) of every rating, rater-major (rater r's ratings are contiguous)."""
    k = design.items_per_rater
    rater = np.repeat(np.arange(design.raters), k)
    item = (rater * k + np.tile(np.arange(k), design.raters)) % design.n_items
    return rater, item


def simulate_power(design: Design, model: RatingModel, *, epsilon: float = DEFAULT_EPSILON, q_fdr: float = Q_FDR,
                   replicates: int = DEFAULT_REPLICATES, seed: int = 0) -> Power:
    """The Monte-Carlo probability that the alt-test passes for this design and model (see the module)."""
    check_inputs(design, model, epsilon, replicates)
    if design.raters < MIN_HUMANS or design.items_per_rater < MIN_INSTANCES_PER_HUMAN:
        return Power(design, 0.0, 0.0, replicates)
    rng = np.random.default_rng([seed, design.raters, design.items_per_rater, design.raters_per_item])
    rater, item = design_slots(design)
    per_chunk = max(1, _CHUNK_RATINGS // rater.size)
    passed = 0
    done = 0
    while done < replicates:
        b = min(per_chunk, replicates - done)
        passed += int(_passes(rng, b, design, item, model, epsilon, q_fdr).sum())
        done += b
    p = passed / replicates
    return Power(design, p, math.sqrt(p * (1.0 - p) / replicates), replicates)


def plan(design: Design, model: RatingModel, *, epsilon: float = DEFAULT_EPSILON,
         replicates: int = DEFAULT_REPLICATES, seed: int = 0, target: float = TARGET_POWER,
         rating_budget: int | None = None) -> Plan:
    """Power at the stated design, then the items per rater and the raters needed for ``target`` power.

    ``rating_budget`` (e.g. for a web page) caps the simulated ratings per design point: a large design
    gets fewer replicates (never under 20), which its Power reports, and so a larger standard error.
    """
    started = time.perf_counter()

    def simulate(d: Design) -> Power:
        n = replicates
        if rating_budget is not None:
            n = min(replicates, max(MIN_BUDGET_REPLICATES, rating_budget // (d.raters * d.items_per_rater)))
        return simulate_power(d, model, epsilon=epsilon, replicates=n, seed=seed)

    stated = simulate(design)
    searched = [stated]
    notes: list[str] = []
    if no_verdict := no_verdict_note(design):
        notes.append(no_verdict)

    def first_reaching(designs: list[Design]) -> Power | None:
        for d in designs:
            power = stated if d == design else simulate(d)
            if d != design:
                searched.append(power)
            if power.power >= target:
                return power  # stop early: the grids ascend
        return None

    items_needed = first_reaching([Design(design.raters, k, design.raters_per_item) for k in ITEMS_GRID])
    raters_needed = first_reaching([Design(n, design.items_per_rater, design.raters_per_item) for n in RATERS_GRID
                                    if n >= design.raters_per_item])
    if items_needed is None:
        notes.append(items_not_reached_note(design, target))
    if raters_needed is None:
        notes.append(raters_not_reached_note(design, target))
    return Plan(model, epsilon, target, stated, items_needed, raters_needed, tuple(searched), tuple(notes),
                time.perf_counter() - started)


def _labels(rng: np.random.Generator, truth: np.ndarray, quality: float, model: RatingModel) -> np.ndarray:
    if model.scoring == "accuracy":
        wrong = (truth + rng.integers(1, model.levels, size=truth.shape)) % model.levels
        return np.where(rng.random(truth.shape) < quality, truth, wrong)
    noisy = np.rint(truth + rng.normal(0.0, quality, size=truth.shape)) if quality > 0 else truth
    return np.clip(noisy, 0, model.levels - 1).astype(np.int64)


def _passes(rng: np.random.Generator, b: int, design: Design, item: np.ndarray, model: RatingModel,
            epsilon: float, q_fdr: float) -> np.ndarray:
    """Whether the test passes on each of ``b`` replicates, all drawn and tested at once."""
    n_items = design.n_items
    truth = rng.integers(0, model.levels, size=(b, n_items))
    judge = _labels(rng, truth, model.judge, model).reshape(-1)
    inst = (np.arange(b)[:, None] * n_items + item[None, :]).reshape(-1)  # replicate-major instance ids
    own = _labels(rng, truth.reshape(-1)[inst], model.human, model)
    llm = judge[inst]
    n_inst = b * n_items
    # Integer labels: every count and sum of squares below is exact, so ties are exact (as in alt_test).
    if model.scoring == "accuracy":
        counts = np.bincount(inst * model.levels + own, minlength=n_inst * model.levels)
        own_score = counts[inst * model.levels + own] - 1  # matches among the others
        llm_score = counts[inst * model.levels + llm] - (own == llm)
    else:
        n = np.bincount(inst, minlength=n_inst)[inst]
        s1 = np.bincount(inst, weights=own, minlength=n_inst)[inst]
        s2 = np.bincount(inst, weights=own.astype(float) ** 2, minlength=n_inst)[inst]
        # Sum over the others o of (x - o)^2 is n x^2 - 2 x s1 + s2 minus x's own term; scores are minus it.
        own_score = -(n * own**2 - 2 * own * s1 + s2)
        llm_score = -(n * llm**2 - 2 * llm * s1 + s2 - (llm - own) ** 2)
    d = ((own_score >= llm_score).astype(float) - (llm_score >= own_score)).reshape(b, design.raters, -1)
    k = d.shape[2]
    mean = d.mean(axis=2)
    sd = d.std(axis=2, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean - epsilon) / (sd / math.sqrt(k))
    from scipy import stats as sps  # on use: importing scipy.stats takes 0.7 s (STYLE 15)

    p = sps.t.cdf(t, k - 1)
    # A constant d: scipy's p is 0 below epsilon and 1 above; equal to epsilon it is undefined, never rejected.
    p = np.where(sd == 0, np.where(mean < epsilon, 0.0, 1.0), p)
    adjusted = sps.false_discovery_control(p, axis=1, method="by")
    winning_rate = (adjusted <= q_fdr).sum(axis=1) / design.raters
    return winning_rate >= 0.5
