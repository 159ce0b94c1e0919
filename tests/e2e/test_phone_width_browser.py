"""The researcher's pages on a phone (issue 25): at 390 x 844 no page scrolls sideways as a whole, wide tables scroll
inside their own box, and charts shrink to the screen with every text of theirs inside their drawing.

The study is the dashboard review's small study (6 items, 3 raters, 4 questions, one LLM pool with 3 samples).
"""
from __future__ import annotations

from contextlib import contextmanager

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


@contextmanager
def _signed_in_page(browser, live_server, session: str, viewport: dict[str, int] = PHONE):  # noqa: ANN001, ANN202
    """A page of a fresh browser context at ``viewport``, signed in with ``session``; the context closes after."""
    context = browser.new_context(viewport=viewport, base_url=live_server.url)
    context.add_cookies([{"name": "sessionid", "value": session, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        yield page
    finally:
        context.close()


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
        # Charts keep their proportions; one wider than the screen (a long legend) scrolls in its own figure rather
        # than shrinking its text below 10 px (issue 25 third review, C2).
        charts = page.locator("figure svg[role=img]")
        assert charts.count() > 0
        for k in range(charts.count()):
            box = charts.nth(k).bounding_box()
            view = charts.nth(k).evaluate("s => [s.viewBox.baseVal.width, s.viewBox.baseVal.height]")
            assert box is not None
            if box["x"] + box["width"] > PHONE["width"] + SLACK:
                assert charts.nth(k).evaluate("s => getComputedStyle(s.closest('figure')).overflowX") == "auto"
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


# Per chart: its title lines' boxes and its own (C1), the smallest text as drawn in px (C2), and for a distribution chart
# its question and the top of its y axis (C8).
CHART_FACTS = """() => [...document.querySelectorAll("svg[role=img]")].map(svg => {
  const shown = svg.getBoundingClientRect(), scale = shown.width / svg.viewBox.baseVal.width;
  const titles = [...svg.querySelectorAll("g.chart-title text")].map(t => {
    const b = t.getBoundingClientRect();
    return {text: t.textContent, inside: b.left >= shown.left - 1 && b.right <= shown.right + 1
            && b.top >= shown.top - 1 && b.bottom <= shown.bottom + 1};
  });
  const sizes = [...svg.querySelectorAll("text")].map(t => [parseFloat(getComputedStyle(t).fontSize) * scale,
                                                           t.textContent]);
  const ticks = [...svg.querySelectorAll("text")].map(t => t.textContent).filter(x => /^[0-9.]+%$/.test(x))
                  .map(parseFloat);
  const distribution = [...svg.querySelectorAll("text")].some(t => t.textContent.startsWith("% of each pool"));
  return {label: svg.getAttribute("aria-label"), titles, smallest: sizes.sort((a, b) => a[0] - b[0])[0],
          question: distribution ? svg.getAttribute("aria-label").split(" · ")[0] : null,
          top: ticks.length ? Math.max(...ticks) : null};
})"""


@pytest.mark.e2e
@pytest.mark.parametrize("width", [390, 1280])
def test_chart_titles_are_whole_text_is_legible_and_a_questions_distributions_share_a_scale(
        small_study, browser, live_server, width):
    study, session = small_study
    context = browser.new_context(viewport={"width": width, "height": 900}, base_url=live_server.url)
    context.add_cookies([{"name": "sessionid", "value": session, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        page.goto(f"/studies/{study.slug}/")
        facts = [f for f in page.evaluate(CHART_FACTS) if f["titles"]]
        assert len(facts) >= 8 and any("confusion" in f["label"] for f in facts)
        # C1: no title is cut, however long its pool's and group's names.
        cut = [(f["label"], t["text"]) for f in facts for t in f["titles"] if not t["inside"]]
        assert not cut, cut
        # C2: every chart text is drawn at least 10 px tall, on a phone too.
        small = [(f["label"], f["smallest"]) for f in facts if f["smallest"][0] < 10 - 0.01]
        assert not small, small
        # C8: the distribution charts of one question end their y axes at the same share.
        tops: dict[str, set[float]] = {}
        for f in facts:
            if f["question"] is not None:
                tops.setdefault(f["question"], set()).add(f["top"])
        assert len(tops) == 4 and all(len(t) == 1 for t in tops.values()), tops
        # C3: a box that scrolls sideways shows a shadow at its edge; on a desktop the agreement tables fit.
        hints = page.evaluate("""() => [...document.querySelectorAll(".scroll")].map(
            d => getComputedStyle(d).backgroundImage)""")
        assert hints and all("radial-gradient" in h for h in hints)
        if width >= 1280:
            for table in ("#table1", "#kendall", "#pairwise"):
                box = page.locator(table).evaluate("t => [t.parentElement.scrollWidth, t.parentElement.clientWidth]")
                assert box[0] <= box[1] + 1, (table, box)
    finally:
        context.close()


@pytest.mark.e2e
def test_on_a_phone_legends_wrap_inside_their_chart_and_the_values_are_a_tap_away(small_study, browser, live_server):
    """Issue 25 fourth review: C2, a scatter 681 px wide in a 362 px box for one long legend entry; C3, the n of table
    1's cells and the bars' and bubbles' values were in tooltips only, out of reach on a touch screen."""
    study, session = small_study
    context = browser.new_context(viewport=PHONE, base_url=live_server.url, has_touch=True)
    context.add_cookies([{"name": "sessionid", "value": session, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        page.goto(f"/studies/{study.slug}/")
        _assert_fits_a_phone(page, "dashboard-values")
        # C2: every scatter fits its box (no sideways scroll inside its figure), its legend on more lines than one.
        scatters = page.locator("figure.chart:has(svg[aria-label]) svg[role=img]").filter(has_text="mean per item")
        assert scatters.count() == 4
        for k in range(scatters.count()):
            fit = scatters.nth(k).evaluate("s => [s.closest('figure').scrollWidth, s.closest('figure').clientWidth]")
            assert fit[0] <= fit[1] + 1, (k, fit)
        assert page.locator("svg text.legend-more").count() > 0
        texts = page.evaluate(CHART_TEXTS)
        assert not [t for t in texts if t["right"] > t["width"] + 1 or t["bottom"] > t["height"] + 1]
        # C3: table 1 shows each cell's n; a tap on a chart's "values" opens its table, visible on the screen.
        assert page.locator("#table1 .cell-n").first.is_visible()
        assert page.locator("#table1 .cell-n").first.inner_text().startswith("n = ")
        values = page.locator("details.chart-values")
        assert values.count() == 12
        first = values.first
        first.locator("summary").scroll_into_view_if_needed()
        first.locator("summary").tap()
        table = first.locator("table")
        assert table.is_visible()
        assert table.locator("tbody tr").count() >= 5 and "%" in table.locator("tbody td").nth(1).inner_text()
        _assert_fits_a_phone(page, "dashboard-values-open")
    finally:
        context.close()


# Every header cell of a group column of the question x group tables, with whether its text reaches into the view
# (sixth review, U: at 390 px table 1's first column read "gpt2", its question centred off-screen).
GROUP_HEADS = """() => [...document.querySelectorAll("#table1, #kendall, #pairwise")].flatMap(table => {
  const box = table.parentElement.getBoundingClientRect();
  return [...table.querySelectorAll("thead tr:nth-child(2) th")].map(th => {
    const b = th.getBoundingClientRect(), name = th.querySelector(".q-on-phone");
    return {table: table.id, text: th.innerText, shown: name ? getComputedStyle(name).display !== "none" : false,
            left: b.left - box.left, right: b.right - box.left};
  });
})"""


@pytest.mark.e2e
def test_on_a_phone_the_first_column_in_view_names_its_question(small_study, browser, live_server):
    study, session = small_study
    with _signed_in_page(browser, live_server, session) as page:
        page.goto(f"/studies/{study.slug}/")
        heads = page.evaluate(GROUP_HEADS)
        assert {h["table"] for h in heads} == {"table1", "kendall", "pairwise"}
        assert all(h["shown"] for h in heads)
        for table in ("table1", "kendall", "pairwise"):
            first = next(h for h in heads if h["table"] == table)
            # Its text starts inside the scroll box as the page opens: the question's name and its group.
            assert first["left"] < PHONE["width"] - 60, first
            name, _, group = first["text"].partition(" · ")
            question = page.locator(f"#{table} thead tr:first-child th.q").first.inner_text()
            assert group and name == question, first
            # The group's name is read from the visible text's start, not from a centre off-screen.
            assert page.locator(f"#{table} thead tr:nth-child(2) th").first.evaluate(
                "th => getComputedStyle(th).textAlign") in ("left", "start")
    # On a wide screen the group headings stay bare under their question's heading.
    with _signed_in_page(browser, live_server, session, {"width": 1280, "height": 900}) as page:
        page.goto(f"/studies/{study.slug}/")
        assert not any(h["shown"] for h in page.evaluate(GROUP_HEADS))


@pytest.mark.e2e
def test_on_a_phone_the_pools_and_kappa_tables_show_every_column_as_cards(small_study, browser, live_server):
    # Eighth review, U2: items, tied and p (BH) of the κ tables, and the pools table's counts, were off-screen.
    study, session = small_study
    with _signed_in_page(browser, live_server, session) as page:
        for url in (f"/studies/{study.slug}/", f"/studies/{study.slug}/?group=(all)"):
            page.goto(url)
            cells = page.evaluate("""() => [...document.querySelectorAll("table.cards td")].map(td => {
                const b = td.getBoundingClientRect();
                return {label: td.dataset.label, right: b.right, width: b.width,
                        before: getComputedStyle(td, "::before").content};
            })""")
            assert {c["label"] for c in cells} >= {"against", "weights", "κ", "95% CI", "items", "tied (left out)", "p (BH)",
                                                  "pool", "ratings counted", "run status"}
            assert all(c["right"] <= PHONE["width"] + SLACK for c in cells), [c for c in cells
                                                                            if c["right"] > PHONE["width"]][:3]
            assert all(c["before"] == f'"{c["label"]}"' for c in cells)  # each value beside its column's name
            assert not page.locator("table.cards thead").first.is_visible()
