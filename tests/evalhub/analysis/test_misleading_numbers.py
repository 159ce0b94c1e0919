"""A note wherever a number could mislead: ICC on part of the items, ratio alpha on a scale with
negatives, a bootstrap that dropped replicates, and alpha with one rater. Each on data built to trigger it."""
from __future__ import annotations

import csv
import io

import krippendorff
import numpy as np
import pytest

from evalhub import stats
from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.text_report import text_report
from evalhub.imports.exports import csv_lines, table_rows
from evalhub.pages.dashboard import dashboard_context
from tests.evalhub.factories import import_long

NAN = np.nan
# Scores on -2..2: the package's ratio alpha is a number, interval alpha says the raters disagree.
SYMMETRIC = np.array([[-2.0, 2.0], [2.0, -2.0], [-1.0, 1.0], [1.0, -1.0], [0.0, 0.0]])


def _cell(result, question, group, pool):
    return next(c for c in result.cells if (c.question, c.group, c.pool) == (question, group, pool))


# ---------------------------------------------------------------------------
# The statistics


def test_ratio_alpha_is_undefined_with_the_reason_where_the_package_reports_a_meaningless_number():
    package = krippendorff.alpha(SYMMETRIC.T, level_of_measurement="ratio")
    assert np.isfinite(package)  # what the package reports, and this module deliberately does not

    ratio = stats.krippendorff_alpha(SYMMETRIC, level="ratio")
    assert ratio.value is None
    assert ratio.reason == "ratio alpha needs values of 0 or more and this scale includes -2: use interval alpha"
    levels = stats.alpha_all_levels(SYMMETRIC)
    assert levels["ratio"] == ratio
    assert levels["interval"].value == pytest.approx(
        krippendorff.alpha(SYMMETRIC.T, level_of_measurement="interval"), abs=1e-12)
    ci = stats.alpha_bootstrap_ci(SYMMETRIC, level="ratio", n_boot=20)
    assert (ci.low, ci.high, ci.n_valid, ci.reason) == (None, None, 0, ratio.reason)
    alphas, ci = stats.alpha_with_ci(SYMMETRIC, ci_level="ratio", n_boot=20)
    assert alphas["ratio"] == ratio and ci.reason == ratio.reason
    # A negative value alone is enough; zero, the origin of a ratio scale, is not (issue 25).
    assert stats.krippendorff_alpha(np.array([[-1.0, 1.0], [2.0, 2.0], [1.0, 1.0]]), level="ratio").value is None
    assert stats.ratio_scale_reason([1, 2, 3]) is None
    assert stats.ratio_scale_reason([0, 1, 2, 3]) is None


def test_alpha_with_one_rater_says_so():
    one_rater = np.array([[1.0], [3.0], [4.0]])
    for result in stats.alpha_all_levels(one_rater).values():
        assert result.reason == "only one rater: agreement needs at least two (no item has 2 or more ratings)"
    # Two raters who never rated the same item: the reason is the items, not the raters.
    apart = np.array([[1.0, NAN], [NAN, 5.0]])
    assert stats.krippendorff_alpha(apart, level="ordinal").reason == (
        "no pairable item: no item has 2 or more ratings")


def test_icc_counts_the_complete_items_it_used():
    matrix = np.array([[1.0, 2.0, 2.0], [4.0, 5.0, 4.0], [3.0, NAN, 3.0], [NAN, NAN, 2.0], [2.0, 2.0, 3.0]])
    result = stats.icc_one_way(matrix)
    assert (result.n_items, result.n_raters, result.n_rated_items) == (3, 3, 5)
    assert (result.icc1, result.icc1k) == stats.icc1_and_icc1k(matrix) == (stats.icc1(matrix), stats.icc1k(matrix))
    assert result.icc1 == stats.icc1(matrix[[0, 1, 4]])


def test_the_bootstrap_counts_the_replicates_it_kept():
    # Two of three items agree on 1: a replicate drawing only those has no variation and is dropped.
    ci = stats.alpha_bootstrap_ci(np.array([[1.0, 1.0], [1.0, 1.0], [2.0, 2.0]]), level="ordinal", n_boot=200)
    assert ci.n_boot == 200 and 0 < ci.n_valid < 200


# ---------------------------------------------------------------------------
# The analysis: the notes reach the JSON, the CSV and the text report


