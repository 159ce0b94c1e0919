"""In headless Chromium: a researcher starts a judge run and watches the progress bar reach 100 %."""
from __future__ import annotations

import pytest
from django.db import connection

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def session_cookie(story_with_items, make_judge, researcher, client):
    """Everything that touches the database happens before the browser starts: Playwright's sync API
    runs in a greenlet, where Django would open (and never close) a second connection."""
    make_judge("e2e", concurrency=2, options={"fake_latency": 0.1})
    client.force_login(researcher)
    return client.cookies["sessionid"].value


def test_the_progress_bar_moves_to_100_percent_in_the_browser(session_cookie, live_url, browser_page, worker_threads):
    if connection.vendor == "sqlite":
        pytest.skip("a second thread writing needs a real database server (runs in the PostgreSQL pass)")
    page = browser_page
    page.context.add_cookies([{"name": "sessionid", "value": session_cookie, "url": live_url}])
    page.goto(f"{live_url}/llm/studies/story/")
    page.select_option("#id_judge", label="e2e")
    page.click("#run-form button")

    page.wait_for_selector("#bar")
    first = float(page.get_attribute("#bar", "aria-valuenow"))
    page.wait_for_function("document.getElementById('f-status').textContent === 'done'", timeout=30_000)
    assert first < 100
    assert float(page.get_attribute("#bar", "aria-valuenow")) == 100
    assert page.text_content("#f-done") == page.text_content("#f-total") == "36"
    assert page.eval_on_selector("#bar-fill", "el => el.style.width") == "100%"
