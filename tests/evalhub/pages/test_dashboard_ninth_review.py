"""The ninth review of the small study's dashboard (issue 25): every pooled figure marked, not only table 1's α
(M1); a value whose interval is withheld on few items shown greyed (M2); a plan's lines wrap (U1); why pairs are
left out of table 6, and why p (BH) is "–", in visible text (U4); an undefined τ says so (C7)."""
from __future__ import annotations

import re
from html import unescape

import pytest

from evalhub.analysis.trust_notes import POOLED_MARK, group_title
from tests.evalhub.analysis.test_withheld_exports import JUDGE_HIGH, _three_items_a_side, dashboard_html
from tests.evalhub.analysis.test_withheld_numbers import _rows, _study
from tests.evalhub.factories import import_long
from tests.evalhub.pages.test_dashboard_review import small_study  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("fresh_cache")

# r0 gives 4 to every item: its two pairs have no τ ("1 of 3 pairs"); every item's mean is 4: table 2's τ undefined.
FLAT = {"a1": [4, 3, 5], "a2": [4, 4, 4], "a3": [4, 5, 3]}


@pytest.fixture
def flat_study(researcher, tmp_path):  # noqa: ANN001, ANN201
    study = _study(researcher, "flat")
    import_long(study, _rows("human", "a", FLAT) + _rows("judge", "a", JUDGE_HIGH), tmp_path)
    return study


def test_all_groups_are_marked_pooled_only_where_the_view_pools_several():
    assert group_title("(all)", "a caveat") == f"all groups {POOLED_MARK}"
    assert group_title("(all)") == "all groups" and group_title("a", "a caveat") == "group “a”"


@pytest.mark.django_db
def test_every_pooled_figure_of_a_mixed_view_carries_the_mark(researcher, client, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "pooled-everywhere")
    page = unescape(dashboard_html(client, researcher, study, "?group=b&group=(all)"))
    # Tables 1, 2 and 6: the (all) column's heading.
    for table in ("table1", "kendall", "pairwise"):
        head = page[page.index(f'id="{table}"'):page.index("</thead>", page.index(f'id="{table}"'))]
        assert 'all groups <span class="pooled-mark">⚠ pooled</span>' in head, table
        assert '>b</th>' in head or 'b <span' not in head  # the group's own column stays unmarked
    # The κ blocks, the α chart's rows, the scatter's legend and the distribution titles name it.
    blocks = re.findall(r'<div class="evidence-block" data-pool="[^"]+" data-question="[^"]+" data-group="([^"]+)">\s*'
                        r'<h3>(.*?)</h3>', page, flags=re.S)
    assert blocks and all(("all groups ⚠ pooled" in h3) == (group == "(all)") for group, h3 in blocks)
    alpha = page[page.index('id="charts-alpha"'):]
    assert "all groups ⚠ pooled · " in alpha[:alpha.index("</div>")]
    assert "all groups ⚠ pooled" not in dashboard_html(client, researcher, study, "?group=b")


@pytest.mark.django_db
def test_a_value_whose_interval_is_withheld_on_few_items_is_greyed_with_no_ci(researcher, client, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "greyed")
    page = dashboard_html(client, researcher, study, "?group=(all)")
    table1 = page[page.index('id="table1"'):page.index("</table>", page.index('id="table1"'))]
    assert re.findall(r'α <span class="undef rough">-?\d\.\d\d \(no CI\)</span>', table1)
    kappas = re.findall(r'class="kappa-value"[^>]*>(.*?)</td>', page)
    assert kappas and all(re.fullmatch(r'<span class="undef rough">-?\d\.\d{3}</span>', k) for k in kappas)
    assert "an α in grey with “no CI” rests on fewer than 10 items" in page
    assert "and the κ then in grey" in page


@pytest.mark.django_db
def test_the_pairs_left_out_of_table_6_and_the_empty_p_bh_are_explained_in_text(flat_study, client, researcher):
    page = unescape(dashboard_html(client, researcher, flat_study))
    left_out = re.search(r'<p class="muted" id="pairs-left-out">(.*?)</p>', page, flags=re.S)
    assert left_out and "q / group “a” / Human raters: 1 of 3 pairs; 2 undefined: " in left_out.group(1)
    assert "r0 gave one score to every item shared with another rater" in left_out.group(1)
    assert "p (BH) is “–” where κ is withheld or undefined, and on the majority and Fleiss' κ rows" in page


@pytest.mark.django_db
def test_an_undefined_tau_says_tau_undefined(flat_study, client, researcher):
    page = unescape(dashboard_html(client, researcher, flat_study))
    table2 = page[page.index('id="kendall"'):page.index("</table>", page.index('id="kendall"'))]
    undefined = re.findall(r'<span class="undef tau-note">(τ undefined: [^<]+)</span>', table2)
    assert undefined == ["τ undefined: the human raters' item means are all equal (4.00) on the 3 items"]


