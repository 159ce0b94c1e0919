"""Issue 25, ninth review: the text report's table 1 gives each cell's n and the share % full agreement is of, in
the dashboard's words (one place, ``analysis.trust_notes``); its per-rater means say ratings or answers; the
verdict names a group as group “human”; on all individual ratings the report's Welch heading warns of an optimistic
p even when every test is withheld; the docs say what the CSV's ``n`` counts and when the warning appears."""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.reading import ALL_GROUPS
from evalhub.analysis.text_report import RATINGS_UNIT_WARNING, text_report, welch_sentence
from evalhub.analysis.trust_notes import agreement_text, counts_head, counts_text, n_text
from evalhub.pages import verdict
from tests.evalhub.analysis.test_withheld_numbers import _rows, _study
from tests.evalhub.factories import import_long
from tests.evalhub.pages.test_dashboard_review import _read, small_study  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("fresh_cache")

DOCS = Path(__file__).resolve().parents[3] / "docs" / "analysis.md"


def _analysed(researcher, tmp_path, slug: str, welch_unit: str = "item means"):
    """Group "a": 3 items, 2 human ratings each, the raters agreeing on all 3; group "b" likewise, agreeing on 1 of
    3; one LLM sample on every item."""
    study = _study(researcher, slug)
    humans_a = {"a1": [5, 5], "a2": [4, 4], "a3": [5, 5]}
    humans_b = {"b1": [1, 2], "b2": [2, 2], "b3": [1, 3]}
    judge = {"a1": [4], "a2": [4], "a3": [5], "b1": [2], "b2": [1], "b3": [2]}
    rows = (_rows("human", "a", humans_a) + _rows("human", "b", humans_b)
            + _rows("judge", "a", {k: v for k, v in judge.items() if k.startswith("a")})
            + _rows("judge", "b", {k: v for k, v in judge.items() if k.startswith("b")}))
    import_long(study, rows, tmp_path)
    return study, study_analysis(study=study, options=AnalysisOptions(n_boot=200, welch_unit=cast(Any, welch_unit)))


def _cell(result, group: str, pool: str):
    (cell,) = [c for c in result.cells if c.group == group and c.pool == pool]
    return cell


@pytest.mark.django_db
def test_the_cell_words_count_items_and_ratings_or_answers_and_the_share_of_full_agreement(researcher, tmp_path):
    _, result = _analysed(researcher, tmp_path, "ninth-words")
    human, judge = _cell(result, "a", "human"), _cell(result, "a", "judge")
    assert counts_head(human, 0) == "3 items, 6 ratings"
    assert counts_text(human, 0) == "3 items, 6 ratings; mean (std) over the 6 ratings, sample std"
    assert n_text(human, 0) == "n = 6 ratings"
    assert agreement_text(human, 0) == "3 of 3 items"
    assert agreement_text(_cell(result, "b", "human"), 0) == "1 of 3 items"
    # One sample: "1 sample", not "1 samples" (the dashboard's words had it wrong).
    assert counts_head(judge, 1) == "3 items, 3 answers (1 sample of 3 items)"
    assert n_text(judge, 1) == "n = 3 answers"


@pytest.mark.django_db
def test_the_text_reports_table_1_gives_each_cells_n_and_what_full_agreement_is_a_share_of(researcher, tmp_path):
    _, result = _analysed(researcher, tmp_path, "ninth-table1")
    report = text_report(result)
    assert "full agreement % / items, ratings" in report  # the cell's counts, named (not a bare "n")
    assert "full agreement 100% (3 of 3 items)" in report
    assert "full agreement 33% (1 of 3 items)" in report
    assert "3 items, 6 ratings" in report
    assert "3 items, 3 answers (1 sample of 3 items)" in report
    assert "Table 1's cells: mean (std); alpha and % full agreement, with the items it is a share of" in report


@pytest.mark.django_db
def test_the_per_rater_means_say_ratings_for_a_person_and_answers_for_an_llm_sample(researcher, tmp_path):
    _, result = _analysed(researcher, tmp_path, "ninth-raters")
    report = text_report(result)
    assert "mean (n ratings)" not in report and "(n 3)" not in report
    assert "n counts a person's ratings, an LLM sample's answers" in report
    lines = report.splitlines()
    assert any(line.startswith("Human raters") and "(n = 3 ratings)" in line for line in lines)
    assert any(line.startswith("judge") and "(n = 3 answers)" in line and "ratings" not in line for line in lines)


def test_the_verdict_names_a_group_as_the_documented_rule_does() -> None:
    row = cast(Any, SimpleNamespace(question="(all)", group="human"))
    assert verdict._where(row, 2) == "all questions, the items of group “human”"
    pooled = cast(Any, SimpleNamespace(question="q", group=ALL_GROUPS))
    assert verdict._where(pooled, 2) == "q, all groups"
    assert verdict._where(row, 1) == "all questions"


@pytest.mark.django_db
def test_on_all_ratings_a_withheld_sentence_gives_no_p_and_so_no_warning_but_the_heading_warns(researcher, tmp_path):
    _, result = _analysed(researcher, tmp_path, "ninth-ratings", welch_unit="ratings")
    (row, *_) = [w for w in result.welch if w.pool == "human"]
    sentence = welch_sentence(row)
    assert "no test is reported, too few items" in sentence
    assert "optimistic" not in sentence and "p = " not in sentence
    report = text_report(result)
    assert ("== Welch's t-test between groups (all individual ratings, treated as independent though ratings of "
            "one item or one rater are not: its p-values are optimistic)") in report
    _, items = _analysed(researcher, tmp_path, "ninth-items")
    assert "== Welch's t-test between groups (item means)" in text_report(items)
    assert "optimistic" not in text_report(items)


def test_the_docs_say_when_the_optimistic_p_warning_appears_and_what_the_csvs_n_counts() -> None:
    docs = re.sub(r"\s+", " ", DOCS.read_text(encoding="utf-8"))
    assert "every sentence on that unit that gives a p say so" in docs
    assert "a withheld test's sentence gives no p and so no warning" in docs
    assert "the text report's Welch heading" in docs
    assert RATINGS_UNIT_WARNING.endswith("this p is optimistic")
    assert "on `kendall` rows it counts **items**" in docs
    assert "on `rater_means` rows the rater's **ratings**, or, for an LLM pool's sample, its **answers**" in docs
    assert "read the row's `table` column to know which it is" in docs


@pytest.mark.django_db
def test_the_dashboard_shows_the_verdicts_group_and_table_1_in_the_moved_words(small_study, client, researcher):  # noqa: F811
    html, reader = _read(client, researcher, small_study)
    seen = re.sub(r"\s+", " ", " ".join(reader.parts))
    assert "3 items, 9 answers (3 samples of 3 items); mean (std) over the 9 answers" in seen
    assert "the items of group “human”" in seen
    assert "the human items" not in seen and "the gpt2 items" not in seen

