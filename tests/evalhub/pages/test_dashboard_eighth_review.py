"""Issue 25, eighth review: table 2's p says its kind ("exact" or "normal approx.") in the cell, the scatter legend,
the text report, the CSV and the JSON; the verdict's count of tests says what it counts (per-question rows and rows
over all questions apart), and the text report says once what the question "(all)" means."""

from __future__ import annotations

import dataclasses
import re
from html import unescape

import numpy as np
import pytest
from scipy import stats as sps

from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.alt_test_rows import ALL_QUESTIONS
from evalhub.analysis.text_report import ALL_QUESTIONS_TEXT, text_report
from evalhub.imports.exports import TABLE_COLUMNS, table_rows
from evalhub.pages.dashboard import _scatter_legend
from evalhub.pages.verdict import VerdictCard
from tests.evalhub.analysis.test_withheld_numbers import _rows, _study
from tests.evalhub.factories import import_long
from tests.evalhub.pages.test_dashboard_review import small_study  # noqa: F401 - the fixture

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]

# Group "a": six items whose human and judge means have no tie (exact p); group "b": tied means (normal approx.).
UNTIED_HUMAN = {"a1": [1, 1, 1], "a2": [1, 1, 2], "a3": [1, 2, 2], "a4": [2, 2, 2], "a5": [2, 2, 3], "a6": [3, 3, 3]}
UNTIED_JUDGE = {"a1": [1, 2], "a2": [1, 1], "a3": [2, 2], "a4": [3, 3], "a5": [3, 2], "a6": [5, 4]}
TIED_HUMAN = {"b1": [1, 1, 1], "b2": [1, 1, 1], "b3": [2, 2, 2], "b4": [3, 3, 3], "b5": [4, 4, 4], "b6": [5, 5, 5]}
TIED_JUDGE = {"b1": [1, 1], "b2": [2, 2], "b3": [2, 2], "b4": [3, 3], "b5": [5, 5], "b6": [4, 4]}


def _means(scores: dict[str, list[int]]) -> np.ndarray:
    return np.array([np.mean(v) for v in scores.values()])


@pytest.fixture
def two_kinds(researcher, tmp_path):
    study = _study(researcher, "p-kinds")
    import_long(study, _rows("human", "a", UNTIED_HUMAN) + _rows("human", "b", TIED_HUMAN)
                + _rows("judge", "a", UNTIED_JUDGE) + _rows("judge", "b", TIED_JUDGE), tmp_path)
    return study, study_analysis(study=study, options=AnalysisOptions(n_boot=200))


def test_each_tau_names_the_p_scipys_auto_chose_and_equals_scipys_p_under_it(two_kinds) -> None:
    _, result = two_kinds
    rows = {k.group: k for k in result.kendall if k.pool == "judge"}
    exact, tied = rows["a"], rows["b"]
    assert (exact.n, exact.p_method, tied.n, tied.p_method) == (6, "exact", 6, "asymptotic")
    h, j = _means(UNTIED_HUMAN), _means(UNTIED_JUDGE)
    assert exact.p == pytest.approx(sps.kendalltau(h, j, method="exact").pvalue, rel=1e-12)
    h, j = _means(TIED_HUMAN), _means(TIED_JUDGE)
    assert tied.p == pytest.approx(sps.kendalltau(h, j, method="asymptotic").pvalue, rel=1e-12)
    # The CSV: p_method right after p; the JSON: from the dataclass.
    header, *lines = list(table_rows(result, "kendall"))
    assert header == TABLE_COLUMNS["kendall"] and header[header.index("p") + 1] == "p_method"
    csv = {line[header.index("group")]: line[header.index("p_method")] for line in lines
           if line[header.index("pool")] == "judge"}
    assert csv == {"a": "exact", "b": "asymptotic"}
    assert {k["group"]: k["p_method"] for k in result.to_json()["kendall"] if k["pool"] == "judge"} == csv


