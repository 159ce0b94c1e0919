"""Cohen's and Fleiss' kappa, pool labels, the confusion matrix and the BH adjustment.

Exactness is checked against scikit-learn's ``cohen_kappa_score`` / ``confusion_matrix`` and statsmodels'
``fleiss_kappa`` (test-only dependencies) on two real datasets of ../shared/data/AltTest: SummEval
(3 experts, 1-5 Likert, every item) and CEBaB aspects (4 of 10 crowd workers per item, 3 string labels),
plus MT-Bench (2 or 3 raters per item) for the unbalanced Fleiss rule.
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion_matrix
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa
from statsmodels.stats.multitest import multipletests

from evalhub import stats
from tests.support.shared_ratings import AltTestData, load_alttest

NAN = np.nan
SK_WEIGHTS = {"unweighted": None, "linear": "linear", "quadratic": "quadratic"}


def sklearn_kappa(a: list[float], b: list[float], weights: str, labels: list[float] | None = None) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(a, b, weights=SK_WEIGHTS[weights], labels=labels))


def human_majority(data: AltTestData) -> dict[str, float | None]:
    """Each instance's most frequent human label, None on a tie: a plain loop over the raw dicts."""
    labels: dict[str, list[float]] = {}
    for per_instance in data.humans.values():
        for instance, label in per_instance.items():
            labels.setdefault(instance, []).append(label)
    out: dict[str, float | None] = {}
    for instance, values in labels.items():
        ranked = Counter(values).most_common()
        out[instance] = None if len(ranked) > 1 and ranked[0][1] == ranked[1][1] else ranked[0][0]
    return out


# --- Cohen's kappa: hand cases -------------------------------------------------------------------------


def test_cohen_kappa_of_a_textbook_two_by_two_table() -> None:
    # 50 items: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no. p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5.
    x = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    y = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    result = stats.cohen_kappa(x, y)
    assert result.value == pytest.approx(0.4, abs=1e-12)
    assert (result.n_items, result.n_tied, result.n_unpaired, result.reason) == (50, 0, 0, None)


def test_weighted_kappa_by_hand_counts_distances_by_position_in_the_category_list() -> None:
    # O = [[1, 1, 0], [0, 1, 0], [0, 1, 1]] over categories 1, 2, 3; rows 2, 1, 2; columns 1, 3, 1; n = 5.
    x = [1, 1, 2, 3, 3]
    y = [1, 2, 2, 2, 3]
    # linear: sum w O = 1 + 1 = 2; off-diagonal row*col*w: (1,2) 6, (1,3) 2*1*2, (2,1) 1, (2,3) 1, (3,1) 2*1*2,
    # (3,2) 6, so sum w E = 22 / 5
    assert stats.cohen_kappa(x, y, weights="linear").value == pytest.approx(1 - 2 / (22 / 5), abs=1e-12)
    # quadratic: same cells, distance 2 weighs 4 instead of 2: sum w E = (6 + 2*1*4 + 1 + 1 + 2*1*4 + 6) / 5 = 6
    assert stats.cohen_kappa(x, y, weights="quadratic").value == pytest.approx(1 - 2 / 6, abs=1e-12)
    # An unused category between 2 and 3 puts 3 two positions from 2 and three from 1 when the whole scale
    # is given: sum w O = 1 + 4 = 5, sum w E = (6 + 2*1*9 + 1 + 1*1*4 + 2*1*9 + 6*4) / 5 = 71 / 5.
    wide = stats.cohen_kappa(x, y, weights="quadratic", categories=[1, 2, 2.5, 3])
    assert wide.value == pytest.approx(1 - 5 / (71 / 5), abs=1e-12)
    assert wide.value == pytest.approx(sklearn_kappa(x, y, "quadratic", [1, 2, 2.5, 3]), abs=1e-12)


def test_cohen_kappa_leaves_out_items_missing_a_label_and_counts_them() -> None:
    result = stats.cohen_kappa([1, 2, NAN, 1, 2], [1, 2, 1, NAN, 1])
    assert result.n_items == 3 and result.n_unpaired == 2
    assert result.value == pytest.approx(sklearn_kappa([1, 2, 2], [1, 2, 1], "unweighted"), abs=1e-12)


def test_one_shared_category_is_undefined_where_sklearn_returns_nan() -> None:
    result = stats.cohen_kappa([2, 2, 2], [2, 2, 2], weights="quadratic")
    assert result.value is None and "one and the same category" in (result.reason or "")
    assert result.ci.low is None and result.ci.n_valid == 0
    assert np.isnan(sklearn_kappa([2, 2, 2], [2, 2, 2], "quadratic"))


