"""Issue 26's first "Done when", in real headless Chromium: a study set up entirely on its page's settings form
(consent, demographics, attention checks, three groups of the researcher's own naming), its items uploaded and
the study opened on the page, published to the local Prolific server, and the study's pages showing the
participants' submissions and their approvals. The participants answer through the open link as in
test_prolific_browser.py (tests/support/prolific_participants.py)."""
from __future__ import annotations

import pytest

from annotations.models import ProlificStudy, Study
from tests.support.prolific_participants import DEMOGRAPHICS, TOKEN_ENV, finish
from tests.support.prolific_server import ProlificServer

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ITEMS = """id,group,story,prompt
a1,alpha,Marta climbs the steps each evening.,A lighthouse keeper keeps the light on.
b1,beta,The phone was on the table. The table was a lake.,A text from your own number.
c1,gamma,The dragon opened a bakery.,A dragon retires.
a2,alpha,The dog is a dog and the dog.,A dog learns to talk.
b2,beta,Rain fell upward for an hour.,A town where weather is reversed.
c2,gamma,She kept every key she ever found.,A collector of keys.
"""


@pytest.fixture
def prolific(settings, monkeypatch):
    with ProlificServer() as server:
        settings.PROLIFIC_API_URL = server.url
        settings.PROLIFIC_TOKEN_VARIABLES = [f"{TOKEN_ENV}=user:owner"]
        settings.OPEN_LINK_RATERS_PER_ADDRESS = 100_000  # every participant arrives from 127.0.0.1
        monkeypatch.setenv(TOKEN_ENV, server.token)
        yield server


def _post(page, button: str) -> None:  # noqa: ANN001
    with page.expect_navigation():
        page.click(button)


def _set_up_on_the_settings_form(page) -> None:  # noqa: ANN001
    page.fill("#settings_title", "Short stories from three systems")
    page.fill("#settings_consent_text", "Your answers are used for research only. You may stop at any time.")
    page.select_option("#settings_ask_demographics", "yes")
    page.fill("#settings_raters_per_item", "2")
    page.fill("#settings_items_per_rater", "3")
    page.select_option("#settings_ordering", "mixed")
    page.fill("#settings_attention_positions", "1")
    page.select_option("#settings_attention_rule", "warn")
    page.fill("#settings_groups", "alpha\nbeta\ngamma")
    page.fill("#settings_contrasts", "alpha vs beta\nalpha vs gamma")
    _post(page, "#settings-save")


def test_a_study_set_up_on_its_settings_form_is_published_and_followed(page, prolific, story_study, live_server,
                                                                       settings, tmp_path, shoot):
    settings.PUBLIC_BASE_URL = live_server.url
    page.goto("/accounts/login/")
    page.fill("#id_username", "owner")
    page.fill("#id_password", "pw-owner-123")
    _post(page, "button[type=submit]")
    page.goto(f"/studies/{story_study.slug}/home/")
    _set_up_on_the_settings_form(page)
    assert "Settings saved (" in page.locator(".messages, #content, main").first.inner_text()
    shoot(page, "study-settings-draft")
    items = tmp_path / "items.csv"
    items.write_text(ITEMS, encoding="utf-8")
    page.set_input_files("#id_items-file", str(items))
    _post(page, "#upload-items button[type=submit]")
    _post(page, "#open-study")
    assert page.locator("#study-status").inner_text() == "Open"
    # Open: what earlier raters would have seen is fixed, and the form says why.
    assert page.locator("#settings_consent_text").is_disabled() and page.locator("#settings_groups").is_disabled()
    assert page.locator("#settings_raters_per_item").is_enabled()
    assert "raters have agreed to the consent text as it stands" in page.locator("#settings").inner_text()

    study = Study.objects.get(slug=story_study.slug)
    assert (study.groups, study.attention_positions, study.ask_demographics) == (["alpha", "beta", "gamma"], [1], True)
    assert set(study.items.values_list("group", flat=True)) == {"alpha", "beta", "gamma"}

    page.goto(f"/studies/{story_study.slug}/prolific/")
    page.select_option("#id_token_env", TOKEN_ENV)
    page.fill("#id_reward_cents", "150")
    page.fill("#id_minutes", "12")
    _post(page, "#prolific-publish-button")
    assert page.locator("#prolific-status").inner_text() == "ACTIVE"
    link = ProlificStudy.objects.get(study=story_study)
    remote = prolific.study(link.prolific_id)
    assert (remote["name"], remote["total_available_places"]) == ("Short stories from three systems", 4)

    jo = finish(prolific, link, "pid-jo")
    finish(prolific, link, "pid-kim", check_answer=1)  # fails the attention check after the first item
    assert jo.rater.consented_at is not None and jo.rater.demographics == DEMOGRAPHICS
    _post(page, "#prolific-sync")
    rows = page.locator("#prolific-submissions")
    assert "APPROVED" in rows.locator("tr[data-participant=pid-jo] td.status").inner_text()
    assert "to review" in rows.locator("tr[data-participant=pid-kim] td.status").inner_text()
    assert prolific.study(link.prolific_id)["status"] == "ACTIVE"

    page.goto(f"/studies/{story_study.slug}/home/")
    assert page.locator("#prolific-page").inner_text() == "On Prolific: active"
    assert page.locator("#n-raters").inner_text() == "2 / 2"
    summary = page.locator("#prolific-submissions-summary")
    assert summary.locator("[data-status=APPROVED]").inner_text() == "approved 1"
    assert summary.locator("[data-status='AWAITING REVIEW']").inner_text() == "awaiting review 1"
    shoot(page, "study-settings-open")