@pytest.mark.django_db
def test_the_budget_plan_wraps_inside_its_panel(client, researcher, story_study):
    client.force_login(researcher)
    page = client.get(f"/studies/{story_study.slug}/home/").content.decode()
    assert "pre.wrap { white-space: pre-wrap;" in page


# The tenth review's points (the same study shapes).

@pytest.mark.django_db
def test_a_kappa_with_width_0_on_few_items_is_greyed_like_its_neighbours(researcher, client, tmp_path):
    # Tenth review, M1: κ 0.000 in black beside greyed values, its note starting "no variation".
    from evalhub.templatetags.evalhub_format import few_for_ci

    assert few_for_ci("no variation: the bootstrap interval has width 0 (both bounds 0.000); few items for a "
                      "bootstrap interval (n = 5): ...")
    assert not few_for_ci("no variation: the bootstrap interval has width 0 (both bounds 0.000)")


@pytest.mark.django_db
def test_the_pooled_caveat_separates_figures_that_mix_groups_from_sums_over_items(researcher, client, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "caveat-split")
    page = unescape(dashboard_html(client, researcher, study, "?group=(all)"))
    caveat = re.search(r'<p id="pooled-groups-caveat">(.*?)</p>', page, flags=re.S)
    assert caveat and "Figures that count or average over items (% full agreement, the confusion matrix's counts, " \
                      "the human ceiling's scores) are the groups' items added together" in caveat.group(1)


@pytest.mark.django_db
def test_stars_have_a_key_only_where_a_test_is_reported_and_wide_tables_say_they_scroll(researcher, client,
                                                                                      tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "no-stars")
    page = unescape(dashboard_html(client, researcher, study))
    assert "Stars mark the group" not in page  # 3 items a side: every test withheld
    assert "No cell has a star: every test between groups is withheld here" in page
    # One question x two groups: no hint; the hint appears from three columns on (shown on a phone only).
    assert "scroll sideways →" not in page
    assert ".scroll-hint { display: none; }" in page


@pytest.mark.django_db
def test_the_ceiling_csv_names_the_interval_ends_cut_at_the_scores_limit(researcher, tmp_path):
    from evalhub.analysis import ALL_GROUPS, AnalysisOptions, study_analysis
    from evalhub.analysis.result import CeilingRater, CeilingRow
    from evalhub.analysis.trust_notes import ceiling_rater_cut

    rater = CeilingRater("r1", 6, -0.3, (-0.9, 0.0), -0.5, (-1.0, -0.1), False, None)
    row = CeilingRow("q", "a", "j", scoring="neg_rmse", summary="s", judge_better=0, n_compared=1, notes=(),
                     raters=(rater,))
    assert ceiling_rater_cut(row, rater) == "rater_ci95_high at 0"
    accuracy = CeilingRater("r1", 6, 0.9, (0.7, 1.0), 0.2, (0.0, 0.5), True, None)
    assert ceiling_rater_cut(CeilingRow("q", "a", "j", scoring="accuracy", summary="s", judge_better=1,
                                        n_compared=1, notes=(), raters=(accuracy,)), accuracy) == \
        "rater_ci95_high at 1, judge_ci95_low at 0"
    withheld = CeilingRow("q", "a", "j", scoring="neg_rmse", summary=None, judge_better=0, n_compared=1,
                          notes=("too few items (n = 3)",), raters=(rater,))
    assert ceiling_rater_cut(withheld, rater) == ""
    study, _ = _three_items_a_side(researcher, tmp_path, "cut-csv")
    from evalhub.imports.exports import table_rows

    pooled = study_analysis(study=study, options=AnalysisOptions(n_boot=50, groups=(ALL_GROUPS,)))  # type: ignore[arg-type]
    header, *rows = list(table_rows(pooled, "ceiling"))
    assert list(header[-3:]) == ["ci95_cut", "withheld", "pooled"]
    lines = [dict(zip(header, r, strict=True)) for r in rows]
    assert lines
    for line in lines:  # the flag says what the free-text note says, rater by rater
        said = f"{line['rater']}, rater's score: the t interval is cut above" in str(line["notes"])
        assert ("rater_ci95_high at 0" in str(line["ci95_cut"])) == said


@pytest.mark.django_db
def test_a_table_of_eight_columns_says_on_a_phone_that_it_scrolls(small_study, client, researcher):  # noqa: F811
    page = unescape(dashboard_html(client, researcher, small_study))
    for table in ("table1", "kendall", "pairwise", "raters"):
        start = page.index(f'id="{table}"')
        assert '<caption class="scroll-hint">8 columns (question × group): scroll sideways →</caption>' in \
            page[start:page.index("</thead>", start)], table


