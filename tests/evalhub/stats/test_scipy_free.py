"""The analysis' p-values and t quantiles without scipy.stats (issue 22): importing it costs 0.7 s, more than a
whole start-up, so the alt-test, the FDR corrections and the ceiling's interval compute what scipy.stats computes
with the same operations (scipy.special's t distribution). Compared for equality, not closeness: the analysis
JSON must stay byte for byte what it was.
"""
from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from evalhub.stats.ceiling import mean_ci
from evalhub.stats.comparison import fdr_adjust, t_test_p_less

REPO = Path(__file__).resolve().parents[3]


def _p_value_families(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    families = [rng.random(m) for m in (2, 3, 7, 30, 200)]
    families += [rng.random(12) ** 6, rng.choice([0.0, 0.01, 0.04, 0.5, 1.0], size=25)]  # small values, ties
    families += [np.zeros(4), np.ones(5), np.array([0.2, 0.2]), np.array([1.0, 0.0, 0.03])]
    return families


@pytest.mark.parametrize("method", ["bh", "by"])
@pytest.mark.parametrize("seed", range(8))
def test_fdr_adjust_gives_scipys_false_discovery_control_exactly(method, seed):
    for ps in _p_value_families(seed):
        expected = sps.false_discovery_control(ps, method=method)
        got = fdr_adjust(ps, method=method)
        assert got.tolist() == expected.tolist(), (method, ps)


def test_fdr_adjust_of_one_p_value_is_that_p_value():
    assert fdr_adjust(np.array([0.03]), method="by").tolist() == [0.03]
    assert sps.false_discovery_control(np.array([0.03]), method="by").tolist() == [0.03]


def _samples(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    # The alt-test's d = W_h - W_llm takes -1, 0 and 1; the rest are other shapes of the same test.
    samples = [rng.choice([-1.0, 0.0, 1.0], size=n, p=[0.5, 0.3, 0.2]) for n in (2, 3, 30, 31, 117, 1000)]
    samples += [rng.choice([-1.0, 0.0, 1.0], size=n) for n in (30, 64, 400)]
    samples += [rng.normal(0.1, 1.0, size=n) for n in (2, 5, 50)]
    samples += [np.full(40, value) for value in (-1.0, 0.0, 1.0, 0.1, 0.15)]  # constant: t is +-inf or nan
    samples += [np.r_[np.zeros(39), 1.0], np.r_[np.ones(39), -1.0]]
    return samples


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.15, 0.2, 1.0])
@pytest.mark.parametrize("seed", range(5))
def test_t_test_p_less_gives_scipys_ttest_1samp_exactly(epsilon, seed):
    for values in _samples(seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # scipy's precision warning on constant samples
            expected = float(sps.ttest_1samp(values, epsilon, alternative="less").pvalue)
        got = t_test_p_less(values, epsilon)
        assert got == expected or (np.isnan(got) and np.isnan(expected)), (epsilon, values)


def test_the_constant_cases_are_scipys_zero_one_and_undefined():
    assert t_test_p_less(np.full(40, -1.0), 0.15) == 0.0
    assert t_test_p_less(np.full(40, 1.0), 0.15) == 1.0
    assert np.isnan(t_test_p_less(np.zeros(40), 0.0))


@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("n", [2, 3, 10, 48, 500])
def test_mean_ci_uses_scipys_t_quantile_exactly(confidence, n):
    scores = np.random.default_rng(n).normal(0.6, 0.2, size=n)
    ci = mean_ci(scores, confidence)
    half = float(sps.t.ppf((1 + confidence) / 2, n - 1)) * (float(scores.std(ddof=1)) / np.sqrt(n))
    mean = float(scores.mean())
    assert (ci.low, ci.high) == (mean - half, mean + half)


PROBE = """
import json, sys
import numpy as np
from evalhub import stats
from evalhub.stats.alt_test import alt_test_long
from evalhub.stats.ceiling import mean_ci

rng = np.random.default_rng(0)
n_items, raters = 60, 3
instance = np.repeat(np.arange(n_items), raters)
rater = np.tile(np.arange(raters), n_items)
label = rng.integers(1, 6, size=instance.size).astype(float)
result = alt_test_long(raters=rater, instances=instance, labels=label, llm_instances=np.arange(n_items),
                       llm_labels=rng.integers(1, 6, size=n_items).astype(float), scoring="neg_rmse")
assert len(result.humans) == raters and all(h.p is not None for h in result.humans), result
stats.bh_adjust([0.01, None, 0.2])
mean_ci(rng.random(20), 0.95)
stats.welch(rng.random(20), rng.random(25))
stats.kendall_tau(rng.integers(1, 6, size=50), rng.integers(1, 6, size=50))
print(json.dumps(sorted(m for m in sys.modules if m.startswith("scipy.stats"))))
"""


def test_the_alt_test_fdr_ceiling_welch_and_kendall_run_without_importing_scipy_stats():
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == []
