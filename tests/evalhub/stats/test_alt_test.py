"""The alternative annotator test on small cases whose answers are worked out here."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from evalhub import stats
from evalhub.stats.alt_test import alt_test, alt_test_joined, alt_test_long, alt_test_scores, alt_test_verdict
from tests.evalhub.stats.test_alt_test_real import reference_alt_test
from tests.support.alt_test_data import read_alt_test_dataset

REPO_ROOT = Path(__file__).resolve().parents[3]


def same_on_every_instance(labels: dict[str, float], n: int = 40) -> dict[str, dict[str, float]]:
    """Each human gives the same label on n instances i0..i(n-1)."""
    return {rater: {f"i{k}": label for k in range(n)} for rater, label in labels.items()}


def constant_llm(label: float, n: int = 40) -> dict[str, float]:
    return {f"i{k}": label for k in range(n)}


def by_step_up(ps: list[float], q: float) -> list[bool]:
    """Benjamini-Yekutieli written out: reject the k smallest, k the largest rank with p_(k) <= k q / (m H_m)."""
    m = len(ps)
    harmonic = sum(1.0 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda k: ps[k])
    last = 0
    for rank, k in enumerate(order, start=1):
        if ps[k] <= rank * q / (m * harmonic):
            last = rank
    rejected = [False] * m
    for k in order[:last]:
        rejected[k] = True
    return rejected


def noisy_study(seed: int = 7) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Six humans of rising accuracy and an accurate LLM on 40 nominal items (3 categories)."""
    rng = np.random.default_rng(seed)
    n = 40
    truth = rng.integers(0, 3, n)
    humans = {}
    for rater, accuracy in zip("abcdef", [0.55, 0.6, 0.65, 0.7, 0.75, 0.8], strict=True):
        labels = np.where(rng.random(n) < accuracy, truth, rng.integers(0, 3, n))
        humans[rater] = {f"i{k}": float(labels[k]) for k in range(n)}
    llm = np.where(rng.random(n) < 0.85, truth, rng.integers(0, 3, n))
    return humans, {f"i{k}": float(v) for k, v in enumerate(llm)}


# --- ties and constant differences -------------------------------------------------------------------


def test_a_tie_gives_both_a_win_so_d_is_zero_and_the_llm_keeps_its_advantage() -> None:
    humans = same_on_every_instance({"a": 1.0, "b": 1.0, "c": 1.0})
    result = alt_test(humans, constant_llm(1.0), scoring="accuracy", epsilon=0.15)
    # Every score ties: W_llm = W_h = 1, so rho_j = 1 and d = 0 < epsilon on every instance: scipy's p is 0.
    assert [(h.rater, h.n, h.p, h.rejected, h.advantage) for h in result.humans] == [
        ("a", 40, 0.0, True, 1.0),
        ("b", 40, 0.0, True, 1.0),
        ("c", 40, 0.0, True, 1.0),
    ]
    assert (result.winning_rate, result.advantage_probability, result.passed) == (1.0, 1.0, True)
    assert result.notes == ()


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")  # scipy on constant data
def test_constant_d_gets_scipys_p_of_zero_below_epsilon_and_one_above() -> None:
    # a and b say 0, c says 1 everywhere. The LLM says 2, which no human says (nominal codes).
    # a: others {b: 0, c: 1}: S(a) = 1/2 > S(llm) = 0, so d = 1 - 0 = 1 on every instance: p = 1.
    # c: others {0, 0}: S(c) = 0 = S(llm): a tie, d = 0 < 0.15 on every instance: p = 0.
    humans = same_on_every_instance({"a": 0.0, "b": 0.0, "c": 1.0})
    result = alt_test(humans, constant_llm(2.0), scoring="accuracy", epsilon=0.15)
    by_rater = {h.rater: h for h in result.humans}
    assert (by_rater["a"].p, by_rater["b"].p, by_rater["c"].p) == (1.0, 1.0, 0.0)
    assert sps.ttest_1samp([1.0] * 40, 0.15, alternative="less").pvalue == 1.0  # what scipy 1.17 says
    assert sps.ttest_1samp([0.0] * 40, 0.15, alternative="less").pvalue == 0.0
    assert (by_rater["a"].advantage, by_rater["c"].advantage) == (0.0, 1.0)
    # BY over [1, 1, 0]: only c's p = 0 is below its threshold.
    assert [h.rejected for h in result.humans] == [False, False, True]
    assert result.winning_rate == pytest.approx(1 / 3)
    assert result.advantage_probability == pytest.approx(1 / 3)
    assert result.passed is False
    assert result.notes == ()  # p = 0 and p = 1 are scipy's answers, not undefined ones


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
def test_constant_d_equal_to_epsilon_is_undefined_counted_as_not_rejected_with_a_note() -> None:
    humans = same_on_every_instance({"a": 1.0, "b": 1.0, "c": 1.0})
    result = alt_test(humans, constant_llm(1.0), scoring="accuracy", epsilon=0.0)
    assert math.isnan(sps.ttest_1samp([0.0] * 40, 0.0, alternative="less").pvalue)
    assert [(h.p, h.rejected) for h in result.humans] == [(None, False)] * 3
    # Undefined p-values still count among the humans tested: omega is 0 / 3, not undefined.
    assert (result.winning_rate, result.passed) == (0.0, False)
    assert result.notes == tuple(
        f"{r}: p is undefined (d = W_h - W_llm equals epsilon on every rating); counted as not rejected"
        for r in "abc"
    )


