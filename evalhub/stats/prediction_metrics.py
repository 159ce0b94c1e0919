"""How well a judge predicts individual raters (PERSE, CINEMETRIC), free of Django.

Input: ``true[rater][item] = score`` (each rater's held-out human scores) and ``pred[rater][item]``
(the judge's prediction for that rater and item; None or NaN when the answer was unparseable,
refused or not produced). A selector builds both dicts from the ORM and hands them over.

Per rater (``per_rater_metrics``), over the items with both a true and a predicted score (n):

* Kendall's tau-b, Pearson's r, Spearman's rho: ``evalhub.stats`` (same formulas, same rules:
  undefined when n < 2 or either side is constant);
* accuracy: share of items whose prediction equals the true score (``|pred - true| <= tolerance``,
  tolerance 0 by default: an exact match, as CINEMETRIC and PERSE count it);
* MAE: mean of ``|pred - true|``.

Undefined values are None with a reason in ``reasons[metric]``, never 0. Items without a prediction
are not scored as wrong; they are counted in ``n_missing`` so a judge that refuses half the items
shows it.

Averages (``average_metrics``): the macro average, each metric's mean over the raters for whom it
is defined (``n_raters`` says how many), plus the pooled (micro) accuracy and MAE over all scored
items, which is what CINEMETRIC's tables report.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from evalhub import stats

RaterKey = TypeVar("RaterKey", bound=Hashable)
ItemKey = TypeVar("ItemKey", bound=Hashable)

METRICS = ("kendall", "pearson", "spearman", "accuracy", "mae")


@dataclass(frozen=True)
class RaterMetrics:
    rater: Hashable
    n: int  # items with both a true and a predicted score
    n_missing: int  # the rater's true items without a usable prediction
    kendall: float | None
    pearson: float | None
    spearman: float | None
    accuracy: float | None
    mae: float | None
    reasons: dict[str, str] = field(default_factory=dict)  # metric -> why it is None


@dataclass(frozen=True)
class Averaged:
    value: float | None
    n_raters: int  # raters whose value was defined and entered the mean
    reason: str | None = None


@dataclass(frozen=True)
class MetricsSummary:
    n_raters: int
    n_items: int  # scored (rater, item) pairs
    n_missing: int
    kendall: Averaged
    pearson: Averaged
    spearman: Averaged
    accuracy: Averaged
    mae: Averaged
    pooled_accuracy: float | None
    pooled_mae: float | None


def _usable(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _rater_row(
    rater: Hashable, truth: Mapping[ItemKey, float], guesses: Mapping[ItemKey, float | None], tolerance: float
) -> RaterMetrics:
    unknown = [item for item in guesses if item not in truth]
    if unknown:
        raise ValueError(
            f"predictions for rater {rater!r} on items the rater did not rate: {sorted(map(str, unknown))}"
        )
    items = [item for item in truth if _usable(truth[item]) and _usable(guesses.get(item))]
    n_missing = sum(1 for item in truth if _usable(truth[item])) - len(items)
    t = np.array([float(truth[i]) for i in items], dtype=float)
    p = np.array([float(guesses[i] or 0.0) for i in items], dtype=float)  # every item here has a usable guess
    reasons: dict[str, str] = {}
    tau = stats.kendall_tau(t, p)
    r = stats.pearson(t, p)
    rho = stats.spearman(t, p)
    for name, reason in (("kendall", tau.reason), ("pearson", r.reason), ("spearman", rho.reason)):
        if reason:
            reasons[name] = reason
    accuracy = mae = None
    if items:
        diff = np.abs(p - t)
        accuracy = float(np.mean(diff <= tolerance))
        mae = float(np.mean(diff))
    else:
        reasons["accuracy"] = reasons["mae"] = "no item with both a true and a predicted score"
    return RaterMetrics(rater, len(items), n_missing, tau.tau, r.r, rho.r, accuracy, mae, reasons)


def per_rater_metrics(
    true: Mapping[RaterKey, Mapping[ItemKey, float]],
    pred: Mapping[RaterKey, Mapping[ItemKey, float | None]],
    *,
    tolerance: float = 0.0,
) -> list[RaterMetrics]:
    """One row per rater of ``true``, in its order (see the module docstring for each metric).

    Raises ValueError for a prediction whose rater or item has no true score: that is a wrong
    split, not a missing value.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    strangers = [rater for rater in pred if rater not in true]
    if strangers:
        raise ValueError(f"predictions for raters without true scores: {sorted(map(str, strangers))}")
    return [_rater_row(rater, truth, pred.get(rater, {}), tolerance) for rater, truth in true.items()]


def _average(rows: Sequence[RaterMetrics], metric: str) -> Averaged:
    values = [getattr(row, metric) for row in rows if getattr(row, metric) is not None]
    if not values:
        return Averaged(None, 0, f"{metric} is undefined for every rater" if rows else "no raters")
    return Averaged(float(np.mean(values)), len(values))


def average_metrics(rows: Sequence[RaterMetrics]) -> MetricsSummary:
    """Macro averages over raters and pooled accuracy/MAE over all scored items.

    Pooled accuracy = sum_r n_r * accuracy_r / sum_r n_r (likewise MAE), i.e. every scored item
    weighs the same; None when no item was scored.
    """
    n_items = sum(row.n for row in rows)
    pooled_accuracy = pooled_mae = None
    if n_items:
        # A rater with n > 0 scored items always has an accuracy and an MAE.
        pooled_accuracy = sum(row.n * (row.accuracy or 0.0) for row in rows if row.n) / n_items
        pooled_mae = sum(row.n * (row.mae or 0.0) for row in rows if row.n) / n_items
    return MetricsSummary(
        n_raters=len(rows),
        n_items=n_items,
        n_missing=sum(row.n_missing for row in rows),
        kendall=_average(rows, "kendall"),
        pearson=_average(rows, "pearson"),
        spearman=_average(rows, "spearman"),
        accuracy=_average(rows, "accuracy"),
        mae=_average(rows, "mae"),
        pooled_accuracy=pooled_accuracy,
        pooled_mae=pooled_mae,
    )
