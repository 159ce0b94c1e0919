"""Prediction-powered inference (PPI++) for the mean human score of a group and the difference of two groups.

The setting: a group of items, every one scored by an LLM pool (``f``, the pool's per-item mean), and a
*random* subset of them also rated by people (``Y``, the per-item human mean). The estimates and intervals
below are valid for the mean human score whatever the judge's errors, provided the human-rated items are a
uniformly random subset of the group (``draw_human_subset``); for items chosen by hand no guarantee holds.
Inclusion probabilities that differ by item (active sampling) need the weighted estimator of
``ppi_active``.

The mean follows ``ppi_py`` 0.2.3 (Angelopoulos, Duchi & Zrnic, "PPI++: Efficient Prediction-Powered
Inference", 2023; ``ppi_mean_pointestimate`` and ``ppi_mean_ci`` with ``w=None``, ``coord=None``,
``lam_optim_mode="overall"``) to floating-point rounding; ``tests/evalhub/stats/test_ppi.py`` checks it
against ppi_py itself. Framework-free: numpy and scipy.special only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalhub.stats.inputs import as_vector

NAN = math.nan


@dataclass(frozen=True)
class PPIGroup:
    """One group's data: ``y_labelled[i]`` and ``f_labelled[i]`` are the human mean and the pool's mean of
    the same human-rated item; ``f_unlabelled`` the pool's mean on every other item of the group."""

    y_labelled: npt.ArrayLike
    f_labelled: npt.ArrayLike
    f_unlabelled: npt.ArrayLike


@dataclass(frozen=True)
class PPIMean:
    """The PPI++ estimate of a group's mean human score beside the humans-only one.

    Every float is NaN when undefined; ``reason`` then says why the PPI estimate is undefined (the classical
    fields may still be defined, e.g. with no unlabelled item). ``alpha``: the intervals cover with
    probability 1 - alpha."""

    estimate: float
    ci_low: float
    ci_high: float
    se: float
    lam: float
    n_labelled: int
    n_unlabelled: int
    effective_n: float
    classical_estimate: float
    classical_ci_low: float
    classical_ci_high: float
    classical_se: float
    alpha: float
    reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.reason is None

    @property
    def extra_items(self) -> float:
        """What the judge's ratings are worth: effective_n - n_labelled human-rated items (NaN if undefined)."""
        return self.effective_n - self.n_labelled


@dataclass(frozen=True)
class PPIDifference:
    """The PPI++ difference ``group_a - group_b`` of two independent groups' mean human scores, with its
    normal interval and two-sided p-value (NaN fields and ``reason`` when either group is undefined)."""

    estimate: float
    ci_low: float
    ci_high: float
    se: float
    p: float
    lam_a: float
    lam_b: float
    group_a: PPIMean
    group_b: PPIMean
    classical_estimate: float
    classical_ci_low: float
    classical_ci_high: float
    classical_se: float
    classical_p: float
    alpha: float
    reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.reason is None


