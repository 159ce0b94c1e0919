"""Following a published study (annotations/prolific/following.py): when every seat is filled, the Prolific study
stops taking places, although Prolific still has places free."""
from __future__ import annotations

import pytest
from django.test import Client

from annotations.models import ProlificTransition, Rater
from annotations.prolific.following import prolific_sync
from annotations.prolific.publishing import prolific_publish
from tests.support.prolific_participants import TOKEN_ENV, Arrival, answer_pages, finish


@pytest.mark.django_db
def test_a_full_study_pauses_its_prolific_study(prolific, study, researcher):
    link = prolific_publish(study=study, token_env=TOKEN_ENV, reward_cents=150, minutes=10,
                            base_url="http://testserver", user=researcher)
    finish(prolific, link, "pid-mo")
    report = prolific_sync(link=link)
    assert not report.paused_full and prolific.study(link.prolific_id)["status"] == "ACTIVE"
    for _ in range(3):  # three invited raters take the other seats: 8 seats of 2 items each
        rater = Rater.objects.create(study=study)
        answer_pages(Arrival(participation=None, client=Client(), rater_url=f"/r/{rater.token}/"))  # type: ignore[arg-type]
    report = prolific_sync(link=link)
    remote = prolific.study(link.prolific_id)
    assert report.paused_full and remote["status"] == "PAUSED" and remote["places_taken"] == 1
    assert ProlificTransition.objects.filter(resource="study", to_status="PAUSED", actor="evalhub").count() == 1
    assert not prolific_sync(link=link).paused_full  # paused once