def test_an_undefined_p_keeps_its_place_in_benjamini_yekutieli() -> None:
    # b and c tie with the LLM on all their instances (d = 0 = epsilon: undefined p). a is scored against
    # helpers x and y (29 instances each, skipped): the LLM beats a 7 times, a beats it once, 50 ties.
    humans: dict[str, dict[str, float]] = {"a": {}, "x": {}, "y": {}}
    llm: dict[str, float] = {}
    for k in range(58):
        a, helper, llm[f"i{k}"] = (1.0, 0.0, 0.0) if k < 7 else (0.0, 0.0, 1.0) if k == 7 else (0.0, 0.0, 0.0)
        humans["a"][f"i{k}"] = a
        humans["x" if k % 2 else "y"][f"i{k}"] = helper
    humans["b"] = {f"t{k}": 0.0 for k in range(40)}
    humans["c"] = {f"t{k}": 0.0 for k in range(40)}
    llm |= {f"t{k}": 0.0 for k in range(40)}
    result = alt_test(humans, llm, scoring="accuracy", epsilon=0.0)

    p_a = sps.ttest_1samp([-1.0] * 7 + [1.0] + [0.0] * 50, 0.0, alternative="less").pvalue
    assert [(h.rater, h.n, h.p) for h in result.humans] == [("a", 58, pytest.approx(p_a)), ("b", 40, None), ("c", 40, None)]
    # Alone, a's p = 0.016 would be rejected (q = 0.05); with m = 3 its threshold is 0.05 / (3 * H_3) = 0.009.
    assert sps.false_discovery_control([p_a], method="by")[0] <= 0.05 < 3 * (1 + 1 / 2 + 1 / 3) * p_a
    assert [h.rejected for h in result.humans] == [False, False, False]
    assert (result.winning_rate, result.passed) == (0.0, False)
    assert result.notes == (
        "x gave 29 usable ratings; the test needs 30: skipped",
        "y gave 29 usable ratings; the test needs 30: skipped",
        "b: p is undefined (d = W_h - W_llm equals epsilon on every rating); counted as not rejected",
        "c: p is undefined (d = W_h - W_llm equals epsilon on every rating); counted as not rejected",
    )


# --- Benjamini-Yekutieli ---------------------------------------------------------------------------------


def test_benjamini_yekutieli_over_several_humans_is_the_step_up_procedure() -> None:
    humans, llm = noisy_study()
    result = alt_test(humans, llm, scoring="accuracy", epsilon=0.1)
    ps = [h.p for h in result.humans]
    assert all(p is not None for p in ps)
    rejected = [h.rejected for h in result.humans]
    assert rejected == by_step_up(ps, 0.05)
    # The case is chosen so that BY matters: a p below q that BY does not reject, and some rejections.
    assert any(p <= 0.05 and not r for p, r in zip(ps, rejected, strict=True))
    assert any(rejected) and not all(rejected)
    assert result.winning_rate == sum(rejected) / 6
    assert result.advantage_probability == pytest.approx(np.mean([h.advantage for h in result.humans]))


