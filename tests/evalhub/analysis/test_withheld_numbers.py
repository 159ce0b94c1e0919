"""The third dashboard review of issue 25: a Welch test on too few items or with a side without variation is withheld
as the agreement statistics are (M1); the ceiling CSV leaves "judge better" empty where the page withholds it (M2);
an undefined tau says why in words (U1, U2).

Each case is built from data made to trigger its note; the expected readings were written from the rules of
trust_notes (MIN_ITEMS = 5 items a side; a side whose item means are all equal) before running the code.
"""
from __future__ import annotations

import pytest

from annotations.studies import study_create
from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.text_report import text_report, welch_sentence
from evalhub.imports.exports import TABLE_COLUMNS, table_rows
from evalhub.pages.dashboard import _scatter_legend
from tests.evalhub.factories import import_long

pytestmark = pytest.mark.usefixtures("fresh_cache")


def _study(researcher, slug: str):
    spec = {"title": slug, "llm_template": "Rate:\n{text}\n{question}", "item_fields": ["text"],
            "scale": {"min": 1, "max": 5}, "questions": [{"key": "q", "text": "q?"}]}
    return study_create(slug=slug, spec=spec, owner=researcher)


def _rows(pool: str, group: str, scores: dict[str, list[int]]) -> list[tuple[str, str, str, str, str, int]]:
    """Long rows of one pool and group: human raters r0, r1, ...; an LLM pool's samples 0, 1, ..."""
    prefix = "r" if pool == "human" else ""
    return [(item, group, "q", pool, f"{prefix}{k}", s) for item, row in scores.items() for k, s in enumerate(row)]


def _analyse(study, rows, tmp_path):
    import_long(study, rows, tmp_path)
    return study_analysis(study=study, options=AnalysisOptions(n_boot=200))


def _human_welch(result):
    (row,) = [w for w in result.welch if w.pool == "human"]
    return row


@pytest.mark.django_db
def test_welch_on_three_items_a_side_keeps_t_p_and_d_and_shows_too_few_items_in_their_place(
        researcher, client, tmp_path):
    study = _study(researcher, "welch-three")
    high = {"a1": [5, 4], "a2": [4, 4], "a3": [5, 5]}
    low = {"b1": [1, 2], "b2": [2, 2], "b3": [1, 1]}
    result = _analyse(study, _rows("human", "a", high) + _rows("human", "b", low), tmp_path)
    row = _human_welch(result)
    assert row.test.t is not None and row.test.p is not None and row.test.cohens_d is not None
    assert row.p_adjusted is not None and row.p_adjusted < 0.05  # the value would earn a star
    assert row.notes == {"test": "too few items (n = 3 and 3)"}
    sentence = welch_sentence(row)
    assert "too few items (n = 3 and 3)" in sentence
    assert "p = " not in sentence and "d = " not in sentence and "prefer" not in sentence
    report = text_report(result)
    assert "BH-adjusted p =" not in report
    assert "q / “a” vs “b” / Human raters: Welch's t-test — too few items (n = 3 and 3)" in report
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/").content.decode()
    assert "no test is reported, too few items (n = 3 and 3)" in page
    assert '<li class="withheld">' in page
    assert "over b (BH-adjusted" not in page  # table 1's star and its tooltip


@pytest.mark.django_db
def test_welch_with_a_side_whose_item_means_are_all_equal_says_no_variation(researcher, tmp_path):
    study = _study(researcher, "welch-flat")
    flat = {f"a{i}": [4, 4] for i in range(5)}
    varied = {"b0": [1, 2], "b1": [2, 2], "b2": [1, 1], "b3": [3, 2], "b4": [2, 1]}
    result = _analyse(study, _rows("human", "a", flat) + _rows("human", "b", varied), tmp_path)
    row = _human_welch(result)
    assert row.test.p is not None
    assert row.notes == {"test": "no variation within “a” (every item mean 4.00)"}
    assert "no variation within “a” (every item mean 4.00)" in welch_sentence(row)


@pytest.mark.django_db
def test_welch_on_five_varied_items_a_side_is_shown(researcher, tmp_path):
    study = _study(researcher, "welch-five")
    high = {"a0": [5, 4], "a1": [4, 4], "a2": [5, 5], "a3": [3, 4], "a4": [4, 5]}
    low = {"b0": [1, 2], "b1": [2, 2], "b2": [1, 1], "b3": [3, 2], "b4": [2, 1]}
    result = _analyse(study, _rows("human", "a", high) + _rows("human", "b", low), tmp_path)
    row = _human_welch(result)
    assert row.notes == {}
    assert "prefer the group “a” over “b”" in welch_sentence(row)
    assert "BH-adjusted p" in welch_sentence(row)


@pytest.mark.django_db
def test_an_undefined_tau_says_in_words_that_the_human_item_means_are_all_equal(researcher, tmp_path):
    study = _study(researcher, "tau-flat")
    humans = {"i1": [4, 4], "i2": [5, 3], "i3": [3, 5]}  # every item mean 4
    judge = {"i1": [1], "i2": [3], "i3": [5]}
    result = _analyse(study, _rows("human", "g", humans) + _rows("judge", "g", judge), tmp_path)
    (row,) = result.kendall
    assert row.tau is None
    reason = "the human raters' item means are all equal (4.00) on the 3 items"
    assert row.notes == {"tau": reason}
    assert _scatter_legend("g", row) == f"group “g” (τ undefined: {reason})"
    report = text_report(result)
    assert reason in report
    assert "x is constant" not in report and "p undefined" not in report


def _ceiling_csv(result) -> list[dict[str, object]]:
    header, *rows = list(table_rows(result, "ceiling"))
    assert header == TABLE_COLUMNS["ceiling"]
    return [dict(zip(header, r, strict=True)) for r in rows]


@pytest.mark.django_db
def test_the_ceiling_csv_leaves_judge_better_empty_where_the_page_withholds_it(researcher, tmp_path):
    study = _study(researcher, "ceiling-three")
    humans = {"i1": [1, 2, 1], "i2": [4, 5, 4], "i3": [3, 3, 2]}
    judge = {"i1": [5], "i2": [1], "i3": [3]}
    result = _analyse(study, _rows("human", "g", humans) + _rows("judge", "g", judge), tmp_path)
    (ceiling,) = result.ceiling
    assert ceiling.notes[0] == "too few items (n = 3)"
    assert [r.judge_better for r in ceiling.raters] == [False, False, False]  # the JSON keeps the comparison
    rows = _ceiling_csv(result)
    assert [r["judge_better"] for r in rows] == ["", "", ""]
    assert all(str(r["notes"]).startswith("too few items (n = 3)") for r in rows)
    section = text_report(result).split("== Human ceiling")[1].split("note:")[0]
    lines = [line.split() for line in section.splitlines() if line.startswith("r") and not line.startswith("rater")]
    assert lines == [[name, "3", *["withheld"] * 5] for name in ("r0", "r1", "r2")]  # values, intervals, better


@pytest.mark.django_db
def test_the_ceiling_csv_gives_judge_better_on_five_items(researcher, tmp_path):
    study = _study(researcher, "ceiling-five")
    humans = {"i1": [1, 2, 1], "i2": [4, 5, 4], "i3": [3, 3, 2], "i4": [5, 5, 4], "i5": [2, 1, 2]}
    judge = {"i1": [5], "i2": [1], "i3": [3], "i4": [1], "i5": [5]}
    result = _analyse(study, _rows("human", "g", humans) + _rows("judge", "g", judge), tmp_path)
    rows = _ceiling_csv(result)
    assert [r["judge_better"] for r in rows] == [False, False, False]
