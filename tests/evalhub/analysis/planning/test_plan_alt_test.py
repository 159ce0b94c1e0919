"""`plan_alt_test`: the plan from stated values or from a pilot (a study's ratings), its output and its errors."""
from __future__ import annotations

import io
import itertools
import math
import re

import pytest
from django.core.management import CommandError, call_command

from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.planning.alt_test_plan import alt_test_plan_for_study, study_pilot
from evalhub.management.commands.plan_alt_test import plan_lines
from tests.evalhub.factories import import_long

pytestmark = pytest.mark.django_db

RATERS = 4
N_ITEMS = 12


def human_score(i: int, r: int) -> int:
    return 1 + (i + (r if i % 3 == 0 else 0)) % 5


def judge_score(i: int) -> int:
    return 1 + (i + (1 if i % 4 == 0 else 0)) % 5


@pytest.fixture
def pilot_study(story_study, tmp_path):
    rows = [(f"human-{i}", "human", "relevance", "human", f"r{r}", human_score(i, r))
            for i in range(N_ITEMS) for r in range(RATERS)]
    rows += [(f"human-{i}", "human", "relevance", "gpt", "0", judge_score(i)) for i in range(N_ITEMS)]
    import_long(story_study, rows, tmp_path)
    return story_study


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("plan_alt_test", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_the_pilot_estimates_invert_the_model_from_the_ratings(pilot_study):
    # neg_rmse: two humans' mean squared difference is 2 sd_h^2; a human's and the judge's is sd_h^2 + sd_j^2.
    diffs = [(human_score(i, a) - human_score(i, b)) ** 2
             for i in range(N_ITEMS) for a, b in itertools.combinations(range(RATERS), 2)]
    sd_h = math.sqrt(sum(diffs) / len(diffs) / 2)
    judge_diffs = [(human_score(i, r) - judge_score(i)) ** 2 for i in range(N_ITEMS) for r in range(RATERS)]
    sd_j = math.sqrt(sum(judge_diffs) / len(judge_diffs) - sd_h**2)
    pilot = study_pilot(study=pilot_study, scoring="neg_rmse", levels=5)
    assert (pilot.raters, pilot.items_per_rater, pilot.raters_per_item) == (RATERS, N_ITEMS, RATERS)
    assert pilot.groups == 1  # one group: the design is the study's, as before the per-group count
    assert pilot.human == pytest.approx(sd_h, abs=1e-12)
    assert pilot.judge == pytest.approx(sd_j, abs=1e-12)
    assert pilot.pool == "gpt"


def test_the_pilot_accuracy_estimates_solve_the_agreement_equations(pilot_study):
    pairs = [human_score(i, a) == human_score(i, b)
             for i in range(N_ITEMS) for a, b in itertools.combinations(range(RATERS), 2)]
    p_hh = sum(pairs) / len(pairs)
    p_jh = sum(human_score(i, r) == judge_score(i) for i in range(N_ITEMS) for r in range(RATERS)) / (N_ITEMS * RATERS)
    pilot = study_pilot(study=pilot_study, scoring="accuracy", levels=5)
    c, a_h = 5, pilot.human
    assert a_h**2 + (1 - a_h) ** 2 / (c - 1) == pytest.approx(p_hh, abs=1e-12)
    assert pilot.judge is not None
    a_j = pilot.judge
    assert a_h * a_j + (1 - a_h) * (1 - a_j) / (c - 1) == pytest.approx(p_jh, abs=1e-12)


def without_timing(text):
    return re.sub(r", [0-9.]+ s$", "", text.rstrip("\n"), flags=re.MULTILINE)


def test_the_command_prints_the_power_the_needs_the_grid_and_the_seed(pilot_study):
    text = run("story", "--raters", "6", "--items-per-rater", "40", "--raters-per-item", "3",
               "--human-quality", "1.0", "--judge-quality", "0.5", "--replicates", "100", "--seed", "4")
    assert ("model: scored by negative RMSE against the other raters (higher = closer; 0 = identical), a 5-point "
            "scale; a human: noise sd 1 scale points; the judge: noise sd 0.5 scale points; ε = 0.15") in text
    assert "chance to pass: " in text
    # Stated qualities, no pilot: the definition without the pilot's measurement.
    assert ("\nnoise sd: the standard deviation, in scale points, of the normal noise the simulation adds to an "
            "item's true score in each rating (then rounded and clipped to the scale)\n") in text
    assert "with 6 raters x 40 ratings per rater, 3 raters per item (80 (item, question) pairs)" in text
    assert "ratings per rater for an 80 % chance to pass: " in text and "raters for an 80 % chance to pass: " in text
    assert "grid searched: ratings per rater 30, 40" in text
    assert "100 simulated replicates per design point, seed 4" in text
    again = run("story", "--raters", "6", "--items-per-rater", "40", "--raters-per-item", "3",
                "--human-quality", "1.0", "--judge-quality", "0.5", "--replicates", "100", "--seed", "4")
    # The same seed gives the same figures; only the last line's wall time ("..., 0.01 s") may differ.
    assert without_timing(text) == without_timing(again)


def test_the_command_agrees_with_the_service(pilot_study):
    result = alt_test_plan_for_study(study=pilot_study, raters=6, items_per_rater=40, raters_per_item=3,
                                     human_quality=1.0, judge_quality=0.5, replicates=100, seed=4)
    text = run("story", "--raters", "6", "--items-per-rater", "40", "--raters-per-item", "3",
               "--human-quality", "1.0", "--judge-quality", "0.5", "--replicates", "100", "--seed", "4")
    stated = result.plan.stated
    assert f"chance to pass: {100 * stated.power:.0f} % (± {100 * stated.se:.1f} %: the Monte-Carlo " \
        "standard error of 100 replicates)" in text


def test_from_pilot_takes_the_design_and_qualities_of_the_ratings(pilot_study):
    text = run("story", "--from-pilot", "--replicates", "20")
    assert "pilot: 4 raters, a median 12 ratings (one item on one question) per rater and 4 raters per item" in text
    assert "(from 12 (item, question) pairs rated by 2 or more raters); the judge “gpt”: noise sd" in text
    assert "(from the 12 pairs it labelled)" in text
    # Eighth review: "noise sd" is defined, with how the pilot measures a human's and the judge's (study_pilot).
    assert ("\nnoise sd: the standard deviation, in scale points, of the normal noise the simulation adds to an "
            "item's true score in each rating (then rounded and clipped to the scale); the pilot measures a human's as "
            "the root of half the mean squared difference between two humans' scores of the same item on the same "
            "question, and the judge's as the root of the mean squared difference between its label (the mean of its "
            "samples) and each human score, less a human's noise variance (the human raters' own spread)\n") in text
    # 12 items per rater is under the test's 30: the stated design gives no verdict, which is said in its place.
    assert ("chance to pass: no verdict with 4 raters x 12 ratings per rater, 4 raters per item: the test needs at "
            "least 3 raters with 30 ratings (one item on one question) each") in text
    assert "chance to pass: 0 %" not in text


def test_without_a_pilot_the_defaults_are_used_and_said(story_study):
    text = run("story", "--replicates", "20")
    assert "with 10 raters x 50 ratings per rater, 3 raters per item" in text
    assert "judge quality: as good as a human" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nope",), "no study 'nope'"),
        (("story", "--raters-per-item", "1"), "raters per item must be between 2"),
        (("story", "--raters", "3", "--raters-per-item", "4"), "raters per item must be between 2 and the number"),
        (("story", "--items-per-rater", "0"), "items per rater must be at least 1"),
        (("story", "--scoring", "accuracy", "--judge-quality", "1.5"), "the judge accuracy must be between 0 and 1"),
        (("story", "--human-quality", "-1"), "the human noise"),
        (("story", "--epsilon", "0"), "epsilon must be strictly between 0 and 1"),
        (("story", "--replicates", "0"), "replicates must be between 1 and 5000"),
        (("story", "--from-pilot"), "has no human ratings to use as a pilot"),
    ],
)
def test_bad_values_are_clear_command_errors(story_study, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)


