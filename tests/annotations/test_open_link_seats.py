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


def test_a_newcomer_at_a_full_study_is_told_so_at_the_open_link_and_nothing_is_stored(study):
    study.items.exclude(external_id="h1").delete()
    holder = Rater.objects.create(study=study, external_id="holder")
    Client().get(url_of(holder))  # an invited rater claims the only seat on their first visit
    client, response = _join(study, "late")
    assert response.status_code == 200 and "This study is full" in response.content.decode()
    assert "PROLIFIC_PID=late" in response.content.decode()  # "Check again" keeps the participant's id
    for visit in (client.get(f"/s/{study.open_token}/"), client.post(f"/s/{study.open_token}/")):  # no id
        assert "This study is full" in visit.content.decode()
    assert list(Rater.objects.values_list("external_id", flat=True)) == ["holder"]


def test_a_rater_with_a_seat_still_waits_while_another_holds_the_last_one(study):
    study.items.exclude(external_id__in=["h1", "h2"]).delete()
    late_client, late = _join(study, "late")
    late_client.post(late["Location"], {"page": "start"})  # takes one of the two items
    holder = Rater.objects.create(study=study, external_id="holder")
    Client().get(url_of(holder))  # takes the other
    late_rater = Rater.objects.get(external_id="late")
    answer(late_client, late_rater)
    answer(late_client, late_rater)  # the story study's two pages of one item
    page = late_client.get(late["Location"])
    assert "Nothing to rate right now" in page.content.decode()  # the seat is held, not finished: wait


def test_full_is_decided_before_consent_and_demographics(client, study):
    study.items.exclude(external_id="h1").delete()
    holder = Rater.objects.create(study=study, external_id="holder")
    Client().get(url_of(holder))
    study.consent_text, study.ask_demographics = "I agree to take part.", True
    study.save()
    invited = Rater.objects.create(study=study)
    response = client.get(url_of(invited))
    html = response.content.decode()
    assert "This study is full" in html and "I agree to take part." not in html
    assert client.post(url_of(invited), {"page": "consent", "agree": "on"}).status_code == 302
    invited.refresh_from_db()
    assert (invited.consented_at, invited.demographics) == (None, {})


@pytest.mark.parametrize("status", ["closed", "draft"])
def test_a_participant_who_finished_gets_their_code_back_through_the_open_link_whatever_the_status(study, status):
    study.items.exclude(external_id="h1").delete()
    client, response = _join(study, "done-1")
    client.post(response["Location"], {"page": "start"})
    rater = Rater.objects.get(external_id="done-1")
    page = answer(client, rater)
    while "completion-code" not in page.content.decode():
        page = answer(client, rater)
    code = Assignment.objects.get(rater=rater).completion_code
    study.status = status
    study.save()
    back = Client().get(f"/s/{study.open_token}/?PROLIFIC_PID=done-1", follow=True)
    assert back.status_code == 200 and code in back.content.decode()
    stranger = Client().get(f"/s/{study.open_token}/?PROLIFIC_PID=someone-else")
    assert stranger.status_code == 403 and code not in stranger.content.decode()
    assert not Rater.objects.filter(external_id="someone-else").exists()


def test_rater_numbers_start_at_1_in_each_study(study, researcher):
    from annotations.services import invitations_create
    from annotations.studies import study_create_from_template

    other = open_study(study_create_from_template(slug="other", template="story-likert", owner=researcher),
                       open_link_enabled=True)
    add_story_items(other)
    invitations_create(study=study, count=3)
    _join(study, "p-1")
    invited = invitations_create(study=other, count=2)
    _join(other, "p-2")
    assert [str(r) for r in invited] == ["rater-1", "rater-2"]
    assert list(other.raters.order_by("number").values_list("number", flat=True)) == [1, 2, 3]
    assert list(study.raters.order_by("number").values_list("number", flat=True)) == [1, 2, 3, 4]