@pytest.mark.parametrize("seed", range(40))
def test_scipys_by_adjustment_rejects_exactly_what_the_step_up_rejects(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 15))
    ps = list(np.where(rng.random(m) < 0.5, rng.random(m) * 0.02, rng.random(m)))
    adjusted = sps.false_discovery_control(ps, method="by")
    assert list(adjusted <= 0.05) == by_step_up(ps, 0.05)


def test_the_module_agrees_with_the_loop_computation_on_random_studies() -> None:
    for seed in range(8):
        humans, llm = noisy_study(seed)
        for scoring in ("accuracy", "neg_rmse"):
            result = alt_test(humans, llm, scoring=scoring, epsilon=0.1)
            expected = reference_alt_test(humans, llm, scoring, 0.1)
            assert {h.rater: h.p for h in result.humans} == pytest.approx(expected["p"], rel=1e-9)
            assert {h.rater: h.advantage for h in result.humans} == pytest.approx(expected["advantage"])
            assert result.winning_rate == expected["omega"]


# --- the scoring functions -------------------------------------------------------------------------------


def test_accuracy_and_neg_rmse_differ_where_the_distance_matters() -> None:
    # On every instance a = 1, b = c = 2, the LLM = 5.
    # a's others {2, 2}: accuracy ties at 0 vs 0 (W_llm = 1); RMSE 1 for a against 3 for the LLM (W_llm = 0).
    # b's others {1, 2}: accuracy 1/2 for b against 0; RMSE sqrt(1/2) against sqrt(25/2): b wins both ways.
    humans = same_on_every_instance({"a": 1.0, "b": 2.0, "c": 2.0})
    accuracy = alt_test(humans, constant_llm(5.0), scoring="accuracy", epsilon=0.15)
    rmse = alt_test(humans, constant_llm(5.0), scoring="neg_rmse", epsilon=0.15)
    assert [h.advantage for h in accuracy.humans] == [1.0, 0.0, 0.0]
    assert [h.advantage for h in rmse.humans] == [0.0, 0.0, 0.0]
    assert accuracy.scoring == "accuracy" and rmse.scoring == "neg_rmse"


def test_neg_rmse_ties_at_equal_distance_on_either_side() -> None:
    # a = 1, b = 3, c = 5, the LLM = 3. b's others {1, 5}: RMSE 2 for b and for the LLM: a tie.
    # a's others {3, 5}: RMSE sqrt(10) for a against sqrt(2) for the LLM: the LLM wins (d = -1).
    humans = same_on_every_instance({"a": 1.0, "b": 3.0, "c": 5.0})
    result = alt_test(humans, constant_llm(3.0), scoring="neg_rmse", epsilon=0.15)
    assert [h.advantage for h in result.humans] == [1.0, 1.0, 1.0]
    assert [h.p for h in result.humans] == [0.0, 0.0, 0.0]  # d = -1, 0, -1: constant, below epsilon
    assert result.passed is True


def test_neg_rmse_with_a_fractional_llm_label_matches_the_direct_formula() -> None:
    humans, _ = noisy_study(3)
    rng = np.random.default_rng(3)
    llm = {f"i{k}": float(v) for k, v in enumerate(rng.integers(0, 7, 40) / 3)}  # means of 3 samples
    result = alt_test(humans, llm, scoring="neg_rmse", epsilon=0.1)
    expected = reference_alt_test(humans, llm, "neg_rmse", 0.1)
    assert {h.rater: h.advantage for h in result.humans} == pytest.approx(expected["advantage"])
    assert {h.rater: h.p for h in result.humans} == pytest.approx(expected["p"], rel=1e-9)


# --- an LLM with several samples -------------------------------------------------------------------------


