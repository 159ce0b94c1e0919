"""A scale reads in order on a phone (issue 25): at 390 x 844 in real Chromium, the points of a 5- and a 7-point
scale sit in one row, left to right in their order, inside the screen; worded points (which would not fit a
seventh of a phone) and scales of more than 7 points are a vertical list in order. Never a grid (1 2 / 3 4 / 5)."""
from __future__ import annotations

import io
import itertools

import pytest
from django.core.management import call_command

from tests.support.raterkit import add_story_items, open_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
AGREE_7 = ["Strongly disagree", "Disagree", "Somewhat disagree", "Neither agree nor disagree", "Somewhat agree",
           "Agree", "Strongly agree"]


def _scale_boxes(browser, live_server, study, shoot, name: str) -> list[list[dict[str, float]]]:  # noqa: ANN001
    out = io.StringIO()
    call_command("invite", study.slug, "--base-url", live_server.url, stdout=out)
    context = browser.new_context(viewport=PHONE, base_url=live_server.url)
    try:
        page = context.new_page()
        page.goto(out.getvalue().strip())
        scales = page.locator("fieldset.question .scale")
        assert scales.count() >= 1
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # nothing off the screen
        shoot(page, name)
        boxes = []
        for n in range(scales.count()):
            labels = scales.nth(n).locator("label")
            texts = [labels.nth(k).inner_text().strip() for k in range(labels.count())]
            boxes.append([{**labels.nth(k).bounding_box(), "text": texts[k]} for k in range(labels.count())])
        return boxes
    finally:
        context.close()


def _one_row_in_order(row: list[dict[str, float]]) -> None:
    tops = [b["y"] for b in row]
    assert max(tops) - min(tops) < 1  # one row
    for left, right in itertools.pairwise(row):
        assert left["x"] + left["width"] <= right["x"] + 0.5  # left to right, side by side, not overlapping
    assert row[0]["x"] >= 0 and row[-1]["x"] + row[-1]["width"] <= PHONE["width"]


def _one_column_in_order(row: list[dict[str, float]]) -> None:
    lefts = [b["x"] for b in row]
    assert max(lefts) - min(lefts) < 1  # one column
    for upper, lower in itertools.pairwise(row):
        assert upper["y"] + upper["height"] <= lower["y"] + 0.5  # top to bottom, not overlapping
    assert max(b["x"] + b["width"] for b in row) <= PHONE["width"]


@pytest.mark.parametrize(
    ("low", "high", "labels", "check"),
    [
        (1, 5, {}, _one_row_in_order),
        (1, 7, {}, _one_row_in_order),
        (1, 7, {str(k + 1): t for k, t in enumerate(AGREE_7)}, _one_column_in_order),
        (0, 10, {}, _one_column_in_order),
    ],
    ids=["5-points", "7-points", "7-worded-points", "11-points"],
)
def test_a_scale_reads_in_order_at_390_px(story_study, browser, live_server, shoot, low, high, labels, check):
    study = open_study(story_study, scale_min=low, scale_max=high, scale_labels=labels)
    add_story_items(study)

    rows = _scale_boxes(browser, live_server, study, shoot, f"scale-{low}-{high}{'-worded' if labels else ''}-390px")
    assert len(rows) == 3  # the story protocol's first page: three questions
    for row in rows:
        assert [b["text"] for b in row] == [labels.get(str(k), str(k)) for k in range(low, high + 1)]
        check(row)
