"""`plan_alt_test`: the plan from stated values or from a pilot (a study's ratings), its output and its errors."""
from __future__ import annotations

import io
import itertools
import math
import re

import pytest
from django.core.management import CommandError, call_command

from evalhub.analysis.planning.alt_test_plan import alt_test_plan_for_study, study_pilot
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
    assert "model: neg_rmse, 5 values; human noise sd 1, judge noise sd 0.5; epsilon 0.15" in text
    assert "power: " in text and "with 6 raters x 40 ratings per rater, 3 raters per item (80 items)" in text
    assert "ratings per rater for 80 %: " in text and "raters for 80 %: " in text
    assert "grid: ratings per rater 30, 40" in text
    assert "100 replicates per design point, seed 4" in text
    again = run("story", "--raters", "6", "--items-per-rater", "40", "--raters-per-item", "3",
                "--human-quality", "1.0", "--judge-quality", "0.5", "--replicates", "100", "--seed", "4")
    # The same seed gives the same figures; only the last line's wall time ("..., 0.01 s") may differ.
    assert without_timing(text) == without_timing(again)


def test_the_command_agrees_with_the_service(pilot_study):
    result = alt_test_plan_for_study(study=pilot_study, raters=6, items_per_rater=40, raters_per_item=3,
                                     human_quality=1.0, judge_quality=0.5, replicates=100, seed=4)
    text = run("story", "--raters", "6", "--items-per-rater", "40", "--raters-per-item", "3",
               "--human-quality", "1.0", "--judge-quality", "0.5", "--replicates", "100", "--seed", "4")
    assert f"power: {result.plan.stated.power:.0%} ± {result.plan.stated.se:.1%}" in text


def test_from_pilot_takes_the_design_and_qualities_of_the_ratings(pilot_study):
    text = run("story", "--from-pilot", "--replicates", "20")
    assert "pilot: 4 raters, a median 12 ratings (one item on one question) per rater and 4 raters per item" in text
    assert "judge 'gpt'" in text
    # 12 items per rater is under the test's 30: the stated design gives no verdict, which is said.
    assert "power: 0% ± 0.0% with 4 raters x 12 ratings per rater" in text
    assert "note: the test needs at least 3 raters with 30 ratings (one item on one question) each" in text


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