def z_quantile(alpha: float) -> float:
    """z_{1 - alpha/2}, the standard normal quantile of a two-sided interval (``scipy.stats.norm.ppf``'s
    value, which statsmodels' ``_zconfint_generic`` and so ppi_py use); ValueError unless 0 < alpha < 1."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")
    from scipy import special  # on use: importing scipy.special takes 0.15 s (STYLE 15)

    return float(special.ndtri(1.0 - alpha / 2.0))


def ppi_lambda(y: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray) -> float:
    """The power-tuned lambda of PPI++ for a mean, clipped to [0, 1] as ppi_py's ``_calc_lam_glm(clip=True)``.

    Formula: lambda = Cov_n(Y, f) / ((1 + n / N) Var(f ++ f_unlabelled)), with Cov_n the covariance over
    the n labelled pairs divided by n, and Var the sample variance (ddof 1) of the judge's scores on all
    n + N items. It minimises the estimate's variance (see ``ppi_mean``) with the population moments in
    place of these. Takes clean arrays (no NaN) with n >= 1 and N >= 1; NaN when the judge's scores do not
    vary (0 / 0)."""
    n, big_n = y.size, f_unlabelled.size
    cov = float(np.dot(y - y.mean(), f - f.mean())) / n
    var_all = float(np.var(np.concatenate([f, f_unlabelled]), ddof=1))
    if var_all == 0.0:
        return NAN
    return min(max(cov / ((1.0 + n / big_n) * var_all), 0.0), 1.0)


def _clean_group(
    y_labelled: npt.ArrayLike, f_labelled: npt.ArrayLike, f_unlabelled: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = as_vector(y_labelled, "y_labelled")
    f = as_vector(f_labelled, "f_labelled")
    fu = as_vector(f_unlabelled, "f_unlabelled")
    if y.shape != f.shape:
        raise ValueError(f"y_labelled and f_labelled differ in length: {y.size} != {f.size}")
    keep = ~(np.isnan(y) | np.isnan(f))
    return y[keep], f[keep], fu[~np.isnan(fu)]


def ppi_mean(
    *,
    y_labelled: npt.ArrayLike,
    f_labelled: npt.ArrayLike,
    f_unlabelled: npt.ArrayLike,
    lam: float | None = None,
    alpha: float = 0.05,
) -> PPIMean:
    """PPI++ estimate and normal (1 - alpha) interval of the mean human score of a group.

    Y_i, f_i: the human mean and the pool's mean on the n labelled items; f~_j: the pool's mean on the N
    unlabelled items (disjoint from the labelled ones).

    Formulas (ppi_py's ``ppi_mean_pointestimate`` / ``ppi_mean_ci``):
    - estimate = lambda * mean_j(f~_j) + mean_i(Y_i - lambda f_i);
    - se^2 = Var0(lambda f~) / N + Var0(Y - lambda f) / n, Var0 = variance with ddof 0;
    - interval = estimate -/+ z_{1-alpha/2} se;
    - lambda: ``lam`` when given (0 gives the humans-only estimate, 1 plain PPI; any fixed value is valid),
      else the power-tuned value of ``ppi_lambda``, which minimises se^2 (a data-chosen lambda keeps the
      interval asymptotically valid, PPI++ theorem 1);
    - classical: mean(Y) -/+ z se0 with se0^2 = Var0(Y) / n, ppi_py's lambda = 0 interval;
    - effective_n = n * se0^2 / se^2 = Var0(Y) / se^2: the number of items rated by people alone whose
      classical interval would be as wide as this one (n at lambda = 0). ``extra_items`` = effective_n - n.

    Missing data: a labelled pair with NaN on either side is dropped, as is a NaN in ``f_unlabelled``.
    Dropping is harmless only when an item's missing rating says nothing about its score.

    Undefined (NaN fields, ``reason``): fewer than 2 labelled pairs; no unlabelled item (PPI adds nothing;
    the classical fields stay defined); lam=None and the judge's scores do not vary (lambda is 0 / 0; pass
    lam=0 for the humans-only interval); a zero standard error (no interval). effective_n is NaN when the
    human scores do not vary (a point-wide humans-only interval matches no width).
    Invalid input raises ValueError: arrays not 1-D or with infinite values, unequal labelled lengths,
    alpha outside (0, 1), a non-finite lam.
    """
    z = z_quantile(alpha)
    if lam is not None and not math.isfinite(lam):
        raise ValueError(f"lam must be a finite number or None, got {lam}")
    y, f, fu = _clean_group(y_labelled, f_labelled, f_unlabelled)
    n, big_n = int(y.size), int(fu.size)
    if n < 2:
        reason = f"{n} labelled item{'' if n == 1 else 's'} with both a human and a judge score: PPI needs at least 2"
        return _undefined_mean(reason, (NAN, NAN, NAN, NAN), n, big_n, alpha)
    classical = _classical(y, z)
    if big_n == 0:
        reason = "no unlabelled items: PPI adds nothing to the humans-only mean"
        return _undefined_mean(reason, classical, n, big_n, alpha)
    chosen = ppi_lambda(y, f, fu) if lam is None else float(lam)
    if math.isnan(chosen):
        reason = "the judge's scores do not vary: the power-tuned lambda is 0/0 (lam=0 gives the humans-only mean)"
        return _undefined_mean(reason, classical, n, big_n, alpha)
    estimate = float(np.mean(chosen * fu) + np.mean(y - chosen * f))
    se = math.sqrt(float(np.var(chosen * fu)) / big_n + float(np.var(y - chosen * f)) / n)
    if se == 0.0:
        reason = "zero standard error: the scores do not vary, so there is no interval"
        return _undefined_mean(reason, classical, n, big_n, alpha)
    var_y = float(np.var(y))
    return PPIMean(
        estimate=estimate,
        ci_low=estimate - z * se,
        ci_high=estimate + z * se,
        se=se,
        lam=chosen,
        n_labelled=n,
        n_unlabelled=big_n,
        effective_n=var_y / se**2 if var_y > 0 else NAN,
        classical_estimate=classical[0],
        classical_ci_low=classical[1],
        classical_ci_high=classical[2],
        classical_se=classical[3],
        alpha=alpha,
    )


def _classical(y: np.ndarray, z: float) -> tuple[float, float, float, float]:
    """(mean, low, high, se) of the humans-only normal interval in ppi_py's lambda = 0 form (se with ddof 0);
    a zero se is no interval (NaN bounds and se)."""
    mean, se = float(np.mean(y)), float(np.std(y)) / math.sqrt(y.size)
    if se == 0.0:
        return mean, NAN, NAN, NAN
    return mean, mean - z * se, mean + z * se, se


def _undefined_mean(
    reason: str, classical: tuple[float, float, float, float], n: int, big_n: int, alpha: float
) -> PPIMean:
    mean, low, high, se = classical
    return PPIMean(NAN, NAN, NAN, NAN, NAN, n, big_n, NAN, mean, low, high, se, alpha, reason)


def ppi_mean_difference(
    *, group_a: PPIGroup, group_b: PPIGroup, lam: float | None = None, alpha: float = 0.05
) -> PPIDifference:
    """PPI++ estimate, normal (1 - alpha) interval and two-sided p of mean_a - mean_b (the PPI counterpart
    of Welch's comparison of two groups' mean human scores).

    Formulas: each group's ``ppi_mean`` (with ``lam``; lam=None tunes lambda within each group on its own
    data), then
    - estimate = estimate_a - estimate_b;  se = sqrt(se_a^2 + se_b^2);
    - interval = estimate -/+ z_{1-alpha/2} se;  p = 2 Phi(-|estimate| / se);
    - classical: the same combination of the two humans-only (lambda = 0, normal, ddof 0) estimates; the
      dashboard's humans-only comparison is Welch's t (``comparison.welch``), not this.

    Why the combination holds: each group's estimate is asymptotically normal around its mean (PPI++,
    theorem 1), and the two are independent because each uses only its own group's items (its labelled
    draw, its unlabelled items and its own lambda). The difference of independent normal estimates is
    normal with the sum of their variances. That needs independent groups: no item in both groups and no
    pairing between them (the same prompt's story by two systems compared pair by pair would need a paired
    estimator, which this is not).

    Missing data: as ``ppi_mean``, per group. Undefined (NaN fields, ``reason`` naming the group): either
    group's PPI estimate is undefined. The classical interval, se and p are NaN when either group's
    classical se is (fewer than 2 labelled pairs, or human scores that do not vary).
    """
    a = ppi_mean(**_group_arrays(group_a), lam=lam, alpha=alpha)
    b = ppi_mean(**_group_arrays(group_b), lam=lam, alpha=alpha)
    c_est, c_se = a.classical_estimate - b.classical_estimate, math.hypot(a.classical_se, b.classical_se)
    z = z_quantile(alpha)
    classical = (c_est, c_est - z * c_se, c_est + z * c_se, c_se, _two_sided_p(c_est, c_se))
    reason = next((f"group {name}: {g.reason}" for name, g in (("a", a), ("b", b)) if g.reason is not None), None)
    if reason is not None:
        return PPIDifference(NAN, NAN, NAN, NAN, NAN, a.lam, b.lam, a, b, *classical, alpha=alpha, reason=reason)
    estimate, se = a.estimate - b.estimate, math.hypot(a.se, b.se)
    return PPIDifference(
        estimate,
        estimate - z * se,
        estimate + z * se,
        se,
        _two_sided_p(estimate, se),
        a.lam,
        b.lam,
        a,
        b,
        *classical,
        alpha=alpha,
    )


def _group_arrays(group: PPIGroup) -> dict[str, npt.ArrayLike]:
    return {"y_labelled": group.y_labelled, "f_labelled": group.f_labelled, "f_unlabelled": group.f_unlabelled}


def _two_sided_p(estimate: float, se: float) -> float:
    """2 Phi(-|estimate| / se), statsmodels' ``_zstat_generic`` two-sided p (NaN when se is NaN)."""
    from scipy import special  # on use (STYLE 15)

    return float(2.0 * special.ndtr(-abs(estimate / se)))


