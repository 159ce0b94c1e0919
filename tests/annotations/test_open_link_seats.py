"""Seats go to people who rate: made-up open-link ids hold no seat, one address cannot mint raters without
end, and a rater who arrives at a full study gets an honest page and no completion code."""
from __future__ import annotations

import pytest
from django.test import Client

from annotations.models import Assignment, ItemClaim, Rater
from tests.support.raterkit import add_story_items, answer, open_study, page_key, url_of

pytestmark = pytest.mark.usefixtures("fresh_cache")


@pytest.fixture
def study(story_study):
    add_story_items(story_study)
    return open_study(story_study, raters_per_item=1, open_link_enabled=True)


def _join(study, pid: str, address: str = "198.51.100.1"):
    client = Client(REMOTE_ADDR=address)
    response = client.get(f"/s/{study.open_token}/?PROLIFIC_PID={pid}", REMOTE_ADDR=address)
    return client, response


def test_made_up_open_link_ids_take_no_seat_and_a_genuine_participant_still_rates(study):
    # Twelve made-up ids visit the link and follow it to their rater page, as the attack did: no seat is held.
    for n in range(12):
        client, response = _join(study, f"fake-{n}", address=f"203.0.113.{n}")
        assert response.status_code == 302
        page = client.get(response["Location"])
        assert page.status_code == 200 and "Start rating" in page.content.decode()
    assert not ItemClaim.objects.exists()
    client, response = _join(study, "genuine")
    start = client.get(response["Location"])
    assert page_key(start.content.decode()) == "start"
    rating = client.post(response["Location"], {"page": "start"}, follow=True)
    assert ItemClaim.objects.count() == 1
    assert 'name="page" value="item:' in rating.content.decode()


def test_one_address_cannot_create_open_link_raters_without_end_but_known_ids_resume(study, settings):
    settings.OPEN_LINK_RATERS_PER_ADDRESS = 3
    for n in range(3):
        assert _join(study, f"p-{n}")[1].status_code == 302
    refused = _join(study, "p-3")[1]
    assert refused.status_code == 429 and "Too many new participants" in refused.content.decode()
    assert not Rater.objects.filter(external_id="p-3").exists()
    assert Client().post(f"/s/{study.open_token}/", REMOTE_ADDR="198.51.100.1").status_code == 429  # no id either
    assert _join(study, "p-1")[1].status_code == 302  # a returning participant is not counted
    assert _join(study, "p-3", address="198.51.100.2")[1].status_code == 302  # another address is not affected
    assert Rater.objects.count() == 4


def test_a_rater_who_arrives_at_a_full_study_gets_no_completion_code(client, study):
    study.items.exclude(external_id="h1").delete()
    first = Rater.objects.create(study=study, external_id="first")
    page = answer(client, first)
    while "completion code" not in page.content.decode().lower():
        page = answer(client, first)
    late = Rater.objects.create(study=study, external_id="late")
    response = client.get(url_of(late))
    html = response.content.decode()
    assert response.status_code == 200 and "This study is full" in html
    assert "there\nis no completion code" in html and "Your completion code" not in html and "completion-code" not in html
    assignment = Assignment.objects.get(rater=late)
    assert assignment.completion_code == "" and assignment.completed_at is None


def test_an_open_link_rater_at_a_full_study_sees_the_full_page_after_start(study):
    study.items.exclude(external_id="h1").delete()
    holder = Rater.objects.create(study=study, external_id="holder")
    Client().get(url_of(holder))  # an invited rater claims the only seat on their first visit
    client, response = _join(study, "late")
    page = client.post(response["Location"], {"page": "start"}, follow=True)
    assert "Nothing to rate right now" in page.content.decode()  # the seat is held, not finished: wait
    assert Assignment.objects.get(rater__external_id="late").completion_code == ""