def test_a_pilot_without_an_item_rated_twice_is_refused(story_study, tmp_path):
    import_long(story_study, [(f"human-{i}", "human", "relevance", "human", f"r{i}", 3) for i in range(5)], tmp_path)
    with pytest.raises(CommandError, match="no item rated by two humans"):
        run("story", "--from-pilot")


def test_an_unknown_pilot_pool_is_refused(pilot_study):
    with pytest.raises(CommandError, match="no LLM pool 'claude'"):
        run("story", "--from-pilot", "--pool", "claude")


# The review's study (issue 25): 6 items in groups "human" and "gpt2", 3 raters who rate every item on the 4
# questions, and a judge. A rater gives 24 ratings over all groups, 12 within one group.
GROUPS = ("human", "gpt2")
ITEMS_PER_GROUP = 3


def grouped_rows(study, raters_of_group):
    keys = [q.key for q in study.questions.order_by("order", "id")]
    rows = []
    for group in GROUPS:
        for i in range(ITEMS_PER_GROUP):
            for qi, key in enumerate(keys):
                rows += [(f"{group}-{i}", group, key, "human", rater, 1 + (i + qi + r * (i % 2)) % 5)
                         for r, rater in enumerate(raters_of_group[group])]
                rows.append((f"{group}-{i}", group, key, "gpt", "0", 1 + (i + qi + 1) % 5))
    return rows


