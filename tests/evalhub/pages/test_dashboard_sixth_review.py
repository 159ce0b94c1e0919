"""The sixth review's remaining points (issue 25), fixed after it: each column of a dashboard table names its
question on a phone, a shown τ gives its n in the cell, a sample's n counts answers, one format for a withheld reason,
one axis for the page's ceiling charts, and the human-subset setting's help in words.

The phone layout itself (the question heading in view at 390 px) is measured in Chromium in
tests/e2e/test_phone_width_browser.py.
"""
from __future__ import annotations

import re
from html import unescape

import pytest

from evalhub.analysis.result import CeilingRater
from evalhub.analysis.trust_notes import short_note
from evalhub.pages.evidence import ceiling_chart, ceiling_low
from tests.evalhub.analysis.test_withheld_exports import _three_items_a_side, dashboard_html

pytestmark = pytest.mark.usefixtures("fresh_cache")


@pytest.mark.django_db
def test_every_group_column_heading_also_names_its_question_for_a_phone(researcher, client, tmp_path):
    study, result = _three_items_a_side(researcher, tmp_path, "column-heads")
    page = dashboard_html(client, researcher, study)
    for table in ("table1", "kendall", "pairwise"):
        start = page.index(f'id="{table}"')
        head = page[start:page.index("</thead>", start)]
        named = re.findall(r'<span class="q-on-phone">([^<]+) · </span>([^<]+)</th>', head)
        # Each group named as a group, never bare beside the row "Human raters" (review 14).
        assert named == [(q, f"group “{g}”") for q in result.study.questions for g in ("a", "b")], table
    # Shown only below 40rem: a wide screen keeps the one heading over its groups.
    assert ".q-on-phone { display: none;" in page and "@media (max-width: 40rem) { .q-on-phone { display: inline; }" \
        in page


@pytest.mark.django_db
def test_a_shown_tau_gives_its_n_of_items_in_the_cell(researcher, client, tmp_path):
    # Sixth review (U): in the all-groups view τ is shown on 6 items, and its n was only in the tooltip.
    study, _ = _three_items_a_side(researcher, tmp_path, "tau-n")
    page = dashboard_html(client, researcher, study, "?group=(all)")
    table = page[page.index('id="kendall"'):page.index("</table>", page.index('id="kendall"'))]
    shown = re.findall(r'<span class="second tau-n">n = (\d+) items</span>', table)
    taus = re.findall(r'<span class="band ', table)
    assert shown == ["6"] * len(taus) and taus  # every shown τ (the one with a band) has its n beneath
    assert "third line: n of items" in page


def test_a_withheld_reason_reads_the_same_with_or_without_a_second_clause():
    # Sixth review (C): welch.csv said "too few items (n = 3 and 3); no variation ..." in one row and
    # "too few items, n = 3 and 3" in the next.
    assert short_note("too few items (n = 3 and 3)") == "too few items, n = 3 and 3"
    assert short_note("too few items (n = 3 and 3); no variation within “a” (every item mean 4.33)") == \
        "too few items, n = 3 and 3; no variation within “a” (every item mean 4.33)"
    assert short_note("undefined: no variation (n = 2)") == "undefined"


def _rater(name: str, human: float, judge: float, width: float) -> CeilingRater:
    return CeilingRater(name, 3, human, (human - width, human + width), judge, (judge - width, judge + width),
                        judge >= human, None)


def test_the_pages_ceiling_charts_share_one_axis_and_a_withheld_one_draws_none():
    # Sixth review (C): two withheld ceilings of one page ran from -1 and from -3 to 0.
    narrow, wide = [_rater("r1", -0.5, -0.6, 0.2)], [_rater("r1", -0.9, -1.1, 1.9)]
    assert ceiling_low("neg_rmse", narrow) == -1.0
    assert ceiling_low("neg_rmse", wide) <= -3.0
    # A withheld chart draws no axis at all (review 18), so it cannot widen the page's.
    withheld = ceiling_chart(title="t", scoring="neg_rmse", raters=wide, judge_colour="#cf222e",
                             withheld="too few items (n = 3)")
    assert "<circle" not in withheld and "<line" not in withheld and ">0</text>" not in withheld
    assert ceiling_low("accuracy", wide) == 0.0
    low = min(ceiling_low("neg_rmse", narrow), ceiling_low("neg_rmse", wide))
    axes = [re.findall(r">(-?[\d.]+)</text>", ceiling_chart(title="t", scoring="neg_rmse", raters=r,
                                                              judge_colour="#cf222e", low=low))
            for r in (narrow, wide)]
    assert axes[0] == axes[1] and axes[0][0] == f"{low:g}" and axes[0][-1] == "0"


@pytest.mark.django_db
def test_the_human_subset_setting_says_each_json_form_in_words(researcher, client, story_study):
    client.force_login(researcher)
    page = unescape(client.get(f"/studies/{story_study.slug}/home/").content.decode())
    assert '{"share": 0.2}, a random 20 % of each group\'s items' in page
    assert '{"declared_random": true}, the items people rated were drawn at random elsewhere' in page
    assert "Empty: people rate every item." in page
