"""Prolific participants in real Chromium (issue 25, item 5): a full study says so at the open link, before any
consent or demographics page, and stores nothing of the newcomer; a participant who finished gets their
completion code back through the open link after the study closed."""
from __future__ import annotations

import pytest

from annotations.models import Assignment, HumanRating, ItemClaim, Rater, Study
from tests.support.raterkit import add_story_items, open_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CONSENT = "I agree that my answers are used for research."


@pytest.fixture
def prolific_study(story_study):
    add_story_items(story_study, [("h1", "human", "Marta climbs the steps each evening.", "A keeper.")])
    return open_study(story_study, raters_per_item=1, open_link_enabled=True, consent_text=CONSENT,
                      ask_demographics=True)


def _link(live_server, study: Study, pid: str) -> str:  # noqa: ANN001
    return f"{live_server.url}/s/{study.open_token}/?PROLIFIC_PID={pid}&STUDY_ID=st-1&SESSION_ID=se-{pid}"


def _finish(page) -> str:  # noqa: ANN001 - consent, demographics, the item's two pages; returns the code
    page.get_by_label("agree to take part").check()
    with page.expect_navigation():
        page.get_by_role("button", name="Start").click()
    for select in page.locator("select").all():
        select.select_option(index=1)
    page.get_by_label("Native language(s)").fill("English")
    with page.expect_navigation():
        page.get_by_role("button", name="Continue").click()
    for count in (3, 1):
        for n in range(count):
            page.locator("fieldset.question").nth(n).locator("label").nth(2).click()
        with page.expect_navigation():
            page.get_by_role("button", name="Next").click()
    return page.locator("#completion-code").inner_text()


def test_a_full_study_says_so_at_the_open_link_before_consent_and_stores_nothing(prolific_study, page, live_server):
    page.goto(_link(live_server, prolific_study, "first-pid"))
    with page.expect_navigation():
        page.get_by_role("button", name="Start rating").click()
    assert page.get_by_text(CONSENT).is_visible()
    code = _finish(page)  # the only seat is now taken for good
    stored = (Rater.objects.count(), Assignment.objects.count(), ItemClaim.objects.count(),
              HumanRating.objects.count())

    page.goto(_link(live_server, prolific_study, "late-pid"))
    assert page.get_by_role("heading", name="This study is full").is_visible()
    assert not page.get_by_text(CONSENT).is_visible() and page.locator("select").count() == 0
    page.get_by_role("link", name="Check again").click()
    assert page.get_by_role("heading", name="This study is full").is_visible()
    assert (Rater.objects.count(), Assignment.objects.count(), ItemClaim.objects.count(),
            HumanRating.objects.count()) == stored
    assert not Rater.objects.filter(external_id="late-pid").exists()
    assert not Rater.objects.filter(external_session_id="se-late-pid").exists()

    prolific_study.status = Study.Status.CLOSED
    prolific_study.save()
    page.goto(_link(live_server, prolific_study, "first-pid"))
    assert page.locator("#completion-code").inner_text() == code
