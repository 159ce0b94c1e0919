"""Active inference: people rate the items where the judge is least sure more often, and an inverse-probability
weighted PPI estimate keeps the mean human score unbiased (Zrnic & Candes, "Active Statistical Inference",
ICML 2024, section 2 for the mean; the authors' code, github.com/tijana-zrnic/active-inference,
``pew79-post-election-research.ipynb``, computes the same estimate and interval).

The design is Poisson sampling: item i is human-rated with its own known probability pi_i, independently
of the others (``draw_active_subset``), so the number of human-rated items is random with expectation
sum(pi). The probabilities must be fixed before the draw from what is known without human ratings (the
spread of the judge's samples, say), and recorded: the estimate needs them. Framework-free: numpy and
scipy.special only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalhub.stats.inputs import as_vector
from evalhub.stats.ppi.mean import NAN, z_quantile

# Half the uniform rate: weights at most twice the uniform one. In tests/evalhub/stats/test_ppi.py's simulated
# studies (200 of 1,000 items), a floor of 0.2 gave wider intervals than 0.5 for every judge and 93.4-93.7 %
# coverage for a biased one; with no floor, items the judge is sure of are almost never drawn, and the variance
# they carry goes unseen by the interval.
DEFAULT_FLOOR_SHARE = 0.5
_BISECTION_STEPS = 200


@dataclass(frozen=True)
class ActivePPIMean:
    """The inverse-probability-weighted PPI estimate of a group's mean human score (NaN fields and
    ``reason`` when undefined). ``n_labelled`` counts the items with a human score, ``expected_labelled``
    is sum(pi), the budget the design planned."""

    estimate: float
    ci_low: float
    ci_high: float
    se: float
    lam: float
    n_items: int
    n_labelled: int
    expected_labelled: float
    effective_n: float
    alpha: float
    reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.reason is None


def active_inclusion_probabilities(
    uncertainty: npt.ArrayLike, *, budget: float, floor_share: float = DEFAULT_FLOOR_SHARE
) -> np.ndarray:
    """Inclusion probabilities proportional to the judge's uncertainty, with an expected budget.

    ``uncertainty`` u_i >= 0 per item (e.g. the standard deviation of the judge's samples on item i);
    ``budget`` B, the expected number of human-rated items (0 < B <= N items); ``floor_share`` s in (0, 1].

    Formula: pi_i = min(1, max(s * B / N, c * u_i)), with c chosen (bisection) so that sum_i pi_i = B.
    This is the paper's rule pi(x) proportional to u(x), capped at 1, with a floor so that every item has
    a positive probability: an item the judge is sure of is still rated sometimes, and its weight 1 / pi_i
    is at most N / (s B), which bounds the variance when the uncertainty misjudges an item. (The paper
    mixes with the uniform rule, (1 - tau) c u + tau B / N; the floor plays tau's part.) Items with zero
    uncertainty take what the budget leaves once every uncertain item reaches probability 1. Equal
    uncertainties give the uniform B / N. The sum matches B to 1e-9 relative.

    Missing data: a NaN uncertainty (the judge gave no usable samples) counts as the largest one present;
    all NaN gives the uniform rule. Invalid input raises ValueError: not 1-D, a negative or infinite
    uncertainty, B outside (0, N], s outside (0, 1].

    When it helps: the variance is smallest with pi proportional to the typical size of |Y - f| on the item.
    The spread of the judge's samples leaves out the humans' own noise, which in rating studies is often as
    large; then uncertainty-proportional probabilities are no better than a uniform draw (in the simulations
    of the tests they were a little worse). Add the human noise, e.g. u = sqrt(sd_samples^2 / k + s_h^2) with
    s_h from a pilot, or use the uniform ``ppi.draw_human_subset``.
    """
    u = as_vector(uncertainty, "uncertainty")
    n = u.size
    if not 0.0 < budget <= n:
        raise ValueError(f"budget must be in (0, {n}] (the number of items), got {budget}")
    if not 0.0 < floor_share <= 1.0:
        raise ValueError(f"floor_share must be in (0, 1], got {floor_share}")
    if (u < 0).any():
        raise ValueError("uncertainty must be non-negative")
    finite = u[~np.isnan(u)]
    top = float(finite.max()) if finite.size else 0.0
    if top == 0.0 or (finite.size == n and float(finite.min()) == top):
        return np.full(n, budget / n)
    u = np.where(np.isnan(u), top, u)
    # Zero-uncertainty items get a tiny positive score: they stay at the floor until every other item
    # reaches 1, and then share the rest of the budget equally.
    u = np.where(u > 0, u, top * 1e-12)
    floor = floor_share * budget / n

    def total(c: float) -> float:
        return float(np.clip(c * u, floor, 1.0).sum())

    low, high = math.log(floor / top), math.log(1.0 / float(u.min()))
    for _ in range(_BISECTION_STEPS):
        mid = (low + high) / 2.0
        low, high = (mid, high) if total(math.exp(mid)) < budget else (low, mid)
        if high - low < 1e-13:
            break
    return np.clip(math.exp(high) * u, floor, 1.0)


def draw_active_subset(inclusion_probabilities: npt.ArrayLike, *, seed: int) -> np.ndarray:
    """Poisson sampling: item i is drawn when U_i < pi_i, U_i uniform from ``default_rng(seed)``; returns the
    drawn positions in ascending order. Same seed, same numpy version, same draw: record the positions.
    Invalid input (a probability outside (0, 1] or NaN) raises ValueError."""
    pi = _probabilities(inclusion_probabilities)
    return np.flatnonzero(np.random.default_rng(seed).random(pi.size) < pi).astype(np.intp)


def _probabilities(inclusion_probabilities: npt.ArrayLike) -> np.ndarray:
    pi = as_vector(inclusion_probabilities, "inclusion_probabilities")
    if np.isnan(pi).any() or (pi <= 0).any() or (pi > 1).any():
        raise ValueError("every inclusion probability must be in (0, 1]: the estimate weighs by 1 / pi")
    return pi


def active_ppi_mean(
    *,
    y: npt.ArrayLike,
    f: npt.ArrayLike,
    inclusion_probabilities: npt.ArrayLike,
    labelled: npt.ArrayLike,
    lam: float | None = 1.0,
    alpha: float = 0.05,
) -> ActivePPIMean:
    """Inverse-probability-weighted PPI estimate and normal (1 - alpha) interval of the mean human score.

    Over the group's N items: f_i the pool's mean, pi_i the inclusion probability the draw used, xi_i = 1
    for the human-rated items (positions ``labelled``) and Y_i their human mean (``y`` has length N; its
    values off the labelled positions are ignored). With w_i = xi_i / pi_i:
    - z_i = lambda f_i + (Y_i - lambda f_i) w_i  (Y_i w_i = 0 where xi_i = 0);
    - estimate = mean(z);  se = std(z, ddof 0) / sqrt(N);  interval = estimate -/+ z_{1-alpha/2} se.
    E[z_i | item i] = Y_i whatever f and lambda, so the estimate is unbiased for the mean human score.
    lambda = 1 (default) is the paper's estimator; 0 the Horvitz-Thompson mean of the humans alone;
    lam=None tunes it as PPI++ does: writing z = a + lambda b with a = Y w and b = f (1 - w), the variance
    is smallest at lambda = -Cov(a, b) / Var(b) (moments over the N items, ddof 0), clipped to [0, 1].
    b has mean 0 whatever f, so even a judge unrelated to Y earns a lambda near 1: f then acts as a
    control for the random number of items drawn. Tuning lambda on the same draw narrows the interval
    for a biased judge but costs coverage with unequal weights and a small budget (in the tests' simulated
    studies, 200 of 1,000 items, default floor: 93.8-95.1 % tuned, 94.0-95.4 % at lambda = 1), hence the
    default 1.
    effective_n = sigma_Y^2 / se^2, sigma_Y^2 = sum w (Y - m)^2 / sum w with m = sum w Y / sum w over the
    human-rated items: the number of uniformly drawn human-rated items whose classical interval is as wide.

    Missing data: a NaN f_i is replaced by the mean of the other f (any value fixed before the draw keeps
    the estimate unbiased); a labelled position whose Y is NaN counts as not human-rated, which is harmless
    only when a missing rating says nothing about the item's score.
    Undefined (NaN fields, ``reason``): fewer than 2 human-rated items; lam=None and Var(b) = 0; a zero
    standard error. Invalid input raises ValueError: unequal lengths, probabilities outside (0, 1],
    labelled positions out of range or repeated, alpha outside (0, 1), a non-finite lam.
    """
    z_alpha = z_quantile(alpha)
    if lam is not None and not math.isfinite(lam):
        raise ValueError(f"lam must be a finite number or None, got {lam}")
    yv, fv, pi = as_vector(y, "y"), as_vector(f, "f"), _probabilities(inclusion_probabilities)
    big_n = fv.size
    if yv.size != big_n or pi.size != big_n:
        raise ValueError(f"y, f and inclusion_probabilities differ in length: {yv.size}, {big_n}, {pi.size}")
    xi = _labelled_mask(labelled, big_n) & ~np.isnan(yv)
    n_labelled = int(xi.sum())

    def undefined(reason: str, lam_value: float = NAN) -> ActivePPIMean:
        return ActivePPIMean(NAN, NAN, NAN, NAN, lam_value, big_n, n_labelled, float(pi.sum()), NAN, alpha, reason)

    if n_labelled < 2:
        plural = "" if n_labelled == 1 else "s"
        return undefined(f"{n_labelled} human-rated item{plural}: the estimate needs at least 2")
    if np.isnan(fv).any():
        fv = np.where(np.isnan(fv), float(np.nanmean(fv)) if (~np.isnan(fv)).any() else 0.0, fv)
    w = np.where(xi, 1.0 / pi, 0.0)
    a = np.where(xi, np.nan_to_num(yv) * w, 0.0)
    b = fv * (1.0 - w)
    chosen = _active_lambda(a, b) if lam is None else float(lam)
    if math.isnan(chosen):
        return undefined("the judge term f (1 - w) does not vary: the power-tuned lambda is 0/0")
    z = a + chosen * b
    estimate, se = float(z.mean()), float(z.std()) / math.sqrt(big_n)
    if se == 0.0:
        return undefined("zero standard error: the scores do not vary, so there is no interval", chosen)
    weights, scores = w[xi], yv[xi]
    centre = float(np.dot(weights, scores)) / float(weights.sum())
    var_y = float(np.dot(weights, (scores - centre) ** 2)) / float(weights.sum())
    return ActivePPIMean(
        estimate=estimate,
        ci_low=estimate - z_alpha * se,
        ci_high=estimate + z_alpha * se,
        se=se,
        lam=chosen,
        n_items=big_n,
        n_labelled=n_labelled,
        expected_labelled=float(pi.sum()),
        effective_n=var_y / se**2 if var_y > 0 else NAN,
        alpha=alpha,
    )


def _active_lambda(a: np.ndarray, b: np.ndarray) -> float:
    var_b = float(np.var(b))
    if var_b == 0.0:
        return NAN
    cov = float(np.mean((a - a.mean()) * (b - b.mean())))
    return min(max(-cov / var_b, 0.0), 1.0)


def _labelled_mask(labelled: npt.ArrayLike, n: int) -> np.ndarray:
    positions = np.asarray(labelled)
    if positions.ndim != 1 or (positions.size and positions.dtype.kind not in "iu"):
        raise ValueError("labelled must be a 1-D array of integer positions")
    if positions.size and (positions.min() < 0 or positions.max() >= n):
        raise ValueError(f"labelled positions must be between 0 and {n - 1}")
    mask = np.zeros(n, dtype=bool)
    mask[positions] = True
    if int(mask.sum()) != positions.size:
        raise ValueError("labelled positions repeat")
    return mask