# The eleventh review's points.

@pytest.mark.django_db
def test_pooled_icc_and_the_pooled_ceiling_summary_carry_the_mark_and_their_items(researcher, client, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "pooled-icc")
    page = unescape(dashboard_html(client, researcher, study, "?group=(all)"))
    lines = re.findall(r'<span class="second cell-ci">(.*?)</span>\s*</td>', page, flags=re.S)
    assert lines and all(re.search(r'ICC\(1\) -?\d\.\d\d <span class="pooled-mark">⚠ pooled</span>', line)
                         for line in lines)
    summary = re.search(r'<strong class="ceiling-summary">(.*?)</strong>', page, flags=re.S)
    assert summary and re.search(r"them do( \(a point comparison: see the intervals\))? \(on 6 items, "
                                 r'<span class="pooled-mark">groups pooled ⚠</span>; how the raters agree within '
                                 r"the groups: see the notes below\)$", summary.group(1)), summary.group(1)


@pytest.mark.django_db
def test_a_raters_kappa_row_has_no_tie_count_and_the_runs_table_is_cards(researcher, client, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "no-ties")
    page = dashboard_html(client, researcher, study)
    rater_rows = re.findall(r'<tr class="kappa-row" data-against="rater".*?</tr>', page, flags=re.S)
    assert rater_rows and all('<td data-label="tied (left out)"><span class="undef" title="ties concern the human majority'
                              in row for row in rater_rows)
    client.force_login(researcher)
    home = client.get(f"/studies/{study.slug}/home/").content.decode()
    assert '<table class="paper cards" id="runs">' in home


# The twelfth review's points.

@pytest.mark.django_db
def test_an_all_groups_export_marks_each_pooled_row_in_the_csv_and_the_json(researcher, client, tmp_path):
    from evalhub.analysis import ALL_GROUPS, AnalysisOptions, study_analysis
    from evalhub.analysis.result_json import analysis_json
    from evalhub.analysis.trust_notes import POOLED_ROW
    from evalhub.imports.exports import table_rows

    study, unfiltered = _three_items_a_side(researcher, tmp_path, "pooled-export")
    pooled = study_analysis(study=study, options=AnalysisOptions(n_boot=50, groups=(ALL_GROUPS,)))  # type: ignore[arg-type]
    for table in ("cells", "kendall", "pairwise_kendall", "kappa", "confusion", "ceiling"):
        header, *rows = list(table_rows(pooled, table))
        assert header[-1] == "pooled" and rows, table
        assert all(dict(zip(header, r, strict=True))["pooled"] == POOLED_ROW for r in rows), table
        header, *rows = list(table_rows(unfiltered, table))
        assert all(dict(zip(header, r, strict=True))["pooled"] == "" for r in rows), table
    data = analysis_json(pooled)
    rows = [row for table in ("cells", "kendall", "kappa", "ceiling") for row in data[table]]  # type: ignore[union-attr]
    assert rows and all(row["pooled"] == POOLED_ROW for row in rows)  # type: ignore[index]
    assert not any("pooled" in row for row in analysis_json(unfiltered)["cells"])  # type: ignore[union-attr,operator]


@pytest.mark.django_db
def test_the_kappa_csv_leaves_ties_empty_where_none_can_be_and_the_report_gives_table_6_its_items(researcher,
                                                                                                  tmp_path):
    from evalhub.analysis.text_report import text_report
    from evalhub.imports.exports import table_rows

    _, result = _three_items_a_side(researcher, tmp_path, "ties-csv")
    header, *rows = list(table_rows(result, "kappa"))
    lines = [dict(zip(header, r, strict=True)) for r in rows]
    assert lines and all((line["n_tied"] == "") == (line["against"] != "majority") for line in lines)
    report = text_report(result)
    assert re.search(r"question\s+group\s+pool\s+mean tau\s+pairs\s+items", report)


@pytest.mark.django_db
def test_the_pools_table_counts_within_the_group_filter(researcher, client, tmp_path):
    # Review 13, M: "ratings counted" stayed the whole study's under ?group=...; now it counts the groups shown.
    study, _ = _three_items_a_side(researcher, tmp_path, "pools-scope")
    for query, expected in (("?group=a", "9 (rater × item × question)"),
                            ("?group=a&group=(all)", "18 (rater × item × question)"),
                            ("", "18 (rater × item × question)")):
        page = unescape(dashboard_html(client, researcher, study, query))
        assert ('<span class="muted" id="pools-scope">(every count over the questions and groups shown, “(all)” '
                "counting every item; each table below counts its own cells)</span>") in page
        pools = page[page.index('class="paper pools cards"'):]
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", pools[:pools.index("</table>")]))
        assert expected in text, query  # 3 raters x 3 items of group a x 1 question; both groups: 18
