from __future__ import annotations

import ast
import csv
import itertools
import json
import math
import os
import subprocess
import sys
import warnings
from collections import defaultdict
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats as sps

from evalhub import stats
from evalhub.stats import alpha as stats_alpha
from evalhub.stats import correlation as stats_correlation

NAN = np.nan
REPO_ROOT = Path(__file__).resolve().parents[3]
SHARED_DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
HALF_POINTS = [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0]

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", p. 8: 4 coders (rows
# here transposed to items x raters) x 12 units with missing values.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
).T


def shared_data(relative: str) -> Path:
    """Path of a reference data file kept outside the repo (never copied into it)."""
    if not SHARED_DATA.is_dir():
        message = f"reference data directory {SHARED_DATA} is absent"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return SHARED_DATA / relative


def random_ratings(seed: int, n_items: int = 60, n_raters: int = 4) -> np.ndarray:
    """Correlated half-point ratings with about 25 % missing, some items single-rated."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=(n_items, 1))
    noise = rng.choice([-1.0, -0.5, 0.0, 0.0, 0.5, 1.0], size=(n_items, n_raters))
    matrix = np.clip(truth + noise, 1, 5)
    matrix[rng.random(matrix.shape) < 0.25] = NAN
    return matrix


def package_alpha(matrix: np.ndarray, level: str, **kwargs: object) -> float:
    return krippendorff.alpha(matrix.T, level_of_measurement=level, **kwargs)


def reference_alpha(matrix: np.ndarray, level: str) -> float:
    """Textbook coincidence-matrix alpha with plain loops (nominal, interval)."""
    coincidences: dict[tuple[float, float], float] = defaultdict(float)
    for row in matrix:
        values = [v for v in row if not math.isnan(v)]
        if len(values) < 2:
            continue
        for c, k in itertools.permutations(values, 2):
            coincidences[(c, k)] += 1 / (len(values) - 1)
    marginals: dict[float, float] = defaultdict(float)
    for (c, _), count in coincidences.items():
        marginals[c] += count
    n = sum(marginals.values())

    def delta(c: float, k: float) -> float:
        return float(c != k) if level == "nominal" else (c - k) ** 2

    observed = sum(count * delta(c, k) for (c, k), count in coincidences.items())
    expected = sum(marginals[c] * marginals[k] * delta(c, k) for c in marginals for k in marginals) / (n - 1)
    return 1 - observed / expected


# ---------------------------------------------------------------------------
# Krippendorff's alpha: point estimate


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_alpha_reproduces_krippendorff_2011_worked_example(level: str, published: float) -> None:
    result = stats.krippendorff_alpha(KRIPPENDORFF_2011, level=level)
    assert result.reason is None
    assert round(result.value, 3) == published
    assert result.value == pytest.approx(package_alpha(KRIPPENDORFF_2011, level), abs=1e-12)


def test_alpha_all_levels_matches_each_level_computed_alone() -> None:
    all_levels = stats.alpha_all_levels(KRIPPENDORFF_2011, value_domain=[1, 2, 3, 4, 5])
    assert list(all_levels) == ["nominal", "ordinal", "interval", "ratio"]
    for level, result in all_levels.items():
        assert result == stats.krippendorff_alpha(KRIPPENDORFF_2011, level=level)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("level", ["nominal", "interval"])
def test_alpha_equals_a_hand_written_coincidence_matrix_computation(seed: int, level: str) -> None:
    matrix = random_ratings(seed)
    result = stats.krippendorff_alpha(matrix, level=level, value_domain=HALF_POINTS)
    assert result.value == pytest.approx(reference_alpha(matrix, level), abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_equals_the_krippendorff_package_on_random_half_point_data(seed: int, level: str) -> None:
    matrix = random_ratings(seed, n_items=200, n_raters=5)
    result = stats.krippendorff_alpha(matrix, level=level, value_domain=HALF_POINTS)
    expected = package_alpha(matrix, level, value_domain=HALF_POINTS)
    assert result.value == pytest.approx(expected, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    hnp.arrays(
        float,
        st.tuples(st.integers(0, 8), st.integers(1, 4)),
        elements=st.sampled_from([NAN, 1.0, 1.5, 2.0, 3.0, 4.5, 5.0]),
    ),
    st.sampled_from(["nominal", "ordinal", "interval", "ratio"]),
)
def test_alpha_is_the_package_value_or_undefined_with_a_reason_never_a_crash(matrix: np.ndarray, level: str) -> None:
    result = stats.krippendorff_alpha(matrix, level=level)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            expected = package_alpha(matrix, level, value_domain=HALF_POINTS)
        except ValueError:  # the package refuses data without a pairable unit
            expected = NAN
    if math.isnan(expected):
        assert result.value is None
        assert result.reason
    else:
        assert result.reason is None
        assert result.value == pytest.approx(expected, abs=1e-9)


def test_unused_domain_points_do_not_change_alpha_at_any_level() -> None:
    matrix = random_ratings(3)
    with_domain = stats.alpha_all_levels(matrix, value_domain=[0, 0.5, *HALF_POINTS, 6, 7])
    without = stats.alpha_all_levels(matrix)
    for level in stats.LEVELS:
        assert with_domain[level].value == pytest.approx(without[level].value, abs=1e-12)


def test_observed_values_outside_the_domain_are_added_to_it() -> None:
    matrix = random_ratings(4)
    matrix[0, :2] = [7.0, 6.5]
    result = stats.krippendorff_alpha(matrix, level="ordinal", value_domain=[1, 2, 3, 4, 5])
    expected = package_alpha(matrix, "ordinal", value_domain=[*HALF_POINTS, 6.5, 7.0])
    assert result.value == pytest.approx(expected, abs=1e-12)


def test_single_rated_items_are_dropped_from_alpha() -> None:
    with_singles = np.vstack([KRIPPENDORFF_2011, [[5, NAN, NAN, NAN], [NAN, NAN, 1, NAN]]])
    assert stats.alpha_all_levels(with_singles) == stats.alpha_all_levels(KRIPPENDORFF_2011)


@pytest.mark.parametrize(
    ("matrix", "reason_part"),
    [
        (np.full((5, 3), 4.0), "no variation"),
        (np.array([[4.0, 4.0, NAN], [4.0, NAN, 4.0], [1.0, NAN, NAN]]), "no variation"),
        (np.array([[1.0, NAN], [NAN, 5.0], [3.0, NAN]]), "pairable"),
        (np.full((3, 3), NAN), "pairable"),
        (np.empty((0, 3)), "pairable"),
    ],
    ids=["all-identical", "identical-pairable", "all-single-rated", "all-missing", "no-items"],
)
def test_alpha_is_undefined_with_a_reason_at_every_level(matrix: np.ndarray, reason_part: str) -> None:
    for level, result in stats.alpha_all_levels(matrix, value_domain=HALF_POINTS).items():
        assert result.value is None
        assert reason_part in result.reason
        assert stats.krippendorff_alpha(matrix, level=level) == result
    ci = stats.alpha_bootstrap_ci(matrix, level="ordinal", n_boot=50)
    assert (ci.low, ci.high, ci.n_valid) == (None, None, 0)
    assert reason_part in ci.reason


@pytest.mark.parametrize("bad", [np.array([1.0, 2.0]), np.array([[1.0, np.inf], [2.0, 3.0]])])
def test_alpha_rejects_input_that_is_not_a_finite_2d_matrix(bad: np.ndarray) -> None:
    with pytest.raises(ValueError):
        stats.krippendorff_alpha(bad, level="nominal")


def test_alpha_rejects_an_unknown_level() -> None:
    with pytest.raises(ValueError, match="unknown level"):
        stats.krippendorff_alpha(KRIPPENDORFF_2011, level="cardinal")


# ---------------------------------------------------------------------------
# Krippendorff's alpha: bootstrap


def test_weighted_pattern_sum_equals_the_package_on_explicitly_resampled_rows() -> None:
    # The bootstrap's core identity: weighting each rating pattern by how often its items
    # were drawn gives exactly the alpha of the resampled matrix.
    matrix = random_ratings(5, n_items=40)
    resampled = matrix[np.random.default_rng(1).integers(0, 40, size=40)]
    co = stats_alpha._coincidences(matrix, None)
    assert co.freq.sum() == co.n_items == 40
    n_values = co.domain.size
    # A pattern's contribution has row sums equal to its value counts.
    pattern_index = {
        tuple(np.rint(c.reshape(n_values, n_values).sum(axis=1)).astype(int)): index
        for index, c in enumerate(co.contributions[:-1])
    }
    weights = np.zeros(len(co.freq))
    for row in resampled:
        counts = tuple(int((row == value).sum()) for value in co.domain)
        weights[pattern_index[counts] if sum(counts) >= 2 else -1] += 1
    for level in stats.LEVELS:
        got = stats_alpha._alpha_from_weights(co, weights[None, :], level)[0]
        assert got == pytest.approx(package_alpha(resampled, level), abs=1e-12)


def test_bootstrap_interval_contains_the_point_estimate_on_realistic_data() -> None:
    matrix = random_ratings(6, n_items=500, n_raters=3)
    for level in stats.LEVELS:
        point = stats.krippendorff_alpha(matrix, level=level).value
        ci = stats.alpha_bootstrap_ci(matrix, level=level, value_domain=HALF_POINTS)
        assert ci.reason is None
        assert (ci.n_boot, ci.n_valid, ci.confidence) == (1000, 1000, 0.95)
        assert ci.low < point < ci.high
        assert ci.high - ci.low < 0.2


def test_bootstrap_is_reproducible_for_a_seed_and_varies_with_it() -> None:
    matrix = random_ratings(7, n_items=100)
    first = stats.alpha_bootstrap_ci(matrix, level="interval", seed=42, n_boot=300)
    again = stats.alpha_bootstrap_ci(matrix, level="interval", seed=42, n_boot=300)
    other = stats.alpha_bootstrap_ci(matrix, level="interval", seed=43, n_boot=300)
    assert first == again
    assert (first.low, first.high) != (other.low, other.high)


def test_bootstrap_interval_narrows_with_lower_confidence() -> None:
    matrix = random_ratings(8, n_items=100)
    wide = stats.alpha_bootstrap_ci(matrix, level="ordinal", confidence=0.95)
    narrow = stats.alpha_bootstrap_ci(matrix, level="ordinal", confidence=0.5)
    assert wide.low < narrow.low < narrow.high < wide.high


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_bootstrap_agrees_with_a_naive_bootstrap_over_resampled_rows(level: str) -> None:
    matrix = random_ratings(9, n_items=40, n_raters=3)
    n_boot = 2000
    rng = np.random.default_rng(123)
    naive = []
    for _ in range(n_boot):
        resampled = matrix[rng.integers(0, len(matrix), size=len(matrix))]
        naive.append(package_alpha(resampled, level))
    naive_low, naive_high = np.percentile(naive, [2.5, 97.5])
    ci = stats.alpha_bootstrap_ci(matrix, level=level, n_boot=n_boot, seed=5)
    # Monte-Carlo error of a 2.5 % percentile with 2000 replicates is about 0.01 here
    # (bootstrap SD about 0.08); 0.04 allows four standard errors of the difference.
    assert ci.n_valid == n_boot
    assert ci.low == pytest.approx(naive_low, abs=0.04)
    assert ci.high == pytest.approx(naive_high, abs=0.04)


# ---------------------------------------------------------------------------
# Published agreement figures from real studies


def hanna_matrices() -> dict[str, np.ndarray]:
    path = shared_data("hanna-benchmark-asg/hanna_metric_scores_llm.csv")
    csv.field_size_limit(sys.maxsize)
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    codes = {
        "Relevance": "RE",
        "Coherence": "CH",
        "Empathy": "EM",
        "Surprise": "SU",
        "Engagement": "EG",
        "Complexity": "CX",
    }
    return {
        criterion: np.column_stack(
            [np.concatenate([json.loads(row[f"Human {rater} {code}"]) for row in rows]) for rater in (1, 2, 3)]
        ).astype(float)
        for criterion, code in codes.items()
    }


# SOURCES.md: HANNA COLING notebook, pingouin ICC1 / ICC1k.
HANNA_ICC = {
    "Relevance": (0.137622, 0.323755),
    "Coherence": (-0.0547567, -0.184472),
    "Empathy": (0.115955, 0.282378),
    "Surprise": (0.0512276, 0.1394),
    "Engagement": (0.180231, 0.397433),
    "Complexity": (0.278044, 0.536044),
}


def test_icc_reproduces_the_published_hanna_values() -> None:
    matrices = hanna_matrices()
    assert set(matrices) == set(HANNA_ICC)
    for criterion, (published_icc1, published_icc1k) in HANNA_ICC.items():
        matrix = matrices[criterion]
        assert matrix.shape == (1056, 3)
        assert stats.icc1(matrix).value == pytest.approx(published_icc1, abs=5e-7)
        assert stats.icc1k(matrix).value == pytest.approx(published_icc1k, abs=5e-7)


# SOURCES.md: JUDGE-BENCH results/regular/newsroom.json, field krippendorff_alpha.
NEWSROOM_ALPHA = {
    "Informativeness": 0.2848732349364207,
    "Relevance": 0.11512128779864284,
    "Fluency": -0.015808123685552733,
    "Coherence": 0.06497202567878013,
}


def test_ordinal_alpha_reproduces_the_published_judge_bench_newsroom_values() -> None:
    data = json.loads(shared_data("JUDGE-BENCH/data/newsroom/newsroom.json").read_text())
    results = json.loads(shared_data("JUDGE-BENCH/results/regular/newsroom.json").read_text())
    for metric, published in NEWSROOM_ALPHA.items():
        # The published value is the same for every judge model in the result file.
        assert {model[metric]["krippendorff_alpha"] for model in results.values()} == {published}
        rows = []
        for instance in data["instances"]:
            annotations = instance["annotations"]
            if isinstance(annotations, str):
                annotations = ast.literal_eval(annotations)
            rows.append(annotations[metric]["individual_human_scores"])
        matrix = np.array(rows, dtype=float)
        assert matrix.shape == (420, 3)
        result = stats.krippendorff_alpha(matrix, level="ordinal", value_domain=[1, 2, 3, 4, 5])
        assert result.value == pytest.approx(published, abs=1e-12)


# ---------------------------------------------------------------------------
# Full agreement and ICC


@pytest.mark.parametrize(
    ("matrix", "expected"),
    [
        ([[3, 3, 3], [3, 3, 4], [1, 1, NAN], [2, NAN, NAN]], 200 / 3),
        ([[3, 3], [4, 4]], 100.0),
        ([[1, 2], [4, 5]], 0.0),
        ([[1.5, 1.5, 1.5], [NAN, 2, 2.5]], 50.0),
    ],
)
def test_full_agreement_is_the_percentage_of_multi_rated_items_with_one_score(
    matrix: list[list[float]], expected: float
) -> None:
    assert stats.full_agreement_pct(np.array(matrix)) == stats.Stat(pytest.approx(expected))


def test_full_agreement_is_undefined_without_a_multi_rated_item() -> None:
    result = stats.full_agreement_pct(np.array([[1, NAN], [NAN, 2]]))
    assert result.value is None
    assert "2 or more ratings" in result.reason


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([3, 3, 5], 3),
        ([5, 3, 3], 3),
        ([1, 2, 3], 1),  # all differ: the first character's
        ([None, 2, 4], 2),  # first abstains: the first one that answered
        ([None, None, 4], 4),
        ([None, None, None], None),
        ([], None),
        ([2.5, 4, 2.5], 2.5),
        ([4, 2, 2, 4], 4),  # two-two tie: the score given first
    ],
)
def test_majority_vote_and_its_tie_rule(scores: list[float | None], expected: float | None) -> None:
    # A persona's characters vote in order; the first-listed breaks a tie (CINEMETRIC), None abstains.
    assert stats.majority_vote(scores) == expected


# Shrout & Fleiss (1979), table 2: 6 targets x 4 judges; ICC(1,1) = .17, ICC(1,4) = .44.
SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]],
    dtype=float,
)


def test_icc_reproduces_shrout_and_fleiss_table_2() -> None:
    assert round(stats.icc1(SHROUT_FLEISS).value, 2) == 0.17
    assert round(stats.icc1k(SHROUT_FLEISS).value, 2) == 0.44


def test_icc_drops_empty_rater_columns_and_then_incomplete_items() -> None:
    padded = np.vstack([SHROUT_FLEISS, [[1, NAN, 3, 4]]])
    padded = np.column_stack([padded, np.full(len(padded), NAN)])
    assert stats.icc1(padded) == stats.icc1(SHROUT_FLEISS)
    assert stats.icc1k(padded) == stats.icc1k(SHROUT_FLEISS)


@pytest.mark.parametrize(
    ("matrix", "reason_part"),
    [
        (np.full((4, 3), 2.0), "no variation"),
        (np.array([[1.0, 2.0], [3.0, NAN]]), "fewer than 2 complete items"),
        (np.array([[1.0], [2.0], [3.0]]), "fewer than 2 raters"),
        (np.empty((0, 3)), "fewer than 2 complete items"),
    ],
)
def test_icc_is_undefined_with_a_reason(matrix: np.ndarray, reason_part: str) -> None:
    for result in (stats.icc1(matrix), stats.icc1k(matrix)):
        assert result.value is None
        assert reason_part in result.reason


def test_icc_with_equal_item_means_is_minus_one_over_k_minus_one_and_icc1k_undefined() -> None:
    matrix = np.array([[1.0, 3.0, 2.0], [3.0, 1.0, 2.0], [2.0, 2.0, 2.0]])
    assert stats.icc1(matrix) == stats.Stat(-0.5)
    result = stats.icc1k(matrix)
    assert result.value is None
    assert result.reason == "no between-item variance: all item means are equal"


# ---------------------------------------------------------------------------
# Correlations and Welch's t-test

X_WITH_TIES = np.array([1.0, 2.0, 2.0, 3.0, NAN, 4.0, 5.0, 5.0, 2.5, 3.0])
Y_WITH_TIES = np.array([1.5, 2.0, 3.0, 3.0, 4.0, NAN, 4.5, 4.0, 2.0, 3.5])
PAIRED = ~(np.isnan(X_WITH_TIES) | np.isnan(Y_WITH_TIES))


def test_kendall_tau_is_scipy_tau_b_over_paired_non_missing_items() -> None:
    result = stats.kendall_tau(X_WITH_TIES, Y_WITH_TIES)
    expected = sps.kendalltau(X_WITH_TIES[PAIRED], Y_WITH_TIES[PAIRED], variant="b")
    assert result == stats.TauResult(pytest.approx(expected.statistic), pytest.approx(expected.pvalue), 8,
                                     p_method="asymptotic")


@pytest.mark.parametrize("seed", range(40))
def test_kendall_tau_on_the_contingency_table_equals_scipy_on_tied_likert_data(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 600))
    x = rng.integers(1, 6, size=(n, 3)).mean(axis=1)  # item means of three raters: thirds, many ties
    y = np.clip(x + rng.choice([-1, -0.5, 0, 0.5, 1], size=n), 1, 5) if seed % 3 else rng.normal(size=n)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return
    expected = sps.kendalltau(x, y, variant="b")
    fast = stats_correlation._kendall_from_table(x, y)
    assert fast is not None  # the table route is the one under test
    assert fast == (pytest.approx(expected.statistic, abs=1e-12), pytest.approx(expected.pvalue, rel=1e-9, abs=1e-300))
    assert stats.kendall_tau(x, y) == stats.TauResult(pytest.approx(expected.statistic), pytest.approx(expected.pvalue), n,
                                                      p_method="asymptotic")


def test_kendall_tau_leaves_untied_data_to_scipy_for_its_exact_p_value() -> None:
    x, y = np.arange(10.0), np.array([2, 1, 4, 3, 6, 5, 8, 7, 10, 9.0])
    assert stats_correlation._kendall_from_table(x, y) is None
    expected = sps.kendalltau(x, y)
    assert stats.kendall_tau(x, y) == stats.TauResult(pytest.approx(expected.statistic), pytest.approx(expected.pvalue), 10,
                                                      p_method="exact")


@pytest.mark.parametrize(
    ("function", "scipy_function"),
    [(stats.pearson, sps.pearsonr), (stats.spearman, sps.spearmanr)],
)
def test_correlations_are_scipy_over_paired_non_missing_items(function, scipy_function) -> None:
    result = function(X_WITH_TIES, Y_WITH_TIES)
    expected = scipy_function(X_WITH_TIES[PAIRED], Y_WITH_TIES[PAIRED])
    assert result == stats.CorrResult(pytest.approx(expected.statistic), pytest.approx(expected.pvalue), 8)


@pytest.mark.parametrize(
    ("x", "y", "n", "reason_part"),
    [
        ([1.0, NAN, 3.0], [NAN, 2.0, NAN], 0, "fewer than 2 paired items"),
        ([1.0, 2.0], [NAN, 2.0], 1, "fewer than 2 paired items"),
        ([2.0, 2.0, 2.0], [1.0, 2.0, 3.0], 3, "x is constant"),
        ([1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 5.0, NAN], 3, "y is constant"),
    ],
)
@pytest.mark.parametrize("function", [stats.kendall_tau, stats.pearson, stats.spearman])
def test_correlations_are_undefined_with_a_reason(
    function, x: list[float], y: list[float], n: int, reason_part: str
) -> None:
    result = function(np.array(x), np.array(y))
    value = result.tau if isinstance(result, stats.TauResult) else result.r
    assert (value, result.p, result.n) == (None, None, n)
    assert reason_part in result.reason


def test_correlations_reject_vectors_of_different_length() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        stats.kendall_tau([1.0, 2.0], [1.0, 2.0, 3.0])


def test_mean_pairwise_kendall_averages_the_defined_rater_pairs() -> None:
    # Columns: A increasing, B one swap from A, C decreasing, D constant (pairs with D
    # are undefined). tau(A,B) = (5-1)/6 = 2/3, tau(A,C) = -1, tau(B,C) = -2/3.
    matrix = np.array(
        [
            [1.0, 1.0, 4.0, 3.0],
            [2.0, 3.0, 3.0, 3.0],
            [3.0, 2.0, 2.0, 3.0],
            [4.0, 4.0, 1.0, 3.0],
            [NAN, 5.0, NAN, 3.0],
        ]
    )
    result = stats.mean_pairwise_kendall(matrix)
    assert (result.mean_tau, result.n_pairs) == (pytest.approx((2 / 3 - 1 - 2 / 3) / 3), 3)
    # The constant rater's 3 pairs are left out, each with kendall_tau's reason (issue 25 review: "1 pair" with no why).
    assert result.undefined == ((0, 3, "y is constant over the 4 paired items"),
                                (1, 3, "y is constant over the 5 paired items"),
                                (2, 3, "y is constant over the 4 paired items"))


@pytest.mark.parametrize(
    ("matrix", "reason_part"),
    [
        (np.array([[1.0], [2.0]]), "fewer than 2 raters"),
        (np.array([[1.0, NAN], [NAN, 2.0], [3.0, NAN]]), "no rater pair"),
    ],
)
def test_mean_pairwise_kendall_is_undefined_with_a_reason(matrix: np.ndarray, reason_part: str) -> None:
    result = stats.mean_pairwise_kendall(matrix)
    assert (result.mean_tau, result.n_pairs) == (None, 0)
    assert reason_part in result.reason


def test_welch_matches_scipy_welch_satterthwaite_and_a_hand_computed_cohens_d() -> None:
    a = np.array([4.0, 5.0, 4.5, 3.0, NAN, 5.0, 4.0])
    b = np.array([3.0, 2.5, 4.0, 3.5, 2.0, NAN, 3.0, 2.0])
    a_clean, b_clean = a[~np.isnan(a)], b[~np.isnan(b)]
    result = stats.welch(a, b, unit="item means")
    expected = sps.ttest_ind(a_clean, b_clean, equal_var=False)
    var_a, var_b = a_clean.var(ddof=1), b_clean.var(ddof=1)
    satterthwaite = (var_a / 6 + var_b / 7) ** 2 / ((var_a / 6) ** 2 / 5 + (var_b / 7) ** 2 / 6)
    # By hand: a has mean 25.5/6 = 4.25 and sum of squares 2.875; b has mean 20/7 and
    # sum of squares 60.5 - 20**2/7 = 23.5/7; pooled SD = sqrt((2.875 + 23.5/7) / 11).
    mean_b = 20 / 7
    ss_b = 23.5 / 7
    cohens_d = (4.25 - mean_b) / math.sqrt((2.875 + ss_b) / 11)
    assert result == stats.WelchResult(
        t=pytest.approx(expected.statistic),
        df=pytest.approx(satterthwaite),
        p=pytest.approx(expected.pvalue),
        mean_diff=pytest.approx(4.25 - mean_b),
        cohens_d=pytest.approx(cohens_d),
        n_a=6,
        n_b=7,
        unit="item means",
    )
    assert result.df == pytest.approx(expected.df)


@pytest.mark.parametrize(
    ("a", "b", "reason_part"),
    [
        ([1.0, NAN], [1.0, 2.0, 3.0], "at least 2 values"),
        ([1.0, 2.0], [], "at least 2 values"),
        ([3.0, 3.0, 3.0], [2.0, 2.0, NAN], "zero variance"),
    ],
)
def test_welch_is_undefined_with_a_reason(a: list[float], b: list[float], reason_part: str) -> None:
    result = stats.welch(np.array(a), np.array(b), unit="ratings")
    assert (result.t, result.df, result.p, result.cohens_d) == (None, None, None, None)
    assert result.unit == "ratings"
    assert reason_part in result.reason


def test_welch_is_defined_when_only_one_group_is_constant() -> None:
    result = stats.welch(np.array([3.0, 3.0, 3.0]), np.array([1.0, 2.0, 3.0]))
    assert result.reason is None
    assert result.t == pytest.approx(1 / math.sqrt(1 / 3))
    assert result.df == pytest.approx(2.0)
    assert result.cohens_d == pytest.approx(1 / math.sqrt(0.5))
    assert result.unit == "item means"


@pytest.mark.parametrize(
    ("tau", "band"),
    [
        (0.0, "very weak"),
        (0.0999, "very weak"),
        (-0.0999, "very weak negative"),
        (0.1, "weak"),
        (-0.1, "weak negative"),
        (0.1999, "weak"),
        (0.2, "moderate"),
        (-0.2999, "moderate negative"),
        (0.3, "strong"),
        (-0.43, "strong negative"),
        (-1.0, "strong negative"),
        (1.0, "strong"),
        (None, "undefined"),
        (NAN, "undefined"),
    ],
)
def test_tau_band_follows_the_protocol_boundaries(tau: float | None, band: str) -> None:
    assert stats.tau_band(tau) == band


@pytest.mark.parametrize(
    ("tau", "p", "band"),
    [
        (0.5, 0.48, "not significant"),  # issue 25: 3 items, tau 0.50, p 0.48 was "strong"
        (-1.0, 0.051, "not significant"),
        (0.5, 0.05, "strong"),  # at 0.05 exactly the band stands
        (-0.5, 0.01, "strong negative"),
        (None, 0.9, "undefined"),
    ],
)
def test_tau_band_claims_no_strength_above_p_005(tau: float | None, p: float, band: str) -> None:
    assert stats.tau_band(tau, p) == band


# ---------------------------------------------------------------------------
# Descriptives


def test_item_means_ignore_missing_and_give_nan_for_empty_rows_without_warning() -> None:
    matrix = np.array([[1.0, 2.0, NAN], [NAN, NAN, NAN], [4.0, 4.5, 5.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        means = stats.item_means(matrix)
    np.testing.assert_array_equal(means, [1.5, NAN, 4.5])


@pytest.mark.parametrize(
    ("matrix", "expected"),
    [
        (
            [[1.0, 2.0, NAN], [NAN, NAN, NAN], [3.0, 4.0, 5.0]],
            stats.Describe(2, 5, 3.0, pytest.approx(math.sqrt(2.5))),
        ),
        ([[NAN, 4.0], [NAN, NAN]], stats.Describe(1, 1, 4.0, None, "std needs at least 2 ratings")),
        ([[NAN, NAN]], stats.Describe(0, 0, None, None, "no ratings")),
    ],
)
def test_describe_pools_all_ratings_with_sample_std(matrix: list[list[float]], expected: stats.Describe) -> None:
    assert stats.describe(np.array(matrix)) == expected


# ---------------------------------------------------------------------------
# Isolation from Django


def test_icc1_and_icc1k_together_equal_each_alone() -> None:
    for matrix in (KRIPPENDORFF_2011, random_ratings(5), np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([[1.0, 2.0], [2.0, 1.0]])):
        assert stats.icc1_and_icc1k(matrix) == (stats.icc1(matrix), stats.icc1k(matrix))


def test_alpha_with_ci_equals_the_two_functions_called_separately() -> None:
    for matrix in (KRIPPENDORFF_2011, random_ratings(7), np.array([[3.0, 3.0], [3.0, 3.0]])):
        alphas, ci = stats.alpha_with_ci(matrix, ci_level="ordinal", value_domain=HALF_POINTS, n_boot=200, seed=4)
        assert alphas == stats.alpha_all_levels(matrix, value_domain=HALF_POINTS)
        expected = stats.alpha_bootstrap_ci(matrix, level="ordinal", value_domain=HALF_POINTS, n_boot=200, seed=4)
        assert (ci.low, ci.high, ci.n_valid) == (expected.low, expected.high, expected.n_valid)


def test_stats_module_does_not_import_django() -> None:
    # evalhub/__init__.py starts the Celery app, so the package is reached through a bare namespace module:
    # only evalhub.stats and its own modules may load, and nothing of Django or Celery.
    code = """
import sys, types
sys.modules["evalhub"] = package = types.ModuleType("evalhub")
package.__path__ = [sys.argv[1]]
import evalhub.stats as module
assert module.krippendorff_alpha([[1, 2], [2, 2]], level="nominal").reason is None
leaked = sorted(
    m for m in sys.modules
    if m.split(".")[0] in {"django", "celery"}
    or (m.startswith("evalhub.") and not m.startswith("evalhub.stats"))
)
assert not leaked, leaked
"""
    completed = subprocess.run(
        [sys.executable, "-c", code, str(REPO_ROOT / "evalhub")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
