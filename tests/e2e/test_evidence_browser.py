"""The evidence beside the verdict (issue 19) in headless Chromium, on the dashboard of an imported AltTest dataset."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.e2e.conftest import SCREENSHOTS
from tests.evalhub.analysis.test_agreement_rows import _import_alt_test


@pytest.fixture
def mtbench(transactional_db, tmp_path):
    """MT-Bench's human and LLM pairwise judgments imported into a pairwise study (A, B, tie), and a session."""
    owner = get_user_model().objects.create_user("evidence-owner", password="not-used")
    study, *_ = _import_alt_test(owner, tmp_path, "mtbench")
    client = Client()
    client.force_login(owner)
    return study, client.cookies["sessionid"].value


@pytest.mark.e2e
def test_the_dashboard_shows_kappa_the_confusion_heat_map_and_the_ceiling_strip(mtbench, page, live_server):
    study, session = mtbench
    page.context.add_cookies([{"name": "sessionid", "value": session, "url": live_server.url}])
    page.goto(f"/studies/{study.slug}/")
    page.wait_for_function("() => document.querySelectorAll('.evidence-block').length > 0")

    blocks = page.locator(".evidence-block")
    assert blocks.count() == 6  # one question x one group x six LLMs
    block = page.locator('.evidence-block[data-pool="gpt-4o"]')
    assert block.is_visible()
    # The kappa table: against the human majority, against each of the three raters, and Fleiss among them.
    rows = block.locator("tr.kappa-row")
    assert rows.count() == 1 + 3 + 1
    assert [rows.nth(k).get_attribute("data-against") for k in range(5)] == ["majority", "rater", "rater", "rater",
                                                                               "raters"]
    value = float(block.locator('tr.kappa-row[data-against="majority"] td.kappa-value').inner_text())
    assert -1 <= value <= 1
    # The confusion heat map: a 3 x 3 grid of SVG cells whose counts are drawn in them and sum to the items.
    cells = block.locator("figure.confusion svg rect.confusion-cell")
    assert cells.count() == 9
    counts = [int(cells.nth(k).get_attribute("data-count")) for k in range(9)]
    texts = block.locator("figure.confusion svg text").all_text_contents()
    assert all(str(c) in texts for c in counts) and sum(counts) > 0
    assert f"{sum(counts)} items" in block.locator("figure.confusion figcaption").inner_text()
    box = block.locator("figure.confusion svg").bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100
    # The ceiling strip: a dot per rater and one for the judge on the same items, and the sentence.
    strip = block.locator("figure.ceiling svg")
    assert strip.locator("circle.ceiling-rater").count() == 3
    assert strip.locator("circle.ceiling-judge").count() == 3
    summary = block.locator(".ceiling-summary").inner_text()
    # The pool is named by its label (issue 25), as in the legends: the judge, then the parameters that differ.
    assert summary.startswith("gpt-4o · model gpt-4o: the judge agrees with your raters better than ")
    # ("better" compares two means: where their intervals overlap the words say so)
    # ... and the items it rests on (eleventh review, M2).
    assert re.search(r" of 3 of them do( \(a point comparison: see the intervals\))? \(on \d+ items\)$", summary), summary
    block.screenshot(path=str(SCREENSHOTS / "dashboard-evidence-mtbench.png"))