@pytest.fixture
def grouped_study(story_study, tmp_path):
    import_long(story_study, grouped_rows(story_study, {g: ["r0", "r1", "r2"] for g in GROUPS}), tmp_path)
    return story_study


def test_with_groups_the_pilot_counts_a_raters_ratings_within_one_group_as_the_test_does(grouped_study):
    n_questions = grouped_study.questions.count()
    pilot = study_pilot(study=grouped_study, scoring="neg_rmse", levels=5)
    assert (pilot.raters, pilot.items_per_rater, pilot.raters_per_item, pilot.groups) == (
        3, ITEMS_PER_GROUP * n_questions, 3, 2)
    design = alt_test_plan_for_study(study=grouped_study, from_pilot=True, replicates=5).design
    assert design.items_per_rater == ITEMS_PER_GROUP * n_questions == 12  # not 24, the count over all groups
    # The verdict's "all questions" rows, one per group, count the same 12 for every rater (under the test's 30,
    # each rater is skipped with a note giving the count).
    rows = study_analysis(study=grouped_study, options=AnalysisOptions(n_boot=20)).alt_test
    pooled = [row for row in rows if row.question == "(all)"]
    assert sorted(row.group for row in pooled) == sorted(GROUPS)
    counted = [re.fullmatch(r"(r\d) gave (\d+) usable ratings; the test needs 30: skipped", note)
               for row in pooled for note in row.test.notes]
    assert sorted(m.group(1) for m in counted if m) == ["r0", "r0", "r1", "r1", "r2", "r2"]
    assert {int(m.group(2)) for m in counted if m} == {design.items_per_rater}


def test_with_groups_rated_by_different_raters_the_pilot_counts_the_raters_of_one_group(story_study, tmp_path):
    import_long(story_study, grouped_rows(story_study, {"human": ["r0", "r1", "r2"], "gpt2": ["r3", "r4", "r5"]}),
                tmp_path)
    pilot = study_pilot(study=story_study, scoring="neg_rmse", levels=5)
    assert (pilot.raters, pilot.items_per_rater, pilot.raters_per_item) == (3, 12, 3)  # not 6 raters


