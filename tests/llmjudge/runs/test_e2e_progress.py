"""In headless Chromium: a researcher starts a judge run and watches the progress bar reach 100 %."""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def session_cookie(story_with_items, make_judge, researcher, client):
    """Everything that touches the database happens before the browser starts: Playwright's sync API
    runs in a greenlet, where Django would open (and never close) a second connection."""
    make_judge("e2e", concurrency=2, options={"fake_latency": 0.1})
    client.force_login(researcher)
    return client.cookies["sessionid"].value


@pytest.mark.services("postgresql", reason="a second thread writing needs a real database server")
def test_the_progress_bar_moves_to_100_percent_in_the_browser(session_cookie, live_url, browser_page, worker_threads):
    page = browser_page
    page.context.add_cookies([{"name": "sessionid", "value": session_cookie, "url": live_url}])
    page.goto(f"{live_url}/llm/studies/story/")
    page.select_option("#id_judge", label="e2e")
    page.click("#run-form button")

    page.wait_for_selector("#bar")
    first = float(page.get_attribute("#bar", "aria-valuenow"))
    page.wait_for_function("() => document.getElementById('f-status').textContent === 'done'", timeout=30_000)
    assert first < 100
    assert float(page.get_attribute("#bar", "aria-valuenow")) == 100
    assert page.text_content("#f-done") == page.text_content("#f-total") == "36"
    assert page.eval_on_selector("#bar-fill", "el => el.style.width") == "100%"


@pytest.fixture
def running_run(story_with_items, make_judge, researcher, client):
    """A run the page shows as running, and the researcher's session (all before the browser starts)."""
    from llmjudge.models import JudgeRun

    judge = make_judge("e2e-polling")
    run = JudgeRun.objects.create(study=story_with_items, judge=judge, status=JudgeRun.Status.RUNNING)
    client.force_login(researcher)
    return run.pk, client.cookies["sessionid"].value


def test_progress_polling_survives_failed_requests_and_shows_that_it_reconnects(running_run, live_url, browser_page):
    run_id, cookie = running_run
    page = browser_page
    page.context.add_cookies([{"name": "sessionid", "value": cookie, "url": live_url}])
    answered = {"failures": 0}
    done = {"run_id": run_id, "status": "done", "total": 36, "done": 36, "pending": 0, "percent": 100.0, "ok": 36,
            "unparseable": 0, "refused": 0, "failed": 0, "steps_total": 0, "steps_done": 0, "calls": 36,
            "calls_per_second": 3.0, "tokens_prompt": 0, "tokens_completion": 0, "cost_usd": 0.0, "error": ""}

    def progress(route):
        # The first three polls fail as a restarting server or a dropped connection would; then the run is done.
        if answered["failures"] < 2:
            answered["failures"] += 1
            route.fulfill(status=503, body="unavailable")
        elif answered["failures"] == 2:
            answered["failures"] += 1
            route.abort("connectionreset")
        else:
            route.fulfill(status=200, content_type="application/json", body=__import__("json").dumps(done))

    page.route("**/progress*", progress)
    page.goto(f"{live_url}/llm/runs/{run_id}/")
    page.wait_for_function("() => !document.getElementById('f-connection').hidden", timeout=10_000)
    assert "Reconnecting" in page.text_content("#f-connection")
    page.wait_for_function("() => document.getElementById('f-status').textContent === 'done'", timeout=20_000)
    assert answered["failures"] == 3
    assert page.is_hidden("#f-connection")
    assert page.get_attribute("#bar", "aria-valuenow") == "100"
