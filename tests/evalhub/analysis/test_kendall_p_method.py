"""Issue 25, eighth review: each Kendall's tau says which kind of p it has, "exact" or "asymptotic" (the normal
approximation with the tie correction), exactly as ``scipy.stats.kendalltau(method="auto")`` chose it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from evalhub import stats


def _scipy_p(x: np.ndarray, y: np.ndarray, method: str) -> float:
    return float(sps.kendalltau(x, y, method=method).pvalue)


def test_a_tau_with_ties_has_the_asymptotic_p_scipy_gives_under_that_method() -> None:
    x = np.array([1.0, 1.0, 2.0, 3.0, 4.0, 5.0])  # human means, one tie
    y = np.array([1.0, 2.0, 2.5, 3.0, 5.0, 4.0])
    result = stats.kendall_tau(x, y)
    assert result.p_method == "asymptotic"
    assert result.p == pytest.approx(_scipy_p(x, y, "asymptotic"), rel=1e-12)
    assert result.p == pytest.approx(float(sps.kendalltau(x, y).pvalue), rel=1e-12)  # scipy's own "auto" choice


def test_a_tau_without_ties_on_few_items_has_the_exact_p_scipy_gives_under_that_method() -> None:
    x = np.array([1.0, 1.33, 1.67, 2.0, 2.33, 3.0])
    y = np.array([1.5, 1.0, 2.0, 3.0, 2.5, 4.5])
    result = stats.kendall_tau(x, y)
    assert result.p_method == "exact"
    assert result.p == pytest.approx(_scipy_p(x, y, "exact"), rel=1e-12)
    assert result.p != pytest.approx(_scipy_p(x, y, "asymptotic"), rel=1e-3, abs=0)  # the two kinds differ here


def test_without_ties_on_more_than_33_items_scipy_takes_the_normal_approximation_unless_one_pair_is_out() -> None:
    x = np.arange(40.0)
    y = np.random.default_rng(1).permutation(40).astype(float)
    result = stats.kendall_tau(x, y)
    assert result.p_method == "asymptotic" and result.p == pytest.approx(_scipy_p(x, y, "asymptotic"), rel=1e-12)
    y = x.copy()
    y[[0, 1]] = y[[1, 0]]  # one discordant pair: scipy's "auto" computes the exact p
    result = stats.kendall_tau(x, y)
    assert result.p_method == "exact" and result.p == pytest.approx(_scipy_p(x, y, "exact"), rel=1e-12)
    assert result.p != pytest.approx(_scipy_p(x, y, "asymptotic"), rel=1e-3, abs=0)


@pytest.mark.parametrize("seed", range(30))
def test_the_method_named_is_the_one_scipys_auto_chose_on_random_data(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 45))
    x = rng.normal(size=n) if seed % 2 else rng.integers(1, 6, size=n).astype(float)
    y = np.where(rng.random(n) < 0.8, x, rng.normal(size=n)) if seed % 3 else rng.normal(size=n)
    result = stats.kendall_tau(x, y)
    if result.p is None:
        assert result.p_method is None
        return
    assert result.p_method in ("exact", "asymptotic")
    assert result.p == pytest.approx(_scipy_p(x, y, result.p_method), rel=1e-9, abs=1e-300)
    assert result.p == pytest.approx(float(sps.kendalltau(x, y).pvalue), rel=1e-9, abs=1e-300)


def test_an_undefined_tau_names_no_method() -> None:
    assert stats.kendall_tau(np.array([2.0, 2.0, 2.0]), np.array([1.0, 2.0, 3.0])).p_method is None
    assert stats.kendall_tau(np.array([1.0]), np.array([1.0])).p_method is None
