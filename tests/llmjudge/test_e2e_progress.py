"""In headless Chromium: a researcher starts a judge run and watches the progress bar reach 100 %."""
from __future__ import annotations

import os
import threading

import pytest
from django.db import connection

from llmjudge import judging, tasks

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def browser_page(monkeypatch):
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is missing")
        pytest.skip("no Chromium on this machine")
    # Playwright's sync API runs its own event loop; pytest-django's async-unsafe check would
    # otherwise refuse the ORM calls this test makes around it.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        try:
            yield browser.new_page()
        finally:
            browser.close()


@pytest.fixture
def live_url(transactional_db):
    """A live server for this test only: pytest-django's session-wide one still holds a database
    connection when the test database is dropped at the end of the session."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread

    thread = LiveServerThread("localhost", StaticFilesHandler)
    thread.daemon = True
    thread.start()
    thread.is_ready.wait()
    if thread.error:
        raise thread.error
    yield f"http://localhost:{thread.port}"
    thread.terminate()


@pytest.fixture
def worker_threads(monkeypatch):
    """Stand-in for a Celery worker: each enqueued chunk runs in a thread of the test process."""
    threads: list[threading.Thread] = []

    def work(run_id: int, ids: list[int]) -> None:
        try:
            judging.run_chunk(run_id=run_id, rating_ids=ids)
        finally:
            connection.close()

    def apply_async(args, queue):  # noqa: ANN001
        thread = threading.Thread(target=work, args=tuple(args), daemon=True)
        threads.append(thread)
        thread.start()

    monkeypatch.setattr(tasks.judge_chunk, "apply_async", apply_async)
    yield threads
    for thread in threads:
        thread.join(timeout=30)


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