def test_two_constant_vectors_on_different_categories_give_zero_as_sklearn_does() -> None:
    result = stats.cohen_kappa([1, 1, 1], [2, 2, 2])
    assert result.value == 0.0 == sklearn_kappa([1, 1, 1], [2, 2, 2], "unweighted")


def test_no_paired_item_is_undefined_with_a_reason() -> None:
    for x, y in (([], []), ([1, NAN], [NAN, 2])):
        result = stats.cohen_kappa(x, y)
        assert result.value is None and result.reason == "no item has both labels"
        assert result.n_items == 0 and result.n_unpaired == len(x)


def test_bad_kappa_input_raises_a_one_line_error() -> None:
    with pytest.raises(ValueError, match="label 4 is not one of the categories 1, 2, 3"):
        stats.cohen_kappa([1, 4], [1, 2], categories=[1, 2, 3])
    with pytest.raises(ValueError, match="unknown weights 'cubic'"):
        stats.cohen_kappa([1, 2], [1, 2], weights="cubic")
    with pytest.raises(ValueError, match="must not repeat"):
        stats.cohen_kappa([1, 2], [1, 2], categories=[1, 2, 2])
    with pytest.raises(ValueError, match="differ in length"):
        stats.cohen_kappa([1, 2], [1])
    with pytest.raises(ValueError, match="n_boot"):
        stats.cohen_kappa([1, 2], [1, 2], n_boot=0)


# --- Cohen's kappa: bootstrap ----------------------------------------------------------------------------


def test_kappa_bootstrap_is_seeded_and_counts_replicates_where_kappa_is_undefined() -> None:
    # A replicate is undefined when it draws only the three (1, 1) items: probability (3/4)^4.
    x, y = [1, 1, 1, 2], [1, 1, 1, 2]
    first = stats.cohen_kappa(x, y, n_boot=4000, seed=7)
    assert first == stats.cohen_kappa(x, y, n_boot=4000, seed=7)
    assert first.ci != stats.cohen_kappa(x, y, n_boot=4000, seed=8).ci
    expected_valid = 4000 * (1 - 0.75**4)
    sd = (4000 * 0.75**4 * (1 - 0.75**4)) ** 0.5
    assert abs(first.ci.n_valid - expected_valid) < 4 * sd
    assert first.ci.low == first.ci.high == 1.0  # every defined replicate agrees perfectly


def test_kappa_bootstrap_matches_resampling_items_with_sklearn_within_monte_carlo_error() -> None:
    data = load_alttest("summeval")
    matrix = data.matrix()[:400]
    llm = data.llm_vector("gpt-4o")[:400]
    result = stats.cohen_kappa(matrix[:, 0], llm, weights="quadratic", n_boot=2000, seed=1)
    rng = np.random.default_rng(123)
    brute = []
    for _ in range(600):
        index = rng.integers(0, 400, 400)
        brute.append(sklearn_kappa(matrix[index, 0].tolist(), llm[index].tolist(), "quadratic"))
    low, high = np.percentile(brute, [2.5, 97.5])
    assert result.ci.low is not None and result.ci.high is not None
    assert result.ci.low < result.value < result.ci.high
    # Percentiles of 600 replicates move by about 0.01 here; a wrong resampling unit would move them more.
    assert result.ci.low == pytest.approx(low, abs=0.03)
    assert result.ci.high == pytest.approx(high, abs=0.03)


# --- Cohen's kappa: real data against scikit-learn ---------------------------------------------------------


@pytest.mark.parametrize("weights", ["unweighted", "linear", "quadratic"])
def test_kappa_per_rater_equals_sklearn_on_summeval(weights: str) -> None:
    data = load_alttest("summeval")
    matrix = data.matrix()
    scale = [1, 2, 3, 4, 5]
    compared = 0
    for llm in data.llms:
        results = stats.kappa_per_rater(matrix, data.llm_vector(llm), weights=weights, categories=scale, n_boot=50)
        for annotator, result in zip(data.annotators, results, strict=True):
            rated = data.humans[annotator]
            human = [rated[i] for i in data.instances if i in rated]
            judge = [data.llms[llm][i] for i in data.instances if i in rated]
            assert result.n_items == len(human) == 6400
            assert result.value == pytest.approx(sklearn_kappa(human, judge, weights, scale), abs=1e-9)
            compared += 1
    assert compared == 18


