"""Text-report review (textlabels): no bare column named "n" or "tied", groups named as group “human” (never bare
beside the pool "Human raters"), and table 1's heading promises alpha's interval only where one is shown."""
from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any, cast

import pytest

from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.reading import ALL_GROUPS
from evalhub.analysis.text_report import alpha_interval_head, alt_test_report, text_report
from evalhub.analysis.trust_notes import POOLED_MARK
from tests.evalhub.analysis.test_ninth_review import _analysed
from tests.evalhub.analysis.test_withheld_numbers import _rows, _study
from tests.evalhub.factories import import_long

pytestmark = pytest.mark.usefixtures("fresh_cache")


def _two_ratings_an_item(researcher, tmp_path, slug: str, n_items: int, step: int):  # noqa: ANN001, ANN202
    """A study of ``n_items`` items with 2 ratings each (the second shifted every ``step`` items), analysed."""
    study = _study(researcher, slug)
    humans = {f"i{k}": [1 + k % 5, 1 + (k + k // step) % 5] for k in range(n_items)}
    import_long(study, _rows("human", "a", humans), tmp_path)
    return study_analysis(study=study, options=AnalysisOptions(n_boot=200))


def _block(report: str, heading: str) -> list[str]:
    start = report.index(heading)
    return report[start:report.index("\n\n", start)].splitlines()


@pytest.mark.django_db
def test_the_tables_name_items_and_tied_items_and_groups_never_bare(researcher, tmp_path):
    _, result = _analysed(researcher, tmp_path, "labels-words")
    report = text_report(result)
    table1 = _block(report, "== q: mean (std)")
    assert table1[0] == ("== q: mean (std) / Krippendorff's alpha (ordinal) (no 95% CI: every cell has fewer than "
                         "10 items) / full agreement % / items, ratings")  # every alpha withheld: no ICC(1)
    assert table1[1].split("  ")[0] == "pool" and "group “a”" in table1[1] and "group “b”" in table1[1]
    assert "[95% CI]" not in report
    kendall = _block(report, "== Kendall's tau-b")
    assert kendall[1].split() == ["question", "group", "pool", "tau", "p", "p", "method", "items", "band"]
    assert kendall[-1].startswith("items: the items with both a human mean and the pool's mean; p: ")
    # Review 22: the band column's words are said under the table, as on the dashboard.
    assert kendall[-1].endswith("band: |tau| < 0.1 very weak, < 0.2 weak, < 0.3 moderate, >= 0.3 strong, \"negative\" "
                                "added for a negative tau, and \"not significant\" in place of the whole band when "
                                "p > 0.05")
    kappa = _block(report, "== Cohen's kappa")
    assert re.search(r"95% CI +items +tied \(left out\) +p \(BH\)$", kappa[1])
    assert kappa[-1].startswith("items: the items kappa is over (against the majority: those left once the tied "
                                "ones are left out); tied (left out): the items whose human majority ties")
    raters = _block(report, "== Per-rater means")
    assert "q / group “a”" in raters[1] and "q / group “b”" in raters[1]
    # No table's header has a bare "n" column (Welch's says its unit: "n (items)").
    headers = [lines[1] for lines in (table1, kendall, kappa, raters)]
    assert not any(" n " in f" {h} " for h in headers)


@pytest.mark.django_db
def test_the_pooled_group_is_all_groups_marked_as_pooled(researcher, tmp_path):
    study, _ = _analysed(researcher, tmp_path, "labels-pooled")
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=200, groups=("a", ALL_GROUPS)))
    header = _block(text_report(result), "== q: mean (std)")[1]
    assert "group “a”" in header and f"all groups {POOLED_MARK}" in header and ALL_GROUPS not in header


@pytest.mark.django_db
def test_table_1_heading_promises_the_interval_where_it_is_shown(researcher, tmp_path):
    """12 items with 2 ratings each: alpha and its interval are shown."""
    report = text_report(_two_ratings_an_item(researcher, tmp_path, "labels-ci", 12, 4))
    assert "Krippendorff's alpha (ordinal) [95% CI where at least 10 items] / full agreement %" in report


def test_the_interval_heading_says_why_none_is_shown() -> None:
    def cell(n_items: int, ci: tuple[float, float] | None, **notes: str) -> Any:
        return cast(Any, SimpleNamespace(n_items=n_items, alpha_ci95=ci, notes=notes))

    assert alpha_interval_head([cell(12, (0.1, 0.6)), cell(3, None)], "ordinal") == \
        "[95% CI where at least 10 items]"
    assert alpha_interval_head([cell(6, (0.1, 0.6), alpha_ci95="few items for a bootstrap interval (n = 6)")],
                               "ordinal") == "(no 95% CI: every cell has fewer than 10 items)"
    assert alpha_interval_head([cell(12, None, alpha_ci95="undefined")], "ordinal") == \
        "(no 95% CI shown: see the cells' notes)"


def test_the_per_human_alt_test_table_names_what_its_count_counts() -> None:
    human = SimpleNamespace(rater="r1", n=12, p=0.01, rejected=True, advantage=0.8)
    test = SimpleNamespace(scoring="neg_rmse", epsilon=0.15, q_fdr=0.05, n_instances=12, winning_rate=1.0,
                           advantage_probability=0.8, passed=True, humans=[human], notes=[])
    row = cast(Any, SimpleNamespace(question="q", group="a", pool="judge", test=test))
    lines = alt_test_report([row])
    header = lines[lines.index("Per human: the one-sided t-test of d = W_h - W_llm against epsilon, and "
                               "rho_j = mean(W_llm)") + 1]
    assert re.match(r"question +group +pool +rater +usable ratings +p +beaten", header)


# --- textlabels2 review: the alt-test columns said, no reason in brackets, groups titled in every table ------------


def test_the_alt_test_columns_are_said_under_the_table() -> None:
    test = SimpleNamespace(scoring="neg_rmse", epsilon=0.15, q_fdr=0.05, n_instances=12, winning_rate=None,
                           advantage_probability=None, passed=None, humans=[], notes=["why"])
    row = cast(Any, SimpleNamespace(question="q", group="human", pool="judge", test=test))
    lines = alt_test_report([row])
    table = next(line for line in lines if line.startswith("question"))
    header, _, first = table.splitlines()
    assert re.match(r"question +group +pool +judge ratings used +omega +rho +verdict +beat/tested$", header)
    assert first.startswith("q         group “human”  judge")
    footnote = lines[lines.index(table) + 1]
    for words in ("judge ratings used: the items with the judge's rating and 2+ human ratings (question (all): the "
                  "item × question pairs, over all questions)",
                  "omega: the winning rate, the share of the human raters tested that the judge beats within epsilon",
                  "rho: the advantage probability, the mean over the raters tested of the share of their ratings on "
                  "which the judge scores at least as well as the rater",
                  "beat/tested: the human raters beaten / the human raters tested (those with 30 usable ratings)"):
        assert words in footnote, words
    assert "q / group “human” / judge: why" in lines
    pooled = alt_test_report([cast(Any, SimpleNamespace(question="q", group=ALL_GROUPS, pool="judge", test=test))],
                             pooled=True)
    assert f"\nq         all groups {POOLED_MARK}  judge" in "\n".join(pooled)


@pytest.mark.django_db
def test_a_reason_in_place_of_alphas_interval_is_not_written_as_one(researcher, tmp_path):
    """6 items with 2 ratings each: alpha is shown, its interval is not (few items for a bootstrap interval)."""
    report = text_report(_two_ratings_an_item(researcher, tmp_path, "labels-noci", 6, 3))
    line = next(x for x in _block(report, "== q: mean (std)") if "alpha" in x and "alpha (" not in x)
    assert re.search(r"alpha -?\d\.\d\d \(no CI: few items for a bootstrap interval, n = 6\)", line), line
    assert "[few items" not in report


@pytest.mark.django_db
def test_every_group_column_names_the_group_never_bare(researcher, tmp_path):
    study, result = _analysed(researcher, tmp_path, "labels-columns")
    report = text_report(result)
    for heading in ("== Kendall's tau-b", "== Mean pairwise Kendall's tau", "== Cohen's kappa",
                    "== Alternative annotator test"):
        rows = _block(report, heading)[3:]
        assert rows and all(re.match(r"q +group “[ab]” ", row) for row in rows if row.startswith("q ")), heading
    assert re.search(r"== Human ceiling \(.*\): q / group “a” / judge", report)
    pooled = text_report(study_analysis(study=study, options=AnalysisOptions(n_boot=200, groups=(ALL_GROUPS,))))
    for heading in ("== Kendall's tau-b", "== Mean pairwise Kendall's tau", "== Cohen's kappa",
                    "== Alternative annotator test"):
        rows = [row for row in _block(pooled, heading)[3:] if row.startswith("q ")]
        assert rows and all(re.match(f"q +all groups {POOLED_MARK} ", row) for row in rows), heading
    assert " (all) " not in pooled.replace('question "(all)"', "")


@pytest.mark.django_db
def test_the_report_prints_icc_1_where_alpha_is_shown_as_the_page_does(researcher, tmp_path):
    # Review 15: the Notes spoke of ICC on 16 cells while the report printed no ICC anywhere.
    result = _two_ratings_an_item(researcher, tmp_path, "labels-icc", 6, 3)
    report = text_report(result)
    cell = next(c for c in result.cells if c.pool == "human")
    assert cell.icc1 is not None
    block = _block(report, "== q: mean (std)")
    assert "/ full agreement % / ICC(1) / items, ratings" in block[0]
    line = next(x for x in block if x.strip().startswith("alpha "))
    assert line.rstrip().endswith(f", ICC(1) {cell.icc1:.2f}"), line
    assert "ICC(1) (one-way random-effects intraclass correlation of one rating" in report


@pytest.mark.django_db
def test_table_6_and_the_kappa_table_say_their_columns_and_how_samples_become_a_label(researcher, tmp_path):
    # Review 18: table 6's "pairs" and "items" and how a pool's samples become one label were unsaid in the report.
    _, result = _analysed(researcher, tmp_path, "labels-pairs")
    report = text_report(result)
    table6 = _block(report, "== Mean pairwise Kendall's tau")
    assert table6[-1].startswith("pairs: the rater pairs (an LLM: sample pairs) whose tau enters the mean")
    assert table6[-1].endswith("items: the items with 2+ ratings of the pool")
    kappa = _block(report, "== Cohen's kappa")
    assert "its samples' majority label (nominal studies) or their mean rounded to the nearest scale point " \
        "(Likert); the human ceiling uses the unrounded mean" in kappa[-1]