def test_nominal_samples_are_reduced_to_their_majority() -> None:
    humans, llm = noisy_study()
    sampled = {i: [v, v, (v + 1) % 3] for i, v in llm.items()}  # 2 of 3 samples give the label
    assert alt_test(humans, sampled, scoring="accuracy", epsilon=0.1) == alt_test(
        humans, llm, scoring="accuracy", epsilon=0.1
    )


def test_a_tied_majority_leaves_the_instance_out_with_a_note() -> None:
    humans, llm = noisy_study()
    sampled: dict[str, object] = dict(llm)
    sampled["i0"] = [0.0, 1.0]
    sampled["i1"] = [2.0, 2.0, 1.0, 1.0]
    result = alt_test(humans, sampled, scoring="accuracy", epsilon=0.1)
    assert result.n_instances == 38
    assert result.notes[0] == "2 judge ratings left out: the LLM's most frequent samples are tied (no majority)"
    without = {i: v for i, v in llm.items() if i not in ("i0", "i1")}
    assert result.humans == alt_test(humans, without, scoring="accuracy", epsilon=0.1).humans


def test_likert_samples_are_reduced_to_their_mean_and_missing_samples_are_dropped() -> None:
    humans, llm = noisy_study(2)
    sampled = {i: [v - 1.0, v, v + 1.0, float("nan")] for i, v in llm.items()}
    assert alt_test(humans, sampled, scoring="neg_rmse", epsilon=0.1) == alt_test(
        humans, llm, scoring="neg_rmse", epsilon=0.1
    )
    # The rule can be chosen: the mean under accuracy turns [0, 1] into 0.5, which matches no human.
    means = alt_test(humans, {i: [0.0, 1.0] for i in llm}, scoring="accuracy", sample_rule="mean")
    assert means.notes == () and all(h.advantage < 1.0 for h in means.humans)


# --- what is missing -------------------------------------------------------------------------------------


def test_a_human_under_30_instances_is_skipped_with_a_note() -> None:
    humans = same_on_every_instance({"a": 1.0, "b": 1.0, "c": 1.0})
    humans["d"] = {f"i{k}": 1.0 for k in range(12)}
    result = alt_test(humans, constant_llm(1.0), scoring="accuracy", epsilon=0.15)
    assert [h.rater for h in result.humans] == ["a", "b", "c"]
    assert result.notes == ("d gave 12 usable ratings; the test needs 30: skipped",)
    assert result.winning_rate == 1.0  # 3 of the 3 tested, d is not in the denominator


def test_instances_with_one_human_rating_are_left_out_with_a_note() -> None:
    humans = same_on_every_instance({"a": 1.0, "b": 1.0, "c": 1.0})
    humans["a"] |= {f"solo{k}": 1.0 for k in range(5)}
    llm = constant_llm(1.0) | {f"solo{k}": 1.0 for k in range(5)} | {"unrated": 1.0}
    result = alt_test(humans, llm, scoring="accuracy", epsilon=0.15)
    assert result.n_instances == 40
    assert result.notes == ("6 judge ratings left out: fewer than 2 human ratings",)
    assert result.humans[0].n == 40


def test_no_instance_with_two_humans_and_an_llm_label_is_undefined_with_a_note() -> None:
    humans = {"a": {f"i{k}": 1.0 for k in range(40)}, "b": {f"j{k}": 1.0 for k in range(40)}}
    result = alt_test(humans, constant_llm(1.0), scoring="accuracy")
    assert (result.n_instances, result.winning_rate, result.advantage_probability, result.passed) == (
        0,
        None,
        None,
        None,
    )
    assert result.humans == ()
    assert result.notes == (
        "40 judge ratings left out: fewer than 2 human ratings",
        "40 judge ratings left out: no LLM label",
        "the test cannot run: no item has, on one question, at least 2 human ratings and an LLM label",
    )


def test_humans_without_llm_labels_give_no_instance_and_a_note() -> None:
    humans = same_on_every_instance({"a": 1.0, "b": 1.0, "c": 1.0})
    result = alt_test(humans, {}, scoring="neg_rmse")
    assert result.winning_rate is None and result.passed is None
    assert result.notes == (
        "40 judge ratings left out: no LLM label",
        "the test cannot run: no item has, on one question, at least 2 human ratings and an LLM label",
    )


