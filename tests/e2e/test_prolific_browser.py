"""The researcher's Prolific page in real headless Chromium against the local Prolific server: publish from the
page, participants arrive through the open link, the page follows their submissions, shows approvals, rejects
the one that failed its check with a message, pauses and resumes (each button disabled where it cannot act)."""
from __future__ import annotations

import pytest

from annotations.models import ProlificStudy
from tests.support.prolific_participants import REJECTION, TOKEN_ENV, finish
from tests.support.prolific_server import ProlificServer
from tests.support.raterkit import add_story_items, open_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def prolific(settings, monkeypatch):
    with ProlificServer() as server:
        settings.PROLIFIC_API_URL = server.url
        settings.PROLIFIC_TOKEN_VARIABLES = [f"{TOKEN_ENV}=user:owner"]
        # Every participant arrives from 127.0.0.1; the per-address limit on new open-link raters is not under test
        # (and under REDIS_URL its count outlives the test).
        settings.OPEN_LINK_RATERS_PER_ADDRESS = 100_000
        monkeypatch.setenv(TOKEN_ENV, server.token)
        yield server


def _post(page, button: str) -> None:  # noqa: ANN001
    with page.expect_navigation():
        page.click(button)


def test_a_researcher_publishes_follows_and_reviews_on_the_prolific_page(page, prolific, story_study, live_server,
                                                                         settings, shoot):
    settings.PUBLIC_BASE_URL = live_server.url
    add_story_items(story_study)
    open_study(story_study, raters_per_item=2, items_per_rater=2, attention_positions=[1], attention_rule="warn")
    page.goto("/accounts/login/")
    page.fill("#id_username", "owner")
    page.fill("#id_password", "pw-owner-123")
    _post(page, "button[type=submit]")
    page.goto(f"/studies/{story_study.slug}/prolific/")
    page.select_option("#id_token_env", TOKEN_ENV)
    page.fill("#id_reward_cents", "150")
    page.fill("#id_minutes", "12")
    _post(page, "#prolific-publish-button")
    assert page.locator("#prolific-status").inner_text() == "ACTIVE"
    assert prolific.token not in page.content()
    link = ProlificStudy.objects.get(study=story_study)
    remote = prolific.study(link.prolific_id)
    assert remote["external_study_url"].startswith(live_server.url + "/s/")
    assert (remote["total_available_places"], remote["reward"], remote["estimated_completion_time"]) == (4, 150, 12)

    finish(prolific, link, "pid-jo")
    finish(prolific, link, "pid-kim", check_answer=1)
    _post(page, "#prolific-sync")
    rows = page.locator("#prolific-submissions")
    assert "APPROVED" in rows.locator("tr[data-participant=pid-jo] td.status").inner_text()
    assert "to review" in rows.locator("tr[data-participant=pid-kim] td.status").inner_text()
    assert page.locator("#prolific-resume").is_disabled() and page.locator("#prolific-pause").is_enabled()
    shoot(page, "prolific-page")

    kim = rows.locator("tr[data-participant=pid-kim]")
    kim.locator("summary").click()
    kim.locator("select[name=category]").select_option("FAILED_CHECK")
    kim.locator("textarea[name=message]").fill(REJECTION)
    _post(page, "tr[data-participant=pid-kim] form.reject button")
    assert "REJECTED" in page.locator("tr[data-participant=pid-kim] td.status").inner_text()
    assert "owner (FAILED_CHECK)" in page.locator("#prolific-transitions").inner_text()

    _post(page, "#prolific-pause")
    assert page.locator("#prolific-status").inner_text() == "PAUSED" and page.locator("#prolific-pause").is_disabled()
    _post(page, "#prolific-resume")
    assert page.locator("#prolific-status").inner_text() == "ACTIVE"
    assert prolific.study(link.prolific_id)["status"] == "ACTIVE"
