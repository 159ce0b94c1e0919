"""PPI in the analysis (evalhub.analysis.ppi_rows): the rows where the human-rated items are a random subset,
the note where they are not, and docs/analysis.md's worked example reproduced through ``analyze``."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from annotations.studies import StudySpecError
from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.planning.human_subset import study_human_subset_set
from evalhub.analysis.ppi_rows import (
    EVERY_ITEM,
    FEW_LABELLED,
    NO_RATINGS,
    NOT_DECLARED,
    WITHHELD_BELOW,
    few_labelled_note,
)
from tests.evalhub.factories import import_long
from tests.support.ppi_study import JUDGE, summeval_study

OPTIONS = AnalysisOptions(n_boot=20)


def analyze_json(slug: str) -> dict:
    out = io.StringIO()
    call_command("analyze", slug, "--format", "json", "--n-boot", "20", stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def worked_example(db, researcher, tmp_path):
    """(the study with a random 20 % human-rated, the one with every item human-rated)."""
    return (summeval_study(slug="summeval-20", owner=researcher, tmp_path=tmp_path),
            summeval_study(slug="summeval-all", owner=researcher, tmp_path=tmp_path, share=None))


def test_the_worked_example_reproduces_the_docs_numbers_and_covers_the_all_human_difference(worked_example):
    full = analyze_json("summeval-all")
    truth = next(w for w in full["welch"] if w["pool"] == "human")["mean_diff"]
    assert truth == pytest.approx(-1.8833, abs=5e-5)
    result = analyze_json("summeval-20")
    assert "ppi_note" not in result
    [row] = result["ppi_differences"]
    assert (row["question"], row["pool"], row["groups"]) == ("coherence", JUDGE, ["M11", "M23"])
    assert (row["difference"], row["ci_low"], row["ci_high"]) == pytest.approx((-1.6827, -2.1053, -1.2600), abs=5e-5)
    assert row["ci_high"] - row["ci_low"] == pytest.approx(0.8453, abs=5e-5)
    assert row["ci_low"] <= truth <= row["ci_high"]
    means = {r["group"]: r for r in result["ppi"]}
    assert sorted(means) == ["M11", "M23"]
    humans_only = [means[g]["humans_only_ci_high"] - means[g]["humans_only_ci_low"] for g in ("M11", "M23")]
    ppi = [means[g]["ci_high"] - means[g]["ci_low"] for g in ("M11", "M23")]
    # The humans-only difference's normal interval is 0.9005 wide: the two groups' half-widths in quadrature.
    assert (sum(w**2 for w in humans_only) ** 0.5) == pytest.approx(0.9005, abs=5e-5)
    assert all(p < h for p, h in zip(ppi, humans_only, strict=True))
    for g in ("M11", "M23"):
        assert (means[g]["n_labelled"], means[g]["n_unlabelled"]) == (20, 80)
        assert means[g]["effective_n"] == pytest.approx(means[g]["n_labelled"] + means[g]["extra_items"])
        assert 0 < means[g]["lambda"] < 1
    assert {(g, round(means[g]["extra_items"], 1)) for g in means} == {("M11", 3.2), ("M23", 2.1)}
    assert {(g, round(means[g]["effective_n"], 1), round(means[g]["lambda"], 2)) for g in means} == {
        ("M11", 23.2, 0.54), ("M23", 22.1, 0.35)}
    humans_only_difference = means["M11"]["humans_only_estimate"] - means["M23"]["humans_only_estimate"]
    assert humans_only_difference == pytest.approx(-1.600, abs=5e-4)
    half = sum(w**2 for w in humans_only) ** 0.5 / 2
    assert (humans_only_difference - half, humans_only_difference + half) == pytest.approx((-2.050, -1.150), abs=5e-4)
    # "20 human-rated items per group with gpt-4o are worth about 22.7 rated by people alone"
    assert 20 * (0.9005 / (row["ci_high"] - row["ci_low"])) ** 2 == pytest.approx(22.7, abs=0.05)


def test_the_table_format_prints_the_ppi_rows_and_the_difference(worked_example):
    out = io.StringIO()
    call_command("analyze", "summeval-20", "--format", "table", "--n-boot", "20", stdout=out)
    text = out.getvalue()
    assert "== Prediction-powered inference: human means with the judge's help" in text
    # Groups by their titles, never bare beside a pool (review: "human" beside "Human raters").
    assert "coherence  group “M11”  gpt-4o  2.47 [2.13, 2.81]  2.42 [2.10, 2.74]  0.54    20/80             23.2" in text
    assert "coherence  “M11” − “M23”  gpt-4o  -1.68 [-2.11, -1.26]" in text


def test_a_study_without_a_random_subset_gets_the_note_and_no_rows(worked_example):
    _, full = worked_example
    for study in worked_example:
        study_human_subset_set(study=study, setting={})
    result = study_analysis(study=full, options=OPTIONS)
    assert (result.ppi, result.ppi_differences, result.ppi_note) == (None, None, NOT_DECLARED)
    assert "ppi" not in result.to_json() and result.to_json()["ppi_note"] == NOT_DECLARED


def test_every_item_human_rated_gets_the_note_that_ppi_adds_nothing(worked_example):
    _, full = worked_example
    study_human_subset_set(study=full, setting={"declared_random": True})
    result = study_analysis(study=full, options=OPTIONS)
    assert (result.ppi, result.ppi_note) == (None, EVERY_ITEM)


def test_a_drawn_subset_is_stratified_seeded_recorded_and_then_fixed(story_study, tmp_path):
    rows = [(f"{g}-{k}", g, "grammaticality", JUDGE, "0", 1 + k % 5) for g in ("human", "gpt2") for k in range(30)]
    import_long(story_study, rows, tmp_path)
    draw = study_human_subset_set(study=story_study, setting={"share": 0.2, "seed": 7})
    assert draw is not None and draw.groups == {"human": (6, 30), "gpt2": (6, 30)}
    items = story_study.items.all()
    first = sorted(items.filter(in_human_subset=True).values_list("external_id", flat=True))
    assert set(items.values_list("inclusion_probability", flat=True)) == {0.2}
    study_human_subset_set(study=story_study, setting={"count": 3, "seed": 7})
    assert story_study.items.filter(in_human_subset=True).count() == 6
    study_human_subset_set(study=story_study, setting={"share": 0.2, "seed": 7})
    assert sorted(items.filter(in_human_subset=True).values_list("external_id", flat=True)) == first
    assert study_analysis(study=story_study, options=OPTIONS).ppi_note == NO_RATINGS
    human_rows = [(i, g, "grammaticality", "human", rater, 2 + (len(i) + n) % 3)
                  for n, (i, g) in enumerate(items.filter(in_human_subset=True).values_list("external_id", "group"))
                  for rater in ("r1", "r2")]
    import_long(story_study, human_rows, tmp_path, name="humans.csv")
    result = study_analysis(study=story_study, options=OPTIONS)
    assert result.ppi_note is None and result.ppi is not None and result.ppi_differences is not None
    rated = [r for r in result.ppi if r.question == "grammaticality"]
    assert sorted((r.group, r.n_labelled, r.n_unlabelled) for r in rated) == [("gpt2", 6, 24), ("human", 6, 24)]
    assert all(r.estimate is not None for r in rated)
    with pytest.raises(StudySpecError, match="already rated"):
        study_human_subset_set(study=story_study, setting={"share": 0.5})
    assert story_study.items.filter(in_human_subset=True).count() == 12
    import_long(story_study, [("late", "gpt2", "grammaticality", JUDGE, "0", 4)], tmp_path, name="late.csv")
    study_human_subset_set(study=story_study, setting={"share": 0.2, "seed": 7})  # saved again: no redraw
    assert sorted(items.filter(in_human_subset=True).values_list("external_id", flat=True)) == first
    late = study_analysis(study=story_study, options=OPTIONS).ppi_note
    assert late is not None and late.startswith("1 item was added after the human subset was drawn")
    story_study.items.filter(external_id="late").delete()
    outside = items.filter(in_human_subset=False).values_list("external_id", "group").first()
    import_long(story_study, [(*outside, "grammaticality", "human", "r1", 3)], tmp_path, name="hand.csv")
    result = study_analysis(study=story_study, options=OPTIONS)
    assert result.ppi is None and result.ppi_note is not None
    assert result.ppi_note.startswith("1 human-rated item lies outside the drawn random subset")


@pytest.mark.parametrize("setting, message", [
    ({"share": 0}, "share must be a number above 0"), ({"share": 1.5}, "share must be"), ({"count": 0}, "count must"),
    ({"share": 0.2, "count": 3}, "exactly one of share and count"), ({"seed": 1}, "exactly one"),
    ({"share": 0.2, "seed": -1}, "seed must"), ({"declared_random": False}, "declared_random takes true"),
    ({"share": 0.2, "colour": 1}, "unknown key"), ([0.2], "must be an object"), ({"share": True}, "share must"),
])
def test_a_bad_setting_is_refused_and_changes_nothing(story_study, setting, message):
    with pytest.raises(StudySpecError, match=message):
        study_human_subset_set(study=story_study, setting=setting)
    story_study.refresh_from_db()
    assert story_study.human_subset == {}


@pytest.mark.parametrize(("share", "withheld"), [(0.05, True), (0.15, False)])
def test_few_human_rated_items_carry_a_note_and_below_ten_the_page_withholds_the_intervals(
        db, researcher, tmp_path, client, share, withheld):
    # Issue 27 review: normal intervals on 2-5 human-rated items covered 58-80 %, shown as "95 %" with no word.
    study = summeval_study(slug=f"summeval-{int(share * 100)}", owner=researcher, tmp_path=tmp_path, share=share)
    result = study_analysis(study=study, options=OPTIONS)
    assert result.ppi
    for row in result.ppi:
        assert row.n_labelled < FEW_LABELLED
        assert row.notes["interval"] == few_labelled_note(row.n_labelled)
        assert row.estimate is not None and row.ci_low is not None  # the JSON keeps the figures
        assert (row.n_labelled < WITHHELD_BELOW) == withheld
    [difference] = result.ppi_differences
    assert "few human-rated items" in difference.notes["interval"] and difference.difference is not None
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/").content.decode()
    assert page.count("few human-rated items (n = ") >= 3
    assert ("no interval shown below 10" in page) == withheld
    shown = f"{result.ppi[0].estimate:.2f} [{result.ppi[0].ci_low:.2f}"
    assert (shown in page) != withheld


def test_the_worked_example_has_enough_human_rated_items_for_no_note(worked_example):
    study, _ = worked_example
    result = study_analysis(study=study, options=OPTIONS)
    assert all(row.n_labelled >= FEW_LABELLED and "interval" not in row.notes for row in result.ppi)
