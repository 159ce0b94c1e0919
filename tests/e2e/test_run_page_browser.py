"""A judge run's page in Chromium: while the run works, Resume is disabled and Pause and Cancel are not; once it
finishes, the answers appear and Pause, Resume and Cancel are disabled, all without a reload."""
from __future__ import annotations

import pytest

from llmjudge.models import Judge
from llmjudge.runs import chunks
from llmjudge.runs import lifecycle as judging
from tests.support.raterkit import add_story_items

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_finished_runs_answers_and_buttons_follow_without_a_reload(page, story_study, researcher):
    add_story_items(story_study)
    judge = Judge.objects.create(name="offline", backend=Judge.Backend.FAKE, owner=researcher)
    run = judging.judge_run_start(study=story_study, judge=judge, enqueue=False)
    page.goto("/accounts/login/")
    page.fill("#id_username", "owner")
    page.fill("#id_password", "pw-owner-123")
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.goto(f"/llm/runs/{run.pk}/")
    page.evaluate("() => { window.notReloaded = true; }")
    assert page.locator("#answers").inner_text().count("No answers yet.") == 1
    assert page.locator("#resume").is_disabled() and page.locator("#retry").is_disabled()
    assert page.locator("#pause").is_enabled() and page.locator("#cancel").is_enabled()

    chunks.run_chunk(run_id=run.pk, rating_ids=None)  # what a worker does

    page.wait_for_function("() => document.getElementById('f-status').textContent === 'done'")
    page.wait_for_function("() => !document.getElementById('answers').textContent.includes('No answers yet.')")
    assert page.evaluate("() => window.notReloaded") is True  # the same page, never reloaded
    assert page.locator("#answers tr").count() > 1
    for button in ("#pause", "#resume", "#retry", "#cancel"):
        assert page.locator(button).is_disabled(), button
