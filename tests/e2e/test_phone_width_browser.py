"""The researcher's pages on a phone (issue 25): at 390 x 844 no page scrolls sideways as a whole, wide tables scroll
inside their own box, and charts shrink to the screen with every text of theirs inside their drawing.

The study is the dashboard review's small study (6 items, 3 raters, 4 questions, one LLM pool with 3 samples).
"""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotations.studies import study_create_from_template
from tests.e2e.conftest import SCREENSHOTS
from tests.evalhub.factories import import_long
from tests.support.small_study import small_study_rows

PHONE = {"width": 390, "height": 844}
SLACK = 4  # px: rounding of fractional widths

# The outermost elements that reach past the viewport's right edge, outside any box that scrolls sideways by itself (what makes
# the whole page scroll): named for the assertion's message.
OVERFLOWING = """(limit) => [...document.querySelectorAll("body *")].filter(el => {
  if (el.getBoundingClientRect().right <= limit || el.parentElement.getBoundingClientRect().right > limit) return false;
  for (let up = el.parentElement; up; up = up.parentElement) {
    if (getComputedStyle(up).overflowX !== "visible" && up !== document.body && up !== document.documentElement)
      return false;
  }
  return true;
}).slice(0, 12).map(el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + "." + (el.className.baseVal
  ?? el.className))"""

# Every legend text of the charts (a text beside a swatch) as (its y, the SVG's viewBox height), and every text's box
# against the viewBox.
CHART_TEXTS = """() => [...document.querySelectorAll("svg[role=img]")].flatMap(svg => {
  const box = svg.viewBox.baseVal, shown = svg.getBoundingClientRect(), scale = box.width / shown.width;
  return [...svg.querySelectorAll("text")].map(t => {
    const b = t.getBoundingClientRect();  // as drawn: rotated labels too; in viewBox units below
    return {text: t.textContent, legend: t.previousElementSibling?.tagName === "rect"
            && t.previousElementSibling.getAttribute("width") === "10",
            y: Number(t.getAttribute("y")), height: box.height, width: box.width,
            top: (b.top - shown.top) * scale, bottom: (b.bottom - shown.top) * scale,
            left: (b.left - shown.left) * scale, right: (b.right - shown.left) * scale};
  });
})"""


@pytest.fixture
def small_study(transactional_db, tmp_path):
    """The review's small study, and a session of its owner (made before the browser starts: see conftest)."""
    owner = get_user_model().objects.create_user("phone-owner", password="not-used")
    study = study_create_from_template(slug="phone", template="story-likert", owner=owner)
    import_long(study, small_study_rows(), tmp_path)
    client = Client()
    client.force_login(owner)
    return study, client.cookies["sessionid"].value


def _assert_fits_a_phone(page, name: str) -> None:  # noqa: ANN001 - Playwright's page
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"] + SLACK, (width, page.evaluate(OVERFLOWING, PHONE["width"] + SLACK))
    page.screenshot(path=str(SCREENSHOTS / f"phone-{name}.png"), full_page=True)


@pytest.mark.e2e
def test_the_dashboard_the_study_list_the_study_home_and_its_plan_fit_a_phones_width(small_study, browser, live_server):
    study, session = small_study
    context = browser.new_context(viewport=PHONE, base_url=live_server.url)
    context.add_cookies([{"name": "sessionid", "value": session, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(10_000)
    SCREENSHOTS.mkdir(exist_ok=True)
    try:
        page.goto(f"/studies/{study.slug}/")
        assert page.locator("#table1").is_visible()
        _assert_fits_a_phone(page, "dashboard")
        # Wide tables keep their width and scroll inside their own box.
        table1 = page.locator("#table1")
        assert table1.evaluate("t => t.scrollWidth") > PHONE["width"]
        assert table1.evaluate("t => getComputedStyle(t.parentElement).overflowX") == "auto"
        # Charts shrink to the screen, their proportions kept.
        charts = page.locator("figure svg[role=img]")
        assert charts.count() > 0
        for k in range(charts.count()):
            box = charts.nth(k).bounding_box()
            view = charts.nth(k).evaluate("s => [s.viewBox.baseVal.width, s.viewBox.baseVal.height]")
            assert box is not None and box["x"] + box["width"] <= PHONE["width"] + SLACK
            assert abs(box["width"] / box["height"] - view[0] / view[1]) < 0.02, (k, box, view)
        # Every text of every chart lies inside its drawing; the legends' in particular (issue 25 review, U1).
        texts = page.evaluate(CHART_TEXTS)
        assert any(t["legend"] for t in texts)
        outside = [t for t in texts if t["left"] < -1 or t["top"] < -1 or t["right"] > t["width"] + 1
                   or t["bottom"] > t["height"] + 1]
        assert not outside, outside[:5]

        page.goto("/")  # the researcher's list of studies
        assert page.locator("#studies").is_visible()
        _assert_fits_a_phone(page, "studies")
        page.goto(f"/studies/{study.slug}/home/")
        _assert_fits_a_phone(page, "study-home")
        page.click("#plan-button")
        page.wait_for_selector("#plan-power")
        _assert_fits_a_phone(page, "study-plan")
    finally:
        context.close()
