"""A researcher runs a whole study in headless Chromium, with no admin page and no command: creates it
from a template, uploads items, opens it, creates a rater link that a rater (a second browser context)
follows to the end, creates and runs the offline demo judge, and reads both pools on the dashboard.

The judge's chunks run inline in the live server's thread (the way tests/llmjudge's `inline_chunks`
stands in for a worker), so one thread writes at a time and the walk works on SQLite and PostgreSQL.
With EVALHUB_UPDATE_SCREENSHOTS=1 the screenshots go to docs/screenshots/ (used by the README and
docs/raters.md); otherwise to tests/e2e/screenshots/ (gitignored).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotations.models import HumanRating, Study
from llmjudge.models import Judge, JudgeRun, LLMRating
from tests.support.raterkit import STORIES

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DOCS_SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
TEST_SHOTS = Path(__file__).resolve().parent / "screenshots"


@pytest.fixture
def inline_judge_chunks(monkeypatch):
    from llmjudge import tasks

    def apply_async(args, queue):  # noqa: ANN001
        tasks.judge_chunk(*args)

    monkeypatch.setattr(tasks.judge_chunk, "apply_async", apply_async)


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    good = tmp_path / "items.csv"
    good.write_text("id,group,story,prompt\n" + "".join(f'{i},{g},"{s}","{p}"\n' for i, g, s, p in STORIES))
    bad = tmp_path / "items-bad.csv"
    bad.write_text("id,group,story,prompt\nh1,human,A story.,A prompt.\nh1,human,Again.,Again.\n")
    return {"good": good, "bad": bad}


def _shot(page, name: str) -> None:  # noqa: ANN001
    folder = DOCS_SHOTS if os.environ.get("EVALHUB_UPDATE_SCREENSHOTS") == "1" else TEST_SHOTS
    folder.mkdir(exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"))  # the viewport only: small files for the docs


def _rate_story_study(page, n_items: int) -> str:  # noqa: ANN001
    """A rater's whole assignment on the story protocol: three questions, then the revealed prompt."""
    for _ in range(n_items):
        for n, value in enumerate((4, 3, 5)):
            page.locator("fieldset.question").nth(n).locator("label").nth(value - 1).click()
        with page.expect_navigation():
            page.get_by_role("button", name="Next").click()
        page.locator("fieldset.question").nth(0).locator("label").nth(3).click()
        with page.expect_navigation():
            page.get_by_role("button", name="Next").click()
    return page.locator("#completion-code").inner_text()


def test_a_researcher_runs_a_whole_study_in_the_browser(researcher, browser, live_server, files,
                                                        inline_judge_chunks):
    context = browser.new_context(viewport={"width": 1100, "height": 820}, base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(15_000)
    _create_a_study(page)
    _import_items_and_open(page, files)
    _a_rater_follows_a_link_to_the_end(page, browser)
    _run_the_demo_judge(page)

    # 5. The study's page lists the run; the dashboard shows both pools.
    page.click("#nav-study-home")
    assert "demo judge" in page.locator("#runs").inner_text()
    page.click("#dashboard-link")
    pools = page.locator("table.pools tbody tr")
    assert pools.count() == 2
    assert "human" in pools.nth(0).inner_text()
    assert "demo judge" in page.locator("table.pools").inner_text()
    _shot(page, "dashboard")
    context.close()

    study = Study.objects.get(slug="walk")
    assert study.owner == researcher and study.status == Study.Status.OPEN
    assert HumanRating.objects.filter(rater__study=study).count() == len(STORIES) * 4
    run = JudgeRun.objects.get(study=study)
    assert run.judge == Judge.objects.get(name="demo judge", owner=researcher) and run.status == "done"
    assert LLMRating.objects.filter(run=run).exclude(status="pending").count() > 0


def _create_a_study(page) -> None:
    """1. Log in and create a new study from a template."""
    page.goto("/accounts/login/")
    page.fill("#id_username", "owner")
    page.fill("#id_password", "pw-owner-123")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    page.goto("/")
    page.click("#new-study-link")
    page.fill("#id_slug", "walk")
    page.select_option("#id_template", "story-likert")
    _shot(page, "new-study")
    with page.expect_navigation():
        page.get_by_role("button", name="Create the study").click()
    assert page.url.endswith("/studies/walk/home/")
    assert page.locator("#study-status").inner_text() == "Draft"


def _import_items_and_open(page, files) -> None:
    """2. Opening without items is refused in one line; a bad file imports nothing and says why, by its
    field; the good file imports; then the study opens."""
    with page.expect_navigation():
        page.click("#open-study")
    assert "has no item" in page.locator("ul.messages li.error").inner_text()
    page.set_input_files("#id_items-file", str(files["bad"]))
    with page.expect_navigation():
        page.click("#upload-items button[type=submit]")
    error = page.locator("#upload-items ul.errorlist li")
    assert "line 3: duplicate id 'h1' in the file" in error.inner_text() and error.is_visible()
    assert page.locator("#n-items").inner_text() == "0"
    page.set_input_files("#id_items-file", str(files["good"]))
    with page.expect_navigation():
        page.click("#upload-items button[type=submit]")
    assert page.locator("#n-items").inner_text() == "4"
    with page.expect_navigation():
        page.click("#open-study")
    assert page.locator("#study-status").inner_text() == "Open"
    _shot(page, "study-home")


def _a_rater_follows_a_link_to_the_end(page, browser) -> None:
    """3. Create a rater link; a rater (another browser, no account) follows it to the end."""
    page.fill("#id_count", "1")
    with page.expect_navigation():
        page.click("#create-links")
    link = page.locator("input.link").first.input_value()
    assert "/r/" in link
    _shot(page, "raters")
    rater_context = browser.new_context(viewport={"width": 1000, "height": 800})
    rater = rater_context.new_page()
    rater.set_default_timeout(15_000)
    rater.goto(link)
    code = _rate_story_study(rater, len(STORIES))
    assert len(code) == 8
    rater_context.close()
    page.click("#nav-study-home")
    assert page.locator("#n-ratings").inner_text() == str(len(STORIES) * 4)
    assert page.locator("#n-raters").inner_text() == "1 / 1"


def _run_the_demo_judge(page) -> None:
    """4. The demo judge: "Run judge" with nothing chosen shows its error by the menu; create the judge
    (offline "fake" backend), which the menu then preselects; run it to the end."""
    page.click("#runs-page")
    with page.expect_navigation():
        page.get_by_role("button", name="Run judge").click()
    assert page.locator("#field-judge ul.errorlist li").inner_text() == "Choose a judge to run."
    page.click("#new-judge-link")
    page.fill("#id_name", "demo judge")
    assert page.locator("#id_backend").input_value() == "fake"
    _shot(page, "new-judge")
    with page.expect_navigation():
        page.get_by_role("button", name="Create the judge").click()
    judge = page.locator("#run-form #id_judge option:checked")
    assert judge.inner_text() == "demo judge"
    with page.expect_navigation():
        page.get_by_role("button", name="Run judge").click()
    page.wait_for_function("() => document.getElementById('f-status').textContent === 'done'")
    assert page.text_content("#f-done") == page.text_content("#f-total")
    _shot(page, "run")
