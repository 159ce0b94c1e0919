"""Pairwise studies in the analysis and the dashboard: A/B choices are nominal data, so alpha and its
interval are nominal, each judge pool is compared with the human majority choice, and Kendall's tau
and Welch's test (which need ranks and means) are left out with the reason."""
from __future__ import annotations

import math

import numpy as np
import pytest

from annotations.models import HumanRating, Item, Rater
from annotations.studies import study_create_from_template
from evalhub import stats
from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.result import MajorityRow
from evalhub.analysis.text_report import text_report
from evalhub.imports.exports import TABLE_COLUMNS, csv_lines, table_rows
from llmjudge.models import Judge
from tests.evalhub.factories import live_run

NAN = math.nan


@pytest.mark.parametrize(("matrix", "expected"), [
    ([[1, 1, 2]], [1.0]),
    ([[2, 2, 1]], [2.0]),
    ([[1, 2, NAN]], [NAN]),  # a 1-1 split has no majority
    ([[NAN, NAN, NAN]], [NAN]),
    ([[3, 3, 1], [1, 2, 3]], [3.0, NAN]),  # three-way tie with a tie option
    ([[2, NAN, NAN]], [2.0]),
])
def test_majority_choice_is_the_most_frequent_value_or_nan_when_tied(matrix, expected):
    np.testing.assert_array_equal(stats.majority_choice(matrix), np.array(expected))


def test_agreement_pct_counts_equal_values_where_both_are_defined():
    assert stats.agreement_pct([1, 2, 2, NAN], [1, 1, 2, 2]).value == pytest.approx(200 / 3)
    undefined = stats.agreement_pct([NAN], [1])
    assert undefined.value is None and undefined.reason == "no item has a value in both"


@pytest.fixture
def rated_pairs(researcher):
    """Four pairs; three raters. Human majority: A, A, B, (no majority on p4: 1-1 with one missing)."""
    study = study_create_from_template(slug="pairs", template="story-pairwise", owner=researcher)
    question = study.questions.get()
    items = [Item.objects.create(study=study, external_id=f"p{n}", group="pairs", position=n,
                                 fields={"prompt": "p", "response_a": f"a{n}", "response_b": f"b{n}"})
             for n in range(1, 5)]
    human = {"p1": [1, 1, 2], "p2": [1, 1, 1], "p3": [2, 2, 1], "p4": [1, 2, None]}
    raters = [Rater.objects.create(study=study, external_id=f"r{n}") for n in range(3)]
    for item in items:
        for rater, score in zip(raters, human[item.external_id], strict=True):
            if score is not None:
                HumanRating.objects.create(rater=rater, item=item, question=question, score=score)
    # Judge majority: A (agrees), B (disagrees), B (agrees), A (no human majority: left out).
    live_run(study, "judge", [
        (item, "overall", sample, score, "ok")
        for item, scores in {"p1": [1, 1, 2], "p2": [2, 2, 1], "p3": [2, 2, 2], "p4": [1, 1, 1]}.items()
        for sample, score in enumerate(scores)
    ])
    return study


@pytest.mark.django_db
def test_a_pairwise_study_is_analysed_as_nominal_data(rated_pairs):
    result = study_analysis(study=rated_pairs, options=AnalysisOptions(n_boot=50))

    assert result.settings.measurement == "nominal" and result.settings.ci_level == "nominal"
    assert result.settings.value_domain == (1.0, 2.0)
    human = next(c for c in result.cells if c.pool == "human")
    matrix = [[1, 1, 2], [1, 1, 1], [2, 2, 1], [1, 2, NAN]]
    assert human.alpha["nominal"] == pytest.approx(stats.krippendorff_alpha(matrix, level="nominal").value)
    assert human.alpha_ci95 is not None
    assert result.majority == (MajorityRow(
        question="overall", group="pairs", pool="judge", agreement_pct=pytest.approx(200 / 3),
        n_items=3, n_agree=2, human_no_majority=1, pool_no_majority=0, notes={}),)
    assert result.kendall == result.welch == result.pairwise_kendall == ()
    assert set(result.not_computed) == {"kendall", "welch", "pairwise_kendall"}
    assert "nominal" in result.not_computed["kendall"]


@pytest.mark.django_db
def test_the_majority_table_is_exported_and_reported(rated_pairs):
    result = study_analysis(study=rated_pairs, options=AnalysisOptions(n_boot=20))

    rows = list(table_rows(result, "majority"))
    assert rows[0] == TABLE_COLUMNS["majority"]
    assert rows[1][:6] == ("overall", "pairs", "judge", pytest.approx(200 / 3), 3, 2)
    Judge.objects.filter(name="judge").update(name="=judge")  # a hostile pool name stays text in the CSV
    csv_text_ = "".join(csv_lines(table_rows(study_analysis(study=rated_pairs, options=AnalysisOptions(n_boot=20)),
                                             "majority")))
    assert ",'=judge," in csv_text_ and ",=judge," not in csv_text_
    report = text_report(result)
    assert "Krippendorff's alpha (nominal)" in report
    assert "each pool's majority choice vs the human majority choice" in report and "2/3" in report
    assert "kendall: not computed (pairwise study" in report and "Kendall's tau-b" not in report


@pytest.mark.django_db
def test_the_dashboard_shows_the_majority_table_and_says_why_kendall_and_welch_are_absent(client, rated_pairs):
    client.force_login(rated_pairs.owner)
    html = client.get(f"/studies/{rated_pairs.slug}/").content.decode()

    assert 'id="majority"' in html and "67%" in html and "2 of 3 items" in html
    assert 'id="not-computed"' in html and "A/B choices are nominal" in html
    assert 'id="kendall"' not in html and 'id="welch"' not in html and 'id="pairwise"' not in html


@pytest.mark.django_db
def test_a_likert_study_keeps_its_ordinal_tables_and_has_no_majority_table(client, story_study):
    result = study_analysis(study=story_study, options=AnalysisOptions(n_boot=20))
    assert result.settings.measurement == "ordinal" and result.majority == ()
    assert result.not_computed is None and "not_computed" not in result.to_json()