def test_a_pilot_whose_groups_have_a_median_of_one_rater_is_refused(story_study, tmp_path):
    # "human" has two raters, "gpt2" one: the median of 1.5 raters per group rounds down to 1, which no test can use.
    import_long(story_study, grouped_rows(story_study, {"human": ["r0", "r1"], "gpt2": ["r2"]}), tmp_path)
    with pytest.raises(CommandError, match="a median of 1 human rater per group"):
        run("story", "--from-pilot")


def test_the_plan_says_the_design_is_one_groups_and_names_the_unit(grouped_study):
    text = "\n".join(plan_lines(alt_test_plan_for_study(study=grouped_study, from_pilot=True, replicates=5)))
    assert ("pilot: a median 3 raters per group, a median 12 ratings (one item on one question) per rater within one "
            "group (the verdict tests the 2 groups apart) and 3 raters per item") in text
    assert "the verdict tests each of the 2 groups (“gpt2”, “human”) apart" in text
    assert "chance to pass: no verdict with 3 raters x 12 ratings per rater within one group, 3 raters per item" in text
    assert "median 24" not in text and "x 24" not in text  # the count over all groups is nowhere


@pytest.mark.parametrize(
    ("scoring", "words"),
    [("neg_rmse", "scored by negative RMSE against the other raters (higher = closer; 0 = identical), a 5-point scale"),
     ("accuracy", "scored by accuracy against the other raters (the share who gave the same label; higher = closer), "
                  "5 categories")],
)
def test_the_command_names_the_scoring_in_words_never_its_key(grouped_study, scoring, words):
    text = "\n".join(plan_lines(alt_test_plan_for_study(study=grouped_study, from_pilot=True, scoring=scoring,
                                                       replicates=5)))
    assert words in text
    assert "neg_rmse" not in text
    assert ("\nnoise sd: the standard deviation" in text) is (scoring == "neg_rmse")  # accuracy has no noise sd
    assert run("story", "--scoring", scoring, "--replicates", "5").count(words) == 1


@pytest.mark.parametrize(
    ("power", "se", "replicates", "digits", "words"),
    [
        (0.5, 0.05, 100, 0, "± 5 %: the Monte-Carlo standard error of 100 replicates"),
        (0.94, 0.0237, 100, 1, "± 2.4 %: the Monte-Carlo standard error of 100 replicates"),
        # 1 - 0.05^(1/100) = 2.95 %: "100 % ± 0 %" would read as certain.
        (1.0, 0.0, 100, 0, "all 100 replicates passed: at 95 % confidence the chance is at least 97 %"),
        # 1 - 0.05^(1/20) = 13.9 %
        (0.0, 0.0, 20, 1, "none of 20 replicates passed: at 95 % confidence the chance is at most 13.9 %"),
    ],
)
def test_a_simulated_chance_says_what_it_may_be_off_by(power, se, replicates, digits, words):
    from evalhub.analysis.planning.alt_test_plan import chance_error
    from evalhub.stats.alt_test_power import Design, Power

    assert chance_error(Power(Design(10, 50, 3), power, se, replicates), digits) == words


def test_the_best_chance_is_the_highest_judged_point_of_a_grid_or_a_plain_no_verdict_reason():
    """Issue 25, fourth review U1: a grid not reaching 80 % says the best chance reached, and where."""
    from evalhub.analysis.planning.alt_test_plan import _best, best_words
    from evalhub.stats.alt_test_power import Design, Power

    low = Power(Design(3, 30, 3), power=0.10, se=0.03, replicates=100)
    high = Power(Design(3, 300, 3), power=0.62, se=0.05, replicates=100)
    no_verdict = Power(Design(3, 12, 3), power=0.0, se=0.0, replicates=100)
    assert _best([low, high, no_verdict]) == high
    assert best_words(high, "ratings per rater") == (
        "the best chance reached is 62 % (± 5 %: the Monte-Carlo standard error of 100 replicates), "
        "at 3 raters × 300 ratings per rater")
    assert _best([no_verdict]) is None
    assert best_words(None, "ratings per rater").startswith("no point of the grid gives a verdict: the test needs 30 ")
