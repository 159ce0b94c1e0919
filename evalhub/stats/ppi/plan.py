"""How many human-rated items per group reach a target interval width for a group difference, with the judge
(PPI++) and without it (people alone). Closed-form variances, no simulation; framework-free (numpy, scipy.special).

A group has M items; the judge scores all of them and people rate a uniformly random n of them (the other
N = M - n are unlabelled). sigma_Y, sigma_f: the standard deviations across items of the per-item human mean
and of the pool's per-item mean; rho their correlation. Under the i.i.d. view PPI's interval rests on, the
variance of ``ppi_mean``'s estimate with a fixed lambda is

    V(n, lambda) = (sigma_Y^2 - 2 lambda rho sigma_Y sigma_f + lambda^2 sigma_f^2) / n + lambda^2 sigma_f^2 / N,

smallest at lambda* = rho (sigma_Y / sigma_f) N / M (the population value of ``ppi.ppi_lambda``), clipped to
[0, 1] as the estimator clips it. Unclipped, it is

    V(n) = sigma_Y^2 ((1 - rho^2) / n + rho^2 / M):

the judge removes the share rho^2 of the humans' variance, but its own term sigma_Y^2 rho^2 / M stays however
many items people rate. People alone (lambda = 0): V0(n) = sigma_Y^2 / n. For two independent groups the
variances add, and a normal (1 - alpha) interval's expected width is 2 z_{1-alpha/2} sqrt(V_a + V_b).

These are large-sample widths: the normal quantile z, as ``ppi_mean``'s intervals use it. On few items a
Student t interval would be wider; ``t_widening`` gives by how much (issue 25, eighth review: 2.221 on 3 + 3
items, where a t interval would be about 3.15).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from evalhub.stats.inputs import complete_pairs
from evalhub.stats.ppi.mean import NAN, z_quantile

# Below this many human-rated items in a group the plan's words add that a t interval would be wider than the
# large-sample width: at 30 + 30 items t_{0.975, 58} / z = 1.02, at 3 + 3 it is 1.42.
SMALL_SAMPLE_ITEMS = 30


@dataclass(frozen=True)
class GroupMoments:
    """One group for the planner: the spread of the human and judge scores across items, their correlation,
    and the number of items M (the judge scores all; people rate some). NaN fields with ``reason`` when a
    pilot could not give them."""

    sd_human: float
    sd_judge: float
    rho: float
    n_items: int
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.reason is not None:
            return
        if not (math.isfinite(self.sd_human) and self.sd_human > 0):
            raise ValueError(f"sd_human must be a positive number, got {self.sd_human}")
        if not (math.isfinite(self.sd_judge) and self.sd_judge >= 0):
            raise ValueError(f"sd_judge must be a non-negative number, got {self.sd_judge}")
        if not -1.0 <= self.rho <= 1.0:
            raise ValueError(f"rho must be between -1 and 1, got {self.rho}")
        if self.n_items < 2:
            raise ValueError(f"a group needs at least 2 items, got {self.n_items}")


@dataclass(frozen=True)
class BudgetPoint:
    """Human-rated items per group and the expected interval width they give (lambda NaN without the judge)."""

    n_a: int
    n_b: int
    width: float
    lam_a: float
    lam_b: float


@dataclass(frozen=True)
class BudgetPlan:
    """The smallest human budgets reaching ``width``, with the judge and without it; None where even every
    item rated by people is not enough (``notes`` says so). ``items_saved`` = human-rated items (both groups
    together) the judge saves. ``reason`` (and Nones) when a group's moments are undefined."""

    width: float
    alpha: float
    with_judge: BudgetPoint | None
    without_judge: BudgetPoint | None
    items_saved: int | None
    notes: tuple[str, ...] = field(default=())
    reason: str | None = None


def pilot_moments(*, y: npt.ArrayLike, f: npt.ArrayLike, n_unlabelled: int) -> GroupMoments:
    """A group's moments from a pilot: paired per-item human means ``y`` and pool means ``f`` on the pilot's
    human-rated items, and the number of the group's other items (M = pilot pairs + n_unlabelled).

    Formulas: sd with ddof 1; rho = Pearson's correlation (0 when the judge's scores do not vary).
    Missing data: pairs with a NaN on either side are dropped. Undefined (NaN fields, ``reason``): fewer
    than 3 pairs, or per-item human means that do not vary (the reason gives their value). A negative
    n_unlabelled raises ValueError.
    """
    if n_unlabelled < 0:
        raise ValueError(f"n_unlabelled must be non-negative, got {n_unlabelled}")
    yv, fv = complete_pairs(y, f)
    n_items = int(yv.size) + n_unlabelled
    if yv.size < 3:
        plural = "" if yv.size == 1 else "s"
        return GroupMoments(NAN, NAN, NAN, n_items, f"{yv.size} pilot pair{plural}: the moments need at least 3")
    sd_y, sd_f = float(np.std(yv, ddof=1)), float(np.std(fv, ddof=1))
    if sd_y == 0:
        return GroupMoments(NAN, NAN, NAN, n_items,
                            f"the pilot's human item means do not vary, all {float(yv[0]):.3g}")
    rho = float(np.corrcoef(yv, fv)[0, 1]) if sd_f > 0 else 0.0
    return GroupMoments(sd_y, sd_f, min(max(rho, -1.0), 1.0), n_items)


