"""The study home page's "Which items people rate" panel: the human_subset setting saved (and drawn) and the human
budget planned on a button, owner only (another researcher gets 404)."""
from __future__ import annotations

import html

import pytest
from django.urls import reverse

from tests.evalhub.factories import import_long
from tests.support.ppi_study import summeval_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(client, researcher):
    client.force_login(researcher)
    return client


def test_saving_a_share_on_the_page_draws_it_and_the_page_says_how_many(owner, story_study, tmp_path):
    rows = [(f"{g}-{k}", g, "grammaticality", "gpt-4o", "0", 1 + k % 5) for g in ("human", "gpt2") for k in range(10)]
    import_long(story_study, rows, tmp_path)
    page = owner.get(reverse("study_home", args=["story"])).content.decode()
    assert "People rate every item (no random subset: no PPI figure)." in page
    response = owner.post(reverse("study_human_subset", args=["story"]), {"human_subset": '{"share": 0.3}'})
    assert response.status_code == 302
    page = owner.get(reverse("study_home", args=["story"])).content.decode()
    assert "People rate a random subset: gpt2 3 of 10, human 3 of 10 items." in page
    bad = owner.post(reverse("study_human_subset", args=["story"]), {"human_subset": '{"share": 3}'})
    assert bad.status_code == 400 and "share must be a number above 0" in html.unescape(bad.content.decode())
    story_study.refresh_from_db()
    assert story_study.human_subset == {"share": 0.3, "seed": 0}


def test_the_budget_button_shows_the_plan_and_a_bad_width_is_refused(owner, researcher, tmp_path):
    summeval_study(slug="summeval-20", owner=researcher, tmp_path=tmp_path)
    response = owner.post(reverse("study_budget_plan", args=["summeval-20"]), {"width": "0.6", "rho": "0.9"})
    page = html.unescape(response.content.decode())
    assert response.status_code == 200 and 'id="budget-result"' in page
    assert "coherence: “M11” − “M23” (judge-human correlation: stated, 0.90)" in page
    assert "with the judge: 15 + 15 human-rated items (of 100 + 100)" in page
    assert "people alone:   48 + 48 human-rated items (of 100 + 100)" in page
    assert "widths are large-sample ones (normal quantile 1.96, as the PPI intervals use)" in page
    # 15 + 15 items with the judge: fewer than 30 a group, so the t interval's widening is given (48 + 48 needs none).
    assert ("a t interval would be wider than these large-sample widths: at least 1.05 times at 15 + 15 items "
            "(t_{0.975, 28} / 1.96); df = n_a + n_b - 2") in page
    bad = owner.post(reverse("study_budget_plan", args=["summeval-20"]), {"width": "-1"})
    assert bad.status_code == 400 and "the width must be a positive number" in html.unescape(bad.content.decode())


def test_another_researcher_can_neither_save_nor_plan(client, other_researcher, story_study):
    client.force_login(other_researcher)
    assert client.post(reverse("study_human_subset", args=["story"]), {"human_subset": "{}"}).status_code == 404
    assert client.post(reverse("study_budget_plan", args=["story"]), {"width": "1"}).status_code == 404
