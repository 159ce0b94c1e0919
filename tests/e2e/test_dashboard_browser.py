"""The demo study's dashboard in real headless Chromium: tables and charts are there and visible."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalhub.demo.loader import demo_load
from tests.evalhub.factories import import_long
from tests.support.browser import chromium

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


@pytest.fixture
def demo_story(transactional_db, tmp_path):
    """The demo study plus an imported LLM pool (three samples per item and question).

    Created before the browser starts: Playwright's sync API runs an event loop in this thread, and
    Django refuses ORM calls from a thread with a running loop.
    """
    study = next(s for s in demo_load() if s.slug == "demo-story")
    rows = [(item.external_id, item.group, question.key, "sim-judge", str(sample),
             min(5, 2 + (n + sample) % 4 + (1 if item.group == "human" else 0)))
            for n, item in enumerate(study.items.all()) for question in study.questions.all() for sample in range(3)]
    import_long(study, rows, tmp_path)
    return study


@pytest.fixture
def browser_page(demo_story):
    with chromium() as browser:
        yield browser.new_page(viewport={"width": 1400, "height": 1000})


@pytest.mark.e2e
def test_demo_dashboard_shows_tables_and_charts_in_chromium(live_server, demo_story, browser_page):
    page = browser_page
    page.goto(f"{live_server.url}/admin/login/?next=/studies/demo-story/")
    page.fill("#id_username", "demo")
    page.fill("#id_password", "demo")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/studies/demo-story/")

    assert page.locator("h1").inner_text() == demo_story.title
    table1 = page.locator("#table1")
    assert table1.is_visible()
    assert table1.locator("tbody tr").count() == 2  # human raters, sim-judge
    assert "cohesiveness" in table1.locator("thead").inner_text()
    assert page.locator("#kendall tbody tr").count() == 1
    # The demo has 3 items per group: tau is withheld there as alpha is (issue 25, second review U6), the note in its
    # place and no band; a tau that is undefined says why in words (issue 25, third review U1).
    cells = page.locator("#kendall tbody td:not(.first)")
    assert cells.count() == 4 * 2 and page.locator("#kendall .tau-note").count() == 4 * 2
    assert all(cells.nth(k).inner_text() == "too few items, n = 3" or
               re.fullmatch(r"τ undefined: the (human raters'|LLM pool's) item means are all equal \(\d\.\d\d\) on the 3 items",
                            cells.nth(k).inner_text()) for k in range(cells.count()))
    assert page.locator("ul.welch li").count() == 4 * 2
    for section in ("#charts-distribution", "#charts-scatter", "#charts-alpha"):
        assert page.locator(section).is_visible()
    charts = page.locator("figure.chart svg")
    assert charts.count() == 4 * 2 + 4  # distributions per question x group, scatters
    # On 3 items per group every α is withheld: each question's α chart is one line of text (fourth review, C1).
    assert page.locator("#charts-alpha ~ p.alpha-withheld").count() == 4
    box = charts.first.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 150
    assert page.locator("figure.chart svg circle").count() > 0

    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "dashboard-demo-story.png"), full_page=True)

    page.check("#filters input[value=relevance]")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**question=relevance**")
    assert page.locator("#table1 thead").inner_text().split() [0:2] == ["pool", "relevance"]