def ppi_variance(moments: GroupMoments, n: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(V(n, lambda*), lambda*) of the module docstring for each n in 1..M: lambda* clipped to [0, 1], and
    0 when n = M (no unlabelled item) or the judge does not vary."""
    n_arr = np.asarray(n, dtype=float)
    s_y, s_f, rho, m = moments.sd_human, moments.sd_judge, moments.rho, moments.n_items
    big_n = m - n_arr
    lam = np.zeros_like(n_arr) if s_f == 0 else np.clip(rho * (s_y / s_f) * big_n / m, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        judge_term = np.where(big_n > 0, lam**2 * s_f**2 / big_n, 0.0)
    variance = (s_y**2 - 2 * lam * rho * s_y * s_f + lam**2 * s_f**2) / n_arr + judge_term
    return variance, lam


def plan_human_budget(
    *, group_a: GroupMoments, group_b: GroupMoments, width: float, alpha: float = 0.05,
    names: tuple[str, str] | None = None,
) -> BudgetPlan:
    """The smallest number n of human-rated items per group (n_g = min(n, M_g)) whose expected (1 - alpha)
    interval for mean_a - mean_b is at most ``width`` wide (full width, high - low), with the judge
    (PPI++ at lambda*) and without it.

    Formulas: width(n) = 2 z_{1-alpha/2} sqrt(V_a(n_a) + V_b(n_b)) with V of ``ppi_variance`` (with the
    judge) or sigma_Y^2 / n (without); n is found by evaluating every n from 2 to max(M_a, M_b). Where
    lambda* is not clipped in either group this equals the closed form
    n = ceil(sum_g sigma_g^2 (1 - rho_g^2) / ((width / 2z)^2 - sum_g sigma_g^2 rho_g^2 / M_g)),
    and with the same n everywhere the judge's gain is the factor 1 - rho^2 on the humans' variance.
    The widths are expectations of the normal approximation; the estimated lambda and standard errors of
    a real study scatter around them (``tests/evalhub/stats/test_ppi.py`` checks against simulation).

    Undefined (Nones and ``reason``, which names the group by ``names``, e.g. "group “human”: ..."; "group a"
    without names): a group's moments are undefined. Invalid input raises ValueError:
    width not positive, alpha outside (0, 1).
    """
    z = z_quantile(alpha)
    if not (math.isfinite(width) and width > 0):
        raise ValueError(f"width must be a positive number, got {width}")
    labels = ("a", "b") if names is None else tuple(f"“{name}”" for name in names)
    for label, group in zip(labels, (group_a, group_b), strict=True):
        if group.reason is not None:
            return BudgetPlan(width, alpha, None, None, None, reason=f"group {label}: {group.reason}")
    n = np.arange(2, max(group_a.n_items, group_b.n_items) + 1)
    n_a, n_b = np.minimum(n, group_a.n_items), np.minimum(n, group_b.n_items)
    var_a, lam_a = ppi_variance(group_a, n_a)
    var_b, lam_b = ppi_variance(group_b, n_b)
    with_judge = _first_within(width, 2 * z * np.sqrt(var_a + var_b), n_a, n_b, lam_a, lam_b)
    alone = 2 * z * np.sqrt(group_a.sd_human**2 / n_a + group_b.sd_human**2 / n_b)
    nan = np.full(n.size, NAN)
    without_judge = _first_within(width, alone, n_a, n_b, nan, nan)
    notes = []
    if with_judge is None:
        notes.append(f"with the judge, even every item rated by people gives an expected width of "
                     f"{2 * z * math.sqrt(var_a[-1] + var_b[-1]):.4g}, above {width:.4g}")
    if without_judge is None:
        notes.append(f"without the judge, every item rated by people gives an expected width of "
                     f"{alone[-1]:.4g}, above {width:.4g}")
    saved = None
    if with_judge is not None and without_judge is not None:
        saved = without_judge.n_a + without_judge.n_b - with_judge.n_a - with_judge.n_b
    return BudgetPlan(width, alpha, with_judge, without_judge, saved, tuple(notes))


def t_widening(n_a: int, n_b: int, alpha: float = 0.05) -> tuple[float, int]:
    """(t_{1-alpha/2, df} / z_{1-alpha/2}, df) with df = n_a + n_b - 2: how much wider than the plan's
    large-sample width a Student t interval on n_a + n_b human-rated items would be.

    df is the pooled two-sample one, the largest df Welch-Satterthwaite can give (it lies between
    min(n_a, n_b) - 1 and n_a + n_b - 2), so the factor is a lower bound on the t interval's widening; it
    ignores the judge's items, which the PPI interval treats as known. ValueError: df < 1 or a bad alpha.
    """
    df = n_a + n_b - 2
    if df < 1:
        raise ValueError(f"a t interval needs n_a + n_b >= 3, got {n_a} + {n_b}")
    z = z_quantile(alpha)
    from scipy import special  # on use (STYLE 15)

    return float(special.stdtrit(df, 1.0 - alpha / 2.0)) / z, df


def _first_within(
    width: float, widths: np.ndarray, n_a: np.ndarray, n_b: np.ndarray, lam_a: np.ndarray, lam_b: np.ndarray
) -> BudgetPoint | None:
    hits = np.flatnonzero(widths <= width)
    if hits.size == 0:
        return None
    k = int(hits[0])
    return BudgetPoint(int(n_a[k]), int(n_b[k]), float(widths[k]), float(lam_a[k]), float(lam_b[k]))