@pytest.mark.parametrize("weights", ["unweighted", "linear", "quadratic"])
def test_kappa_vs_majority_equals_sklearn_and_counts_ties_on_summeval(weights: str) -> None:
    data = load_alttest("summeval")
    majority = human_majority(data)
    kept = [i for i in data.instances if majority[i] is not None]
    ties = len(data.instances) - len(kept)
    assert ties > 100  # three raters on five points often split three ways
    for llm in data.llms:
        result = stats.kappa_vs_majority(
            data.matrix(), data.llm_vector(llm), weights=weights, categories=[1, 2, 3, 4, 5], n_boot=50
        )
        expected = sklearn_kappa(
            [majority[i] for i in kept], [data.llms[llm][i] for i in kept], weights, [1, 2, 3, 4, 5]
        )
        assert result.value == pytest.approx(expected, abs=1e-9)
        assert (result.n_items, result.n_tied, result.n_unpaired) == (len(kept), ties, 0)


def test_kappa_per_rater_and_vs_majority_equal_sklearn_on_cebab_aspects() -> None:
    data = load_alttest("cebab_aspects")
    matrix = data.matrix()
    majority = human_majority(data)
    kept = [i for i in data.instances if majority[i] is not None]
    for llm, labels in data.llms.items():
        vector = data.llm_vector(llm)
        result = stats.kappa_vs_majority(matrix, vector, n_boot=50)
        expected = sklearn_kappa([majority[i] for i in kept], [labels[i] for i in kept], "unweighted")
        assert result.value == pytest.approx(expected, abs=1e-9)
        assert result.n_tied == len(data.instances) - len(kept)
        for annotator, rater in zip(data.annotators, stats.kappa_per_rater(matrix, vector, n_boot=50), strict=True):
            rated = data.humans[annotator]  # 4 of 10 workers per item: each rater has a subset
            expected = sklearn_kappa(list(rated.values()), [labels[i] for i in rated], "unweighted")
            assert rater.n_items == len(rated) and rater.n_unpaired == len(data.instances) - len(rated)
            assert rater.value == pytest.approx(expected, abs=1e-9)


# --- Fleiss' kappa ----------------------------------------------------------------------------------------


def fleiss_by_loops(data: AltTestData) -> float:
    """The documented formula, item by item, over the raw dicts (items with 2 or more ratings)."""
    per_item: dict[str, list[float]] = {}
    for labels in data.humans.values():
        for instance, label in labels.items():
            per_item.setdefault(instance, []).append(label)
    agreements, totals = [], Counter[float]()
    for values in per_item.values():
        n = len(values)
        if n < 2:
            continue
        counts = Counter(values)
        agreements.append((sum(c * c for c in counts.values()) - n) / (n * (n - 1)))
        totals.update(values)
    all_ratings = sum(totals.values())
    p_e = sum((c / all_ratings) ** 2 for c in totals.values())
    p_bar = sum(agreements) / len(agreements)
    return (p_bar - p_e) / (1 - p_e)


@pytest.mark.parametrize("name", ["summeval", "cebab_aspects"])
def test_fleiss_kappa_equals_statsmodels_on_balanced_real_data(name: str) -> None:
    data = load_alttest(name)
    matrix = data.matrix()
    # statsmodels wants items x raters without gaps: each item's labels in a row.
    rows = np.array([row[~np.isnan(row)] for row in matrix])
    table, _ = aggregate_raters(rows)
    result = stats.fleiss_kappa(matrix, n_boot=200)
    assert result.value == pytest.approx(sm_fleiss_kappa(table), abs=1e-9)
    assert result.value == pytest.approx(fleiss_by_loops(data), abs=1e-9)
    assert result.n_items == len(data.instances) and result.n_unpaired == 0
    assert result.ci.low < result.value < result.ci.high


def test_fleiss_kappa_with_unequal_raters_per_item_follows_the_documented_rule_on_mtbench() -> None:
    data = load_alttest("mtbench")
    matrix = data.matrix()
    counts = Counter((~np.isnan(matrix)).sum(axis=1).tolist())
    assert counts == {2: 114, 3: 6}  # statsmodels refuses this table
    result = stats.fleiss_kappa(matrix, n_boot=100)
    assert result.value == pytest.approx(fleiss_by_loops(data), abs=1e-9)
    # Restricted to the items with two ratings, the rule is Fleiss' own.
    two = matrix[(~np.isnan(matrix)).sum(axis=1) == 2]
    table, _ = aggregate_raters(np.array([row[~np.isnan(row)] for row in two]))
    assert stats.fleiss_kappa(two, n_boot=10).value == pytest.approx(sm_fleiss_kappa(table), abs=1e-9)


