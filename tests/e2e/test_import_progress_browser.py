"""The study page's import progress bar in headless Chromium: it follows the job's row as a worker moves it,
says "Reconnecting…" while the progress URL fails, and recovers (issue 18).

The job's row is moved by the test, as the task moves it (evalhub/imports/jobs.py writes bytes_done and the
status to this row); the browser only polls the page's progress URL under the page's CSP.
"""
from __future__ import annotations

import pytest

from annotations.models import ImportJob
from annotations.studies import study_create_from_template
from tests.support.browser import log_in

SLUG = "uploads"
SIZE = 10_000_000


@pytest.fixture
def job(transactional_db, django_user_model):
    owner = django_user_model.objects.create_user(username="owner", password="pw-owner-123")
    study = study_create_from_template(slug=SLUG, template="story-likert", owner=owner)
    return ImportJob.objects.create(study=study, kind=ImportJob.Kind.ITEMS, file_name="items.csv",
                                    path="/nonexistent/items.csv", size_bytes=SIZE, bytes_done=SIZE * 40 // 100,
                                    status=ImportJob.Status.CHECKING, created_by=owner)


def text_of(page, selector: str, expected: str) -> None:  # noqa: ANN001
    page.wait_for_function(f"() => document.querySelector({selector!r}).textContent.includes({expected!r})")


@pytest.mark.e2e
def test_the_bar_follows_the_job_says_reconnecting_and_ends_with_the_summary(page, job):
    log_in(page, f"/studies/{SLUG}/home/", "owner", "pw-owner-123")
    box = f"#import-{job.pk}"
    assert page.locator(f"{box} .bar-fill").inner_text().strip() == "40 %"

    ImportJob.objects.filter(pk=job.pk).update(bytes_done=SIZE * 80 // 100)
    text_of(page, f"{box} .bar-fill", "80 %")
    assert page.locator(f"{box} .bar").get_attribute("aria-valuenow") == "80"
    assert page.locator(f"{box} .job-status").inner_text() == "checking every row"

    # The progress URL fails for a while: the page says so and keeps polling.
    page.route(f"**/imports/{job.pk}/progress.json", lambda route: route.fulfill(status=502, body="bad gateway"))
    connection = page.locator(f"{box} .job-connection")
    connection.wait_for(state="visible")
    assert "Reconnecting" in connection.inner_text()
    page.unroute(f"**/imports/{job.pk}/progress.json")

    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.DONE, summary="created 12 items")
    text_of(page, f"{box} .job-outcome", "created 12 items")
    connection.wait_for(state="hidden")
    assert page.locator(f"{box} .job-status").inner_text() == "done"
    assert page.locator(f"{box} .bar-fill").inner_text().strip() == "100 %"
