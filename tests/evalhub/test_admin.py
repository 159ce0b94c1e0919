"""The study admin (evalhub.admin): saving a changed human_subset draws the subset; a bad one or a change after
people rated is refused on the form and changes nothing."""
from __future__ import annotations

import pytest

from annotations.models import Study
from tests.evalhub.factories import import_long
from tests.support.html_forms import form_values


def _post_change(client, study: Study, **changes: str):
    url = f"/admin/annotations/study/{study.pk}/change/"
    data = form_values(client.get(url).content.decode(), "study_form")
    data.update({k: [v] for k, v in changes.items()})
    return client.post(url, {k: v if len(v) > 1 else v[0] for k, v in data.items()})


@pytest.fixture
def judged(story_study, tmp_path):
    rows = [(f"{g}-{k}", g, "grammaticality", "gpt-4o", "0", 1 + k % 5) for g in ("human", "gpt2") for k in range(10)]
    import_long(story_study, rows, tmp_path)
    return story_study


def test_saving_a_share_in_the_admin_draws_the_subset(admin_client, judged):
    response = _post_change(admin_client, judged, human_subset='{"share": 0.3, "seed": 4}')
    assert response.status_code == 302, response.content.decode()[:2000]
    judged.refresh_from_db()
    assert judged.human_subset == {"share": 0.3, "seed": 4}
    assert judged.items.filter(in_human_subset=True).count() == 6
    assert set(judged.items.values_list("inclusion_probability", flat=True)) == {0.3}


def test_a_bad_setting_or_a_redraw_after_ratings_is_refused_on_the_form(admin_client, judged, tmp_path):
    response = _post_change(admin_client, judged, human_subset='{"share": 2}')
    assert response.status_code == 200 and "share must be a number above 0" in response.content.decode()
    assert _post_change(admin_client, judged, human_subset='{"count": 2}').status_code == 302
    drawn = set(judged.items.filter(in_human_subset=True).values_list("id", flat=True))
    item = judged.items.filter(in_human_subset=True).first()
    import_long(judged, [(item.external_id, item.group, "grammaticality", "human", "r1", 3)], tmp_path, "h.csv")
    response = _post_change(admin_client, judged, human_subset='{"count": 5}')
    assert response.status_code == 200 and "already rated" in response.content.decode()
    judged.refresh_from_db()
    assert judged.human_subset == {"count": 2, "seed": 0}
    assert set(judged.items.filter(in_human_subset=True).values_list("id", flat=True)) == drawn