def test_no_human_with_30_instances_is_undefined_with_a_note() -> None:
    humans = same_on_every_instance({"a": 1.0, "b": 1.0, "c": 1.0}, n=29)
    result = alt_test(humans, constant_llm(1.0, n=29), scoring="accuracy")
    assert (result.n_instances, result.winning_rate, result.passed, result.humans) == (29, None, None, ())
    assert result.notes[-1] == ("the test cannot run: no human gave 30 usable ratings (at most 29 per rater): "
                                "add items, or ratings per rater")
    assert result.notes[0] == "a gave 29 usable ratings; the test needs 30: skipped"


def test_fewer_than_three_humans_give_their_rows_but_no_verdict() -> None:
    humans = same_on_every_instance({"a": 1.0, "b": 1.0})
    result = alt_test(humans, constant_llm(1.0), scoring="accuracy")
    assert [(h.rater, h.p, h.advantage) for h in result.humans] == [("a", 0.0, 1.0), ("b", 0.0, 1.0)]
    assert (result.winning_rate, result.advantage_probability, result.passed) == (None, None, None)
    assert result.notes == ("no verdict: the test needs at least 3 humans with 30 usable ratings each; 2 have (a, b)",)


# --- inputs, defaults and guidance -----------------------------------------------------------------------


def test_the_long_form_gives_the_same_result_as_the_mappings() -> None:
    humans, llm = noisy_study()
    rows = [(r, i, v) for r, ratings in humans.items() for i, v in ratings.items()]
    long = alt_test_long(
        raters=[r for r, _, _ in rows],
        instances=[i for _, i, _ in rows],
        labels=[v for _, _, v in rows],
        llm_instances=list(llm),
        llm_labels=list(llm.values()),
        scoring="accuracy",
        epsilon=0.1,
    )
    assert long == alt_test(humans, llm, scoring="accuracy", epsilon=0.1)


def question_ratings(rng: np.random.Generator, raters: list[int], n_items: int, scoring: str) -> dict[str, np.ndarray]:
    """One question's long-format ratings with every case the test leaves out: NaN labels, items with one
    human rating, items without an LLM label, tied LLM samples (accuracy)."""
    levels = 3 if scoring == "accuracy" else 5
    truth = rng.integers(1, levels + 1, size=n_items)
    rater, item = np.meshgrid(raters, np.arange(n_items), indexing="ij")
    keep = rng.random(rater.shape) < 0.8
    label = np.clip(truth[item] + rng.integers(-1, 2, size=item.shape), 1, levels).astype(float)
    label[rng.random(label.shape) < 0.03] = np.nan
    llm_item = np.repeat(np.arange(n_items), 2)
    llm_label = np.clip(truth[llm_item] + rng.integers(-1, 2, size=llm_item.shape), 1, levels).astype(float)
    no_llm = np.repeat(rng.random(n_items) < 0.05, 2)
    return {"raters": rater[keep], "instances": item[keep], "labels": label[keep],
            "llm_instances": llm_item[~no_llm], "llm_labels": llm_label[~no_llm]}


@pytest.mark.parametrize("scoring", ["accuracy", "neg_rmse"])
def test_joined_scores_of_questions_give_what_the_test_gives_on_their_ratings_together(scoring: str) -> None:
    rng = np.random.default_rng(11)
    n_items = 60
    # Rater 40 rates only the second question; rater 50 only the first, too few items to be tested when joined.
    parts = [question_ratings(rng, [10, 20, 30, 50], n_items, scoring),
             question_ratings(rng, [10, 20, 30, 40], n_items, scoring),
             question_ratings(rng, [20, 30, 40], n_items, scoring)]
    parts[0] = {key: value[(parts[0]["raters"] != 50) | (parts[0]["instances"] < 20)] if key in (
        "raters", "instances", "labels") else value for key, value in parts[0].items()}
    names = {r: f"rater {r}" for r in (10, 20, 30, 40, 50)}
    together = alt_test_long(
        **{key: np.concatenate([part[key] + (k * n_items if "instances" in key else 0) for k, part in enumerate(parts)])
           for key in parts[0]}, scoring=scoring, rater_names=names, epsilon=0.1)
    joined = alt_test_joined([alt_test_scores(**part, scoring=scoring, rater_names=names) for part in parts],
                             rater_names=names)
    assert alt_test_verdict(joined, epsilon=0.1) == together
    # The cases are there: humans tested and skipped, instances left out for each reason.
    assert len(together.humans) == 4 and together.winning_rate is not None
    assert any("rater 50 gave" in note for note in together.notes)
    assert any("no LLM label" in note for note in together.notes)
    assert any("fewer than 2 human ratings" in note for note in together.notes)
    if scoring == "accuracy":
        assert any("tied" in note for note in together.notes)