@pytest.mark.django_db
def test_the_analysis_notes_icc_on_part_of_the_items_and_the_bootstrap_replicates_dropped(story_study, tmp_path):
    # gpt2/relevance: three raters, but one item lacks a rating -> ICC on 3 of 4 items.
    rows = [(f"g{i}", "gpt2", "relevance", "human", f"r{r}", 1 + (i + r) % 5) for i in range(4) for r in range(3)
            if (i, r) != (3, 2)]
    # human/relevance: two items agree on 1, one on 2, one splits 1-2 -> replicates without variation are
    # dropped, and the interval keeps a width.
    rows += [(f"h{i}", "human", "relevance", "human", f"r{r}", score) for i, pair in enumerate(((1, 1), (1, 1),
             (2, 2), (1, 2))) for r, score in enumerate(pair)]
    import_long(story_study, rows, tmp_path)

    result = study_analysis(study=story_study, options=AnalysisOptions(n_boot=200, questions=("relevance",)))

    partial = _cell(result, "relevance", "gpt2", "human")
    assert (partial.n_items, partial.icc_n_items) == (4, 3)
    assert partial.icc1 is not None
    # (3 complete items are also below the minimum: the too-few-items note comes first, as alpha's)
    assert partial.notes["icc"] == ("too few items (n = 3): ICC uses the 3 of 4 items rated by all 3 raters "
                                    "(complete items only)")
    dropped = _cell(result, "relevance", "human", "human")
    assert dropped.alpha_ci_n_boot == 200 and 0 < dropped.alpha_ci_n_valid < 200
    assert dropped.alpha_ci95 is not None
    assert dropped.notes["alpha_ci95"] == (
        f"from {dropped.alpha_ci_n_valid} of 200 bootstrap replicates: {200 - dropped.alpha_ci_n_valid} "
        "had no variation (alpha undefined) and were dropped")
    for cell in result.cells:  # the note is there exactly when a defined interval dropped replicates
        dropped_some = cell.alpha_ci95 is not None and cell.alpha_ci_n_valid < cell.alpha_ci_n_boot
        assert ("alpha_ci95" in cell.notes and cell.alpha_ci95 is not None) == dropped_some

    rows_csv = list(csv.DictReader(io.StringIO("".join(csv_lines(table_rows(result, "cells"))))))
    by_group = {r["group"]: r for r in rows_csv}
    assert (by_group["gpt2"]["icc_n_items"], by_group["human"]["alpha_ci_n_valid"]) == (
        "3", str(dropped.alpha_ci_n_valid))
    assert "icc: too few items (n = 3): ICC uses the 3 of 4 items" in by_group["gpt2"]["notes"]
    report = text_report(result)
    notes = dashboard_context(result)["undefined"]
    assert isinstance(notes, list)
    assert "relevance / group “gpt2” / Human raters: ICC — too few items (n = 3): ICC uses the 3 of 4 items rated " \
           "by all 3 raters (complete items only)" in notes
    assert all(line in report for line in notes)  # the text report's Notes are the page's (issue 25 review)
    # Alpha rests on 4 items: withheld, so is its interval, and the note on the interval's replicates is not
    # listed as if the interval were shown (the JSON and CSV keep it).
    assert "too few items (n = 4)" in dropped.notes["alpha"]
    assert not any("bootstrap replicates" in line for line in notes)


@pytest.mark.django_db
def test_the_analysis_nulls_ratio_alpha_only_on_a_scale_with_negative_points(story_study, tmp_path):
    rows = [(f"g{i}", "gpt2", "relevance", "human", f"r{r}", 1 + (i * (r + 1)) % 5)
            for i in range(5) for r in range(3)]
    import_long(story_study, rows, tmp_path)
    options = AnalysisOptions(n_boot=20)
    before = _cell(study_analysis(study=story_study, options=options), "relevance", "gpt2", "human")
    assert before.alpha["ratio"] is not None  # a scale of 1..5: ratio alpha is reported

    # A scale from 0: zero is the origin of a ratio scale, ratio alpha stays (issue 25).
    type(story_study).objects.filter(pk=story_study.pk).update(scale_min=0)
    story_study.refresh_from_db()
    from_zero = _cell(study_analysis(study=story_study, options=options), "relevance", "gpt2", "human")
    assert from_zero.alpha["ratio"] == before.alpha["ratio"] and "alpha.ratio" not in from_zero.notes

    type(story_study).objects.filter(pk=story_study.pk).update(scale_min=-1)
    story_study.refresh_from_db()
    cell = _cell(study_analysis(study=story_study, options=options), "relevance", "gpt2", "human")

    assert cell.alpha["ratio"] is None
    assert cell.notes["alpha.ratio"] == (
        "ratio alpha needs values of 0 or more and this scale includes -1: use interval alpha")
    assert cell.alpha["interval"] == before.alpha["interval"]  # the other levels are untouched


@pytest.mark.django_db
def test_the_ceiling_names_a_raters_interval_of_width_zero_and_keeps_the_values(story_study, tmp_path):
    # 6 items (enough items): the three raters always agree, so each rater's score is 0 on every item (width 0);
    # the judge's samples spread, so its intervals have a width.
    rows = [(f"h{i}", "human", "relevance", "human", f"r{r}", 1 + i % 5) for i in range(6) for r in range(3)]
    rows += [(f"h{i}", "human", "relevance", "judge", str(s), 1 + (i + s) % 5) for i in range(6) for s in range(2)]
    import_long(story_study, rows, tmp_path)

    result = study_analysis(study=story_study, options=AnalysisOptions(n_boot=200, questions=("relevance",)))

    ceiling = next(c for c in result.ceiling if c.group == "human")
    assert [r.rater_ci95 for r in ceiling.raters] == [(0.0, 0.0)] * 3  # JSON keeps the values
    assert not any(n.startswith("too few items") for n in ceiling.notes)
    assert [n for n in ceiling.notes if "no variation" in n] == [
        f"r{r}, rater's score: no variation: the t interval has width 0 (both bounds 0.000)" for r in range(3)]
