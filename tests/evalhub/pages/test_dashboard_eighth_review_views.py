"""The eighth review of the small study's dashboard (issue 25): a pooled alpha read as reliability (M1), the
ceiling's values only in tooltips (U1), one colour per group across views and no pooled bubbles over a group's
(U3), and a CSV `withheld` column a script can split (C6). The phone layout (U2: the pools and kappa tables as
cards) is measured in Chromium in tests/e2e/test_phone_width_browser.py."""
from __future__ import annotations

import re

import pytest

from evalhub.analysis import ALL_GROUPS, AnalysisOptions, study_analysis
from evalhub.analysis.trust_notes import withheld_text
from evalhub.pages.dashboard import dashboard_context
from tests.evalhub.analysis.test_withheld_exports import _three_items_a_side, dashboard_html

pytestmark = pytest.mark.usefixtures("fresh_cache")


@pytest.mark.django_db
def test_a_pooled_alpha_is_marked_pooled_in_its_cell(researcher, client, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "pooled-mark")
    page = dashboard_html(client, researcher, study, "?group=(all)")
    table = page[page.index('id="table1"'):page.index("</table>", page.index('id="table1"'))]
    # Ninth review, M1 and M2: every pooled α carries the mark, and on 6 items (no interval) it is greyed.
    shown = re.findall(r'α (<span class="undef rough">)?-?\d\.\d\d( \(no CI\)</span>)?'
                       r'( <span class="pooled-mark">⚠ pooled</span>)?', table)
    assert shown and all(rough and no_ci and mark for rough, no_ci, mark in shown)
    heads = page[page.index('id="table1"'):page.index("</thead>", page.index('id="table1"'))]
    assert heads.count('all groups <span class="pooled-mark">⚠ pooled</span>') == 1  # one question, one (all) column
    page = client.get(f"/studies/{study.slug}/").content.decode()
    assert 'class="pooled-mark"' not in page


@pytest.mark.django_db
def test_a_shown_ceiling_lists_its_values_under_the_chart_and_a_withheld_one_does_not(researcher, client, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "ceiling-values")
    page = dashboard_html(client, researcher, study, "?group=(all)")
    figure = page[page.index('<figure class="evidence-chart ceiling">'):]
    figure = figure[:figure.index("</figure>")]
    assert '<details class="chart-values"><summary>values</summary>' in figure
    rows = re.findall(r"<tr><td>(r\d)</td><td>6</td><td>(-?\d\.\d{3})</td><td>(\[[^<]+\]|width 0)</td>"
                      r"<td>(-?\d\.\d{3})</td><td>(\[[^<]+\]|width 0)</td><td>(yes|no)</td></tr>", figure)
    assert [r[0] for r in rows] == ["r0", "r1", "r2"]
    pooled = study_analysis(study=study, options=AnalysisOptions(n_boot=200, groups=(ALL_GROUPS,)))  # type: ignore[arg-type]
    ceiling = pooled.ceiling[0]
    for (_, human, _, judge, _, better), rater in zip(rows, ceiling.raters, strict=True):
        assert (float(human), float(judge)) == (round(rater.rater_score, 3), round(rater.judge_score, 3))
        assert better == ("yes" if rater.judge_better else "no")
    page = client.get(f"/studies/{study.slug}/").content.decode()  # 3 items a group: withheld, no values
    figure = page[page.index('<figure class="evidence-chart ceiling">'):]
    assert "chart-values" not in figure[:figure.index("</figure>")]


@pytest.mark.django_db
def test_a_group_keeps_its_colour_in_every_view_and_pooled_bubbles_never_cover_it(researcher, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "scatter-colours")

    def colours(groups):  # noqa: ANN001, ANN202
        result = study_analysis(study=study, options=AnalysisOptions(n_boot=50, groups=groups, charts=True))
        charts = "".join(str(c) for block in dashboard_context(result)["scatter_charts"] for c in block.charts)
        return dict(re.findall(r'fill="(#[0-9a-f]{6})"[^>]*>\s*<title>[^<]*?(group “\w”|all groups)', charts))

    every, only_b, b_and_all, pooled = colours(None), colours(("b",)), colours(("b", ALL_GROUPS)), \
        colours((ALL_GROUPS,))
    by_group = {g: c for c, g in every.items()}
    assert set(by_group) == {"group “a”", "group “b”"}
    assert {g: c for c, g in only_b.items()} == {"group “b”": by_group["group “b”"]}
    assert {g: c for c, g in b_and_all.items()} == {"group “b”": by_group["group “b”"]}  # no pooled overplot
    assert set(pooled.values()) == {"all groups"} and not set(pooled) & set(every)


def test_the_csv_withheld_column_joins_its_parts_with_a_bar_a_reason_never_holds():
    text = withheld_text({"t": "too few items, n = 3 and 3; no variation within “a” (every item mean 4.33)",
                          "p": "too few items, n = 3 and 3; no variation within “a” (every item mean 4.33)",
                          "alpha_ci95_low": "no variation"})
    parts = text.split(" | ")
    assert parts == ["t, p: too few items, n = 3 and 3; no variation within “a” (every item mean 4.33)",
                     "alpha_ci95_low: no variation"]
    assert [p.split(": ", 1)[0] for p in parts] == ["t, p", "alpha_ci95_low"]