def test_fleiss_kappa_by_hand_with_a_single_rated_item_left_out() -> None:
    # Items: (1,1,2) P=1/3, (2,2,2) P=1, (1,2) P=0; (1) left out. p = (3/8, 5/8), P_e = 34/64.
    matrix = [[1, 1, 2], [2, 2, 2], [1, 2, NAN], [1, NAN, NAN]]
    result = stats.fleiss_kappa(matrix)
    p_bar, p_e = (1 / 3 + 1 + 0) / 3, 34 / 64
    assert result.value == pytest.approx((p_bar - p_e) / (1 - p_e), abs=1e-12)
    assert (result.n_items, result.n_unpaired) == (3, 1)


def test_fleiss_kappa_undefined_cases() -> None:
    one = stats.fleiss_kappa([[3, 3], [3, 3]])
    assert one.value is None and "one category" in (one.reason or "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(sm_fleiss_kappa(np.array([[2, 0], [2, 0]])))
    lonely = stats.fleiss_kappa([[1, NAN], [NAN, 2]])
    assert lonely.value is None and lonely.reason == "no item has 2 or more ratings" and lonely.n_unpaired == 2
    empty = stats.fleiss_kappa(np.empty((0, 3)))
    assert empty.value is None and empty.n_items == 0


# --- pool labels ---------------------------------------------------------------------------------------------


def test_pool_label_majority_leaves_ties_undefined() -> None:
    labels = stats.pool_label([[0, 0, 1], [0, 1, NAN], [NAN, NAN, NAN]], reduction="majority")
    assert labels[0] == 0 and np.isnan(labels[1]) and np.isnan(labels[2])


def test_pool_label_rounded_mean_sends_halves_up_whatever_their_parity() -> None:
    labels = stats.pool_label([[2, 3], [3, 4], [1, 1.4], [NAN, NAN], [5, 5]], reduction="rounded_mean")
    np.testing.assert_array_equal(labels[[0, 1, 2, 4]], [3, 4, 1, 5])
    assert np.isnan(labels[3])
    assert np.round(2.5) == 2  # what numpy would have done to the first item
    half_points = stats.pool_label(
        [[2, 2.5, NAN], [1, 1, 1.5], [6, 6, NAN], [0, 0, 0]],
        reduction="rounded_mean",
        scale=[1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5],
    )
    # 2.25 is halfway between 2 and 2.5 (up); 7/6 is nearer 1; outside the scale goes to its ends.
    np.testing.assert_array_equal(half_points, [2.5, 1, 5, 1])
    with pytest.raises(ValueError, match="unknown reduction"):
        stats.pool_label([[1]], reduction="median")


# --- confusion matrix -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "categories"), [("summeval", [1, 2, 3, 4, 5]), ("cebab_aspects", [0, 1, 2])])
def test_confusion_vs_majority_equals_sklearn_on_real_data(name: str, categories: list[float]) -> None:
    data = load_alttest(name)
    majority = human_majority(data)
    kept = [i for i in data.instances if majority[i] is not None]
    for llm, labels in data.llms.items():
        result = stats.confusion_vs_majority(data.matrix(), data.llm_vector(llm), categories=categories)
        expected = sk_confusion_matrix([majority[i] for i in kept], [labels[i] for i in kept], labels=categories)
        np.testing.assert_array_equal(np.array(result.counts), expected)
        assert result.categories == tuple(float(c) for c in categories)
        assert (result.n_items, result.n_tied, result.n_unpaired) == (len(kept), len(data.instances) - len(kept), 0)


def test_confusion_matrix_by_hand_with_ties_and_missing_labels() -> None:
    humans = [[1, 1, 2], [2, 2, 2], [1, 2, NAN], [1, NAN, NAN], [NAN, NAN, NAN]]
    result = stats.confusion_vs_majority(humans, [1, 2, 1, 2, 1], categories=[1, 2, 3])
    assert result.counts == ((1, 1, 0), (0, 1, 0), (0, 0, 0))
    assert (result.n_items, result.n_tied, result.n_unpaired) == (3, 1, 1)
    plain = stats.confusion_matrix([1, NAN, 2], [2, 2, 2])
    assert plain.counts == ((0, 1), (0, 1)) and plain.n_unpaired == 1
    assert stats.confusion_matrix([], [], categories=[1, 2]).counts == ((0, 0), (0, 0))
    with pytest.raises(ValueError, match="label 3 is not one of the categories 1, 2"):
        stats.confusion_matrix([3], [1], categories=[1, 2])


# --- Benjamini-Hochberg -----------------------------------------------------------------------------------------


def test_bh_adjust_keeps_undefined_p_values_in_place_and_matches_statsmodels() -> None:
    raw = [0.01, None, 0.04, float("nan"), 0.03, 0.5]
    adjusted = stats.bh_adjust(raw)
    assert adjusted[1] is None and adjusted[3] is None
    defined = [0.01, 0.04, 0.03, 0.5]
    _, expected, _, _ = multipletests(defined, method="fdr_bh")
    assert [adjusted[i] for i in (0, 2, 4, 5)] == pytest.approx(list(expected), abs=1e-12)
    # By hand: m = 4; sorted 0.01, 0.03, 0.04, 0.5 give 4p/rank = 0.04, 0.06, 0.16/3, 0.5; the running
    # minimum from the top makes 0.03 and 0.04 both 0.16/3.
    assert adjusted[0] == pytest.approx(0.04) and adjusted[2] == adjusted[4] == pytest.approx(0.16 / 3)
    assert stats.bh_adjust([]) == [] and stats.bh_adjust([None]) == [None]
    with pytest.raises(ValueError, match="between 0 and 1"):
        stats.bh_adjust([0.2, 1.5])


def test_a_precomputed_majority_gives_the_same_kappa_and_confusion_and_is_checked() -> None:
    data = load_alttest("cebab_aspects")
    matrix, pool = data.matrix(), data.llm_vector("gemini_pro")
    majority = stats.majority_choice(matrix)
    shared = stats.kappa_vs_majority(matrix, pool, majority=majority, n_boot=100)
    assert shared == stats.kappa_vs_majority(matrix, pool, n_boot=100)
    assert stats.confusion_vs_majority(matrix, pool, majority=majority) == stats.confusion_vs_majority(matrix, pool)
    with pytest.raises(ValueError, match="majority has 2 labels for 1008 items"):
        stats.kappa_vs_majority(matrix, pool, majority=[1, 2])


def test_kappas_vs_majority_equal_separate_calls_ci_included() -> None:
    import numpy as np

    from evalhub import stats

    rng = np.random.default_rng(11)
    humans = rng.integers(1, 6, size=(300, 3)).astype(float)
    pool = np.clip(humans[:, 0] + rng.integers(-1, 2, size=300), 1, 5)
    together = stats.kappas_vs_majority(humans, pool, categories=[1, 2, 3, 4, 5], n_boot=300, seed=4)
    for weights, result in zip(stats.WEIGHTS, together, strict=True):
        alone = stats.kappa_vs_majority(humans, pool, weights=weights, categories=[1, 2, 3, 4, 5], n_boot=300, seed=4)
        assert result == alone
    assert len({r.value for r in together}) == 3


def test_rater_kappas_and_tests_equal_one_cohen_kappa_and_z_test_per_rater_on_cebab_aspects() -> None:
    # Crowd data (4 of 10 workers per item) plus a rater with no item and a rater who always gives the
    # first category: every column's kappa, CI, counts and z-test are those of the separate calls.
    data = load_alttest("cebab_aspects")
    matrix = data.matrix()
    vector = data.llm_vector(next(iter(data.llms)))
    constant = np.where(np.isnan(vector), NAN, 0.0)
    matrix = np.column_stack([matrix, np.full(matrix.shape[0], NAN), constant])
    categories = sorted({float(v) for v in matrix[~np.isnan(matrix)]} | {float(v) for v in vector[~np.isnan(vector)]})
    together = stats.rater_kappas_and_tests(matrix, vector, categories=categories, n_boot=200, seed=3)
    assert len(together) == matrix.shape[1]
    for j, (result, test) in enumerate(together):
        assert result == stats.cohen_kappa(matrix[:, j], vector, categories=categories, n_boot=200, seed=3)
        assert test == stats.kappa_z_test(matrix[:, j], vector, categories=categories)
    assert together[-2][0].value is None and together[-2][1].p is None
    with pytest.raises(ValueError, match="not one of the categories"):
        stats.rater_kappas_and_tests(matrix, vector, categories=categories[1:], n_boot=10)


@pytest.mark.parametrize(("judge", "rater"), [([3, 3, 3], [3, 3, 2]), ([3, 3, 3, 3, 3], [3, 3, 2, 1, 3]),
                                              ([2, 2, 2], [2, 3, 3])])
def test_a_side_with_one_category_has_no_z_test_whatever_the_rounding(judge, rater):
    # Review 23: judge 3,3,3 against 3,3,2 left Var0's numerator at 2.2e-16, not 0, and p came out 1.0 (joining the
    # Benjamini-Hochberg family) while its siblings with an exact 0 said "undefined".
    test = stats.kappa_z_test(judge, rater)
    assert (test.z, test.p) == (None, None) and test.reason == "the variance of kappa under H0 is 0"