def test_table_2_the_legend_and_the_text_report_write_the_kind_after_p(two_kinds, client, researcher) -> None:
    study, result = two_kinds
    rows = {k.group: k for k in result.kendall if k.pool == "judge"}
    client.force_login(researcher)
    page = unescape(client.get(f"/studies/{study.slug}/").content.decode())
    table = page[page.index('id="kendall"'):page.index("</table>", page.index('id="kendall"'))]
    seconds = re.findall(r'<span class="second">(p [^<]*?) <span class="band', table)
    assert f"p = {rows['a'].p:.3f} (exact)" in seconds and f"p = {rows['b'].p:.3f} (normal approx.)" in seconds
    assert "p-values of different kinds" not in page
    assert "the second line names its kind: “exact” (the exact distribution, used when neither the human means " \
           "nor the pool's have a tie and there are at most 33 items" in page
    assert _scatter_legend("a", rows["a"]) == f"group “a” (τ {rows['a'].tau:.2f}, p = {rows['a'].p:.3f} (exact), " \
                                              f"{rows['a'].band})"
    report = text_report(result)
    table2 = report[report.index("== Kendall's tau-b"):]
    head, _, *lines = table2[:table2.index("\n\n")].splitlines()[1:]
    assert re.search(r"\bp +p method +items +band$", head)  # items, not a bare "n"
    # Groups by their titles (group “a”), never bare beside a pool.
    kinds = {line.split()[2].strip("“”"): line for line in lines if line.split()[1] == "group" and
             line.split()[3] == "judge"}
    assert re.search(r" exact +6 ", kinds["a"]) and re.search(r" normal approx\. +6 ", kinds["b"])
    assert table2.count("p method: exact (the exact distribution") == 1


def test_a_withheld_tau_withholds_its_p_method_too(small_study, client, researcher) -> None:  # noqa: F811
    client.force_login(researcher)
    kendall = client.get(f"/studies/{small_study.slug}/analysis.json").json()["kendall"]
    withheld = [k for k in kendall if "withheld" in k]
    assert withheld and all(k["p_method"] and "p_method" in k["withheld"] for k in withheld)  # the JSON keeps it


def _tests_ran(client, researcher, study, query: str = "") -> str:
    client.force_login(researcher)
    html = unescape(client.get(f"/studies/{study.slug}/{query}").content.decode())
    return re.findall(r'<span class="tests-ran">\((.*?)\)</span>', html)[0]


def test_the_verdict_counts_question_rows_and_rows_over_all_questions_apart(small_study, client, researcher):  # noqa: F811
    why = "none could run: no human gave 30 usable ratings: add items, or ratings per rater"
    assert _tests_ran(client, researcher, small_study) == f"8 question × group tests and 2 over all questions, {why}"
    assert _tests_ran(client, researcher, small_study, "?group=(all)") == \
        f"4 question × group tests and 1 over all questions, {why}"
    # When tests ran: each kind counted apart, "k of n" where some could not run.
    result = study_analysis(study=small_study, options=AnalysisOptions(n_boot=200))
    rows = [r for r in result.alt_test if r.pool == result.alt_test[0].pool]
    ran = [dataclasses.replace(r, test=dataclasses.replace(r.test, passed=True))
           if r.question == ALL_QUESTIONS or r.question != rows[0].question else r for r in rows]
    card = VerdictCard(pool="p", label="p", rank=1, status="pass", rho=None, headlines=(), rows=tuple(ran),
                       position_notes=(), n_ran=sum(r.test.passed is not None for r in ran))
    assert card.tests_ran == "6 of 8 question × group tests and 2 over all questions ran"
    every = tuple(dataclasses.replace(r, test=dataclasses.replace(r.test, passed=False)) for r in rows)
    assert dataclasses.replace(card, rows=every, n_ran=10).tests_ran == \
        "8 question × group tests and 2 over all questions ran"


def test_the_text_report_says_once_what_the_question_all_means(small_study, two_kinds):  # noqa: F811
    report = text_report(study_analysis(study=small_study, options=AnalysisOptions(n_boot=200)))
    assert report.count(ALL_QUESTIONS_TEXT) == 1 and "every question together" in ALL_QUESTIONS_TEXT
    assert "every (item, question) pair is its own instance" in ALL_QUESTIONS_TEXT  # docs/alt-test.md's words
    assert ALL_QUESTIONS_TEXT not in text_report(two_kinds[1])  # one question: no "(all)" rows