def test_scores_of_one_question_give_what_the_long_form_gives() -> None:
    part = question_ratings(np.random.default_rng(3), [1, 2, 3], 50, "neg_rmse")
    assert alt_test_verdict(alt_test_scores(**part, scoring="neg_rmse"), epsilon=0.2) == alt_test_long(
        **part, scoring="neg_rmse", epsilon=0.2)


def test_joining_scores_of_two_scorings_is_refused() -> None:
    part = question_ratings(np.random.default_rng(3), [1, 2, 3], 40, "accuracy")
    with pytest.raises(ValueError, match="share one scoring"):
        alt_test_joined([alt_test_scores(**part, scoring="accuracy"), alt_test_scores(**part, scoring="neg_rmse")])
    with pytest.raises(ValueError, match="at least one part"):
        alt_test_joined([])


def test_defaults_and_the_papers_epsilon_guidance() -> None:
    humans, llm = noisy_study()
    result = alt_test(humans, llm, scoring="accuracy")
    assert (result.epsilon, result.q_fdr) == (0.15, 0.05)
    assert stats.DEFAULT_EPSILON == 0.15
    assert [(g.annotators, g.epsilon) for g in stats.EPSILON_GUIDANCE] == [
        ("expert", 0.2),
        ("skilled", 0.15),
        ("crowd", 0.1),
    ]


@pytest.mark.parametrize(
    ("humans", "llm", "options", "message"),
    [
        ({"a": {"i": "yes"}}, {"i": 1.0}, {}, "rater 'a': label 'yes' is not a number"),
        ({"a": {"i": 1.0}}, {"i": ["no"]}, {}, "the LLM's instance 'i': label 'no' is not a number"),
        ({"a": {"i": 1.0}}, {"i": "yes"}, {}, "the LLM's instance 'i': label 'yes' is not a number"),
        ({"a": {"i": float("inf")}}, {"i": 1.0}, {}, "human ratings contain infinite labels"),
        ({"a": {"i": 1.0}}, {"i": 1.0}, {"scoring": "f1"}, "unknown scoring 'f1'"),
        ({"a": {"i": 1.0}}, {"i": 1.0}, {"epsilon": 1.5}, "epsilon must be between 0 and 1"),
        ({"a": {"i": 1.0}}, {"i": 1.0}, {"q_fdr": 0.0}, "q_fdr must be strictly between 0 and 1"),
        ({"a": {"i": 1.0}}, {"i": 1.0}, {"sample_rule": "median"}, "unknown sample rule 'median'"),
    ],
)
def test_bad_input_is_refused_with_one_line(humans, llm, options, message) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")) as error:
        alt_test(humans, llm, **({"scoring": "accuracy"} | options))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("instances", [[1, 1], [10**12, 10**12], ["x", "x"]])
def test_a_rater_labelling_an_instance_twice_is_refused(instances: list) -> None:
    with pytest.raises(ValueError, match="rated the same instance twice"):
        alt_test_long(
            raters=["a", "a"], instances=instances, labels=[1.0, 2.0], llm_instances=instances[:1],
            llm_labels=[1.0], scoring="accuracy",
        )  # fmt: skip


