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
        assert '(all) <span class="pooled-mark">⚠ pooled</span>' in head, table
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
