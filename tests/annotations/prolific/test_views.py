"""The study's Prolific page and the webhook endpoint, against the local Prolific server."""
from __future__ import annotations

import pytest

from annotations.models import ProlificEvent, ProlificStudy, ProlificSubmission
from tests.support.prolific_participants import REJECTION, TOKEN_ENV, finish


def page_of(client, study):
    return client.get(f"/studies/{study.slug}/prolific/").content.decode()


def publish(client, study):
    return client.post(f"/studies/{study.slug}/prolific/publish/",
                       {"token_env": TOKEN_ENV, "reward_cents": "150", "minutes": "10"}, follow=True)


@pytest.mark.django_db
def test_the_page_publishes_follows_pauses_resumes_and_rejects_without_showing_the_token(
        client, prolific, study, researcher):
    client.force_login(researcher)
    assert TOKEN_ENV in page_of(client, study)  # offered by name
    publish(client, study)
    link = ProlificStudy.objects.get(study=study)
    assert prolific.study(link.prolific_id)["status"] == "ACTIVE"
    finish(prolific, link, "pid-fran")
    finish(prolific, link, "pid-gus", check_answer=1)
    client.post(f"/studies/{study.slug}/prolific/sync/")
    html = page_of(client, study)
    assert 'id="prolific-pause">' in html.replace(" disabled", "X") and 'id="prolific-resume" disabled' in html
    assert "APPROVED" in html and "to review" in html and prolific.token not in html

    gus = ProlificSubmission.objects.get(participant_id="pid-gus")
    short = client.post(f"/studies/{study.slug}/prolific/reject/",
                        {"submission_id": gus.submission_id, "category": "FAILED_CHECK", "message": "no"}, follow=True)
    assert "at least 100 characters" in short.content.decode()
    assert prolific.submission(gus.submission_id)["status"] == "AWAITING REVIEW"
    client.post(f"/studies/{study.slug}/prolific/reject/",
                {"submission_id": gus.submission_id, "category": "FAILED_CHECK", "message": REJECTION})
    assert prolific.submission(gus.submission_id)["status"] == "REJECTED"

    client.post(f"/studies/{study.slug}/prolific/pause/")
    assert prolific.study(link.prolific_id)["status"] == "PAUSED"
    assert 'id="prolific-pause" disabled' in page_of(client, study)
    client.post(f"/studies/{study.slug}/prolific/resume/")
    assert prolific.study(link.prolific_id)["status"] == "ACTIVE"

    # Neither the token nor any environment value reaches a page, an export or an API answer.
    answers = {
        "page": page_of(client, study),
        "study home": client.get(f"/studies/{study.slug}/home/").content.decode(),
        "raters page": client.get(f"/studies/{study.slug}/raters/").content.decode(),
        "demographics": _streamed(client.get(f"/studies/{study.slug}/export/demographics.csv")),
        "ratings": _streamed(client.get(f"/api/studies/{study.slug}/ratings.csv")),
        "api study": client.get(f"/api/studies/{study.slug}/").content.decode(),
        "analysis": client.get(f"/studies/{study.slug}/analysis.json").content.decode(),
    }
    for where, text in answers.items():
        assert prolific.token not in text, where
    assert "pid-fran" in answers["demographics"] and "APPROVED" in answers["demographics"]
    assert "On Prolific: active" in answers["study home"] and 'id="human-per-rating"' in answers["study home"]


def _streamed(response) -> str:  # noqa: ANN001
    return b"".join(response.streaming_content).decode()


@pytest.mark.django_db
def test_another_researcher_neither_sees_nor_publishes(client, prolific, study, other_researcher):
    client.force_login(other_researcher)
    assert client.get(f"/studies/{study.slug}/prolific/").status_code == 404
    assert client.post(f"/studies/{study.slug}/prolific/publish/",
                       {"token_env": TOKEN_ENV, "reward_cents": "150", "minutes": "10"}).status_code == 404
    assert not ProlificStudy.objects.exists() and prolific.request_count("studies.create") == 0


@pytest.mark.django_db
def test_a_token_not_granted_to_the_researcher_publishes_nothing(client, prolific, study, researcher, settings):
    settings.PROLIFIC_TOKEN_VARIABLES = [f"{TOKEN_ENV}=superusers"]
    client.force_login(researcher)
    html = publish(client, study).content.decode()
    assert "Choose a token variable granted to you" in html
    assert not ProlificStudy.objects.exists() and prolific.request_count("studies.create") == 0


@pytest.mark.django_db(transaction=True)
def test_a_signed_webhook_is_followed_once_and_a_forged_one_is_refused(prolific, study, researcher, live_server,
                                                                       settings):
    from annotations.prolific.publishing import prolific_publish

    settings.PROLIFIC_WEBHOOK_SECRET = prolific.webhook_secret()
    link = prolific_publish(study=study, token_env=TOKEN_ENV, reward_cents=150, minutes=10,
                            base_url="http://testserver", user=researcher)
    prolific.subscribe(live_server.url + "/prolific/webhook/")
    finish(prolific, link, "pid-hal")
    reads_before = prolific.request_count("submissions.get")
    deliveries = prolific.deliver_events(times=2)  # at least once: every event twice, same X-Event-ID
    assert {d.status for d in deliveries} == {204}
    submission = ProlificSubmission.objects.get(participant_id="pid-hal")
    assert submission.status == "APPROVED"  # the completion's event was followed and the rule approved it
    events = ProlificEvent.objects.count()
    assert events == len(deliveries) // 2
    assert prolific.request_count("submissions.get") - reads_before == events  # duplicates dropped before any call

    settings.PROLIFIC_WEBHOOK_SECRET = "another-secret"
    prolific.participant_starts(link.prolific_id, "pid-ida")
    assert {d.status for d in prolific.deliver_events()} == {403}
    assert not ProlificSubmission.objects.filter(participant_id="pid-ida").exists()


@pytest.mark.django_db(transaction=True)
def test_a_study_paused_on_prolifics_site_is_seen_through_its_webhook(prolific, study, researcher, live_server,
                                                                      settings):
    from annotations.models import ProlificTransition
    from annotations.prolific.client import ProlificClient
    from annotations.prolific.publishing import prolific_publish

    settings.PROLIFIC_WEBHOOK_SECRET = prolific.webhook_secret()
    link = prolific_publish(study=study, token_env=TOKEN_ENV, reward_cents=150, minutes=10,
                            base_url="http://testserver", user=researcher)
    prolific.subscribe(live_server.url + "/prolific/webhook/", "study.status.change")
    ProlificClient(token=prolific.token, base_url=prolific.url).pause_study(link.prolific_id)  # on Prolific's site
    assert {d.status for d in prolific.deliver_events()} == {204}
    link.refresh_from_db()
    assert link.status == "PAUSED"
    assert ProlificTransition.objects.filter(resource="study", to_status="PAUSED", actor="prolific").count() == 1