def draw_human_subset(
    n_items: int, *, share: float | None = None, count: int | None = None, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The items people rate: a uniformly random subset of ``n_items`` items, drawn without replacement.

    Exactly one of ``share`` (0 < share <= 1;
    k = share * n_items rounded half up, at least 1 when n_items >= 1) or ``count``
    (0 <= k <= n_items) sets the size k. Returns (the k chosen positions 0..n_items-1 in
    ascending order, every item's inclusion probability k / n_items as an array of length n_items).

    The draw is a numpy Generator seeded by ``seed`` (``default_rng(seed).choice``): the same seed gives
    the same subset on the same numpy version; record the positions, not only the seed. Positions refer to
    the order of the items handed in, so that order must be stable too (e.g. by item id).
    Invalid arguments raise ValueError (both or neither of share and count, a share outside (0, 1], a count
    outside [0, n_items], a negative n_items).
    """
    if n_items < 0:
        raise ValueError(f"n_items must be non-negative, got {n_items}")
    if (share is None) == (count is None):
        raise ValueError("give exactly one of share and count")
    if share is not None:
        if not 0.0 < share <= 1.0:
            raise ValueError(f"share must be in (0, 1], got {share}")
        k = min(max(math.floor(share * n_items + 0.5), 1), n_items)
    elif count is not None and 0 <= count <= n_items:
        k = count
    else:
        raise ValueError(f"count must be between 0 and n_items ({n_items}), got {count}")
    chosen = np.sort(np.random.default_rng(seed).choice(n_items, size=k, replace=False))
    probabilities = np.full(n_items, k / n_items if n_items else NAN)
    return chosen.astype(np.intp), probabilities
