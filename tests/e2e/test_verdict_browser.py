"""The verdict on the dashboard of a real dataset (AltTest's CEBaB stars), read in headless Chromium.

The study is built from the authors' annotator-keyed files through the ordinary long-format ratings import
(one LLM pool per model); the cards' numbers must be the statistics module's on the same labels.
"""
from __future__ import annotations

import pytest

from annotations.studies import study_create
from evalhub.stats.alt_test import alt_test
from tests.conftest import shared_path
from tests.e2e.conftest import SCREENSHOTS
from tests.evalhub.factories import import_long
from tests.support.alt_test_data import read_alt_test_dataset
from tests.support.browser import log_in

SLUG = "cebab-stars"
EPSILON = 0.1  # the authors' setting for CEBaB stars (crowd workers), chosen in the browser below


@pytest.fixture
def cebab_stars(transactional_db, django_user_model, tmp_path):
    """Created before the browser starts: Playwright's loop would make Django refuse the ORM calls."""
    dataset = read_alt_test_dataset(shared_path("data", "AltTest", "data", "cebab_stars"))
    owner = django_user_model.objects.create_user(username="owner", password="pw-owner-123")
    study = study_create(slug=SLUG, owner=owner, spec={
        "title": "CEBaB stars", "llm_template": "{review}\n\n{question} Answer 1-5.", "item_fields": ["review"],
        "scale": {"min": 1, "max": 5}, "questions": [{"key": "stars", "text": "How many stars?"}]})
    rows = []
    for rater, labels in dataset.humans.items():
        rows += [(instance.removesuffix("__stars"), "reviews", "stars", "human", rater, int(label))
                 for instance, label in labels.items()]
    for llm, labels in dataset.llms.items():
        rows += [(instance.removesuffix("__stars"), "reviews", "stars", llm, "0", int(label))
                 for instance, label in labels.items()]
    import_long(study, rows, tmp_path)
    return dataset


@pytest.mark.e2e
def test_the_dashboard_opens_with_a_verdict_card_per_llm_whose_numbers_are_the_stats_modules(page, cebab_stars):
    log_in(page, f"/studies/{SLUG}/", "owner", "pw-owner-123")

    # The researcher chooses the crowd-worker epsilon with the selector and its guidance.
    form = page.locator("#epsilon-form")
    assert "0.1 for crowd workers" in form.inner_text()
    page.select_option("#id_alt_epsilon", str(EPSILON))
    page.click("#epsilon-form button[type=submit]")
    page.wait_for_url(f"**/studies/{SLUG}/#verdict")

    cards = page.locator("article.verdict-card")
    assert cards.count() == len(cebab_stars.llms) == 6
    seen_rhos = []
    for k in range(cards.count()):
        card = cards.nth(k)
        pool = card.get_attribute("data-pool")
        want = alt_test(cebab_stars.humans, cebab_stars.llms[pool], scoring="neg_rmse", epsilon=EPSILON)
        headline = card.locator("p.headline")
        assert headline.count() == 1 and headline.is_visible()
        text = headline.inner_text()
        beaten = sum(h.rejected for h in want.humans)
        assert float(headline.get_attribute("data-winning-rate")) == pytest.approx(want.winning_rate)
        assert float(headline.get_attribute("data-advantage")) == pytest.approx(want.advantage_probability)
        assert headline.get_attribute("data-passed") == ("true" if want.passed else "false")
        verb = "can replace your raters" if want.passed else "cannot yet replace your raters"
        assert f"{pool} {verb} on stars: it beat {beaten} of {len(want.humans)} raters" in text
        assert f"ρ = {want.advantage_probability:.2f}, ε = 0.1" in text
        seen_rhos.append(want.advantage_probability)

        # The per-human table opens with a click and lists every human tested, with the skipped ones noted.
        table = card.locator("table.alt-humans")
        assert not table.is_visible()
        card.locator("summary").click()
        assert table.is_visible()
        assert table.locator("tbody tr").count() == len(want.humans)
        shown = {tr.locator("td").nth(0).inner_text(): tr.locator("td").nth(4).inner_text()
                 for tr in table.locator("tbody tr").all()}
        assert shown == {h.rater: f"{h.advantage:.2f}" for h in want.humans}
    assert seen_rhos == sorted(seen_rhos, reverse=True)  # the pools are ranked by rho
    SCREENSHOTS.mkdir(exist_ok=True)
    page.locator("#verdict").screenshot(path=str(SCREENSHOTS / "dashboard-verdict.png"))