def test_the_kind_of_ids_does_not_change_the_result() -> None:
    # Small integers are indexed through a lookup table, large ones and strings by sorting: same answer.
    humans, llm = noisy_study()
    rows = [(r, int(i[1:]), v) for r, ratings in humans.items() for i, v in ratings.items()]
    rater_of = {"a": 5, "b": 1, "c": 4, "d": 0, "e": 3, "f": 2}
    results = []
    for rater_id, instance_id in [
        (lambda r: rater_of[r], lambda i: i),
        (lambda r: 10**12 + rater_of[r], lambda i: 10**12 + 7 * i),
        (lambda r: f"rater-{rater_of[r]}", lambda i: f"item-{i:02d}"),
    ]:
        result = alt_test_long(
            raters=[rater_id(r) for r, _, _ in rows],
            instances=[instance_id(i) for _, i, _ in rows],
            labels=[v for _, _, v in rows],
            llm_instances=[instance_id(int(i[1:])) for i in llm],
            llm_labels=list(llm.values()),
            scoring="accuracy",
            epsilon=0.1,
        )
        results.append(sorted((h.p, h.advantage, h.rejected) for h in result.humans))
        assert result.winning_rate == alt_test(humans, llm, scoring="accuracy", epsilon=0.1).winning_rate
    assert results[0] == results[1] == results[2]
    assert len(results[0]) == 6


# --- the reader ------------------------------------------------------------------------------------------


def write_dataset(folder: Path, humans: object, llms: object) -> Path:
    folder.mkdir()
    (folder / "human_annotations.json").write_text(json.dumps(humans))
    (folder / "llm_annotations.json").write_text(json.dumps(llms))
    return folder


def test_the_reader_codes_string_labels_in_sorted_order_shared_by_humans_and_llms(tmp_path: Path) -> None:
    folder = write_dataset(
        tmp_path / "aspects",
        {"w1": {"x__food": "Positive", "y__food": "unknown"}, "w2": {"x__food": "Negative"}},
        {"gpt": {"x__food": "unknown", "y__food": "Positive"}},
    )
    dataset = read_alt_test_dataset(folder)
    assert dataset.name == "aspects"
    assert dataset.labels == ("Negative", "Positive", "unknown")
    assert dataset.humans == {"w1": {"x__food": 1.0, "y__food": 2.0}, "w2": {"x__food": 0.0}}
    assert dataset.llms == {"gpt": {"x__food": 2.0, "y__food": 1.0}}


def test_the_reader_keeps_numbers_as_they_are(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path / "stars", {"w1": {"a": 1, "b": 5}}, {"gpt": {"a": 2.5}})
    dataset = read_alt_test_dataset(folder)
    assert (dataset.labels, dataset.humans, dataset.llms) == (None, {"w1": {"a": 1.0, "b": 5.0}}, {"gpt": {"a": 2.5}})


@pytest.mark.parametrize(
    ("humans", "llms", "message"),
    [
        ({"w1": {"a": 1}}, {"gpt": {"a": "yes"}}, "labels mix strings and numbers"),
        ({"w1": ["a", "b"]}, {"gpt": {}}, "annotator 'w1': expected an object"),
        ({"w1": {"a": None}}, {"gpt": {}}, "annotator 'w1', instance 'a': label None is not a string or number"),
        ([1, 2], {"gpt": {}}, "expected an object {annotator: {instance: label}}"),
    ],
)
def test_the_reader_refuses_malformed_files_naming_the_entry(tmp_path: Path, humans, llms, message) -> None:
    folder = write_dataset(tmp_path / "bad", humans, llms)
    with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("}", r"\}")):
        read_alt_test_dataset(folder)


def test_the_reader_names_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"human_annotations.json: cannot be read"):
        read_alt_test_dataset(tmp_path)


def test_the_reader_and_the_test_import_nothing_of_django() -> None:
    code = """
import sys, types
sys.modules["evalhub"] = package = types.ModuleType("evalhub")
package.__path__ = [sys.argv[1]]
import tests.support.alt_test_data
leaked = sorted(
    m for m in sys.modules
    if m.split(".")[0] in {"django", "celery"}
    or (m.startswith("evalhub.") and not m.startswith(("evalhub.stats", "tests.support.alt_test_data")))
)
assert not leaked, leaked
"""
    completed = subprocess.run(
        [sys.executable, "-c", code, str(REPO_ROOT / "evalhub")], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr
