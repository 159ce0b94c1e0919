"""Counterbalanced pairs in real Chromium (issue 25, item 1): two raters of a pairwise study see the same pairs
in opposite orders, each choosing by the texts, and the analysis counts every choice in the file's A/B."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from annotations.models import Item
from annotations.services import invitations_create
from annotations.studies import study_create_from_template
from tests.support.raterkit import open_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# external id -> (response A, response B, the response both raters prefer: "A" or "B")
PAIRS = {
    "p0": ("Marta lit the lamp one final time.", "The light was a light.", "A"),
    "p1": ("Her loaves came out charcoal at first.", "The bread was bread.", "A"),
    "p2": ("The fox counted the hens twice.", "The fox was a fox.", "A"),
    "p3": ("The sea was the sea.", "Rain drummed on the tin roof all night.", "B"),
}


@pytest.fixture
def pairs(researcher):
    study = open_study(study_create_from_template(slug="pairs", template="story-pairwise", owner=researcher),
                       raters_per_item=2, ordering="fixed")
    for n, (external_id, (a, b, _)) in enumerate(PAIRS.items()):
        # One group per item, so each cell of the analysis is one item.
        Item.objects.create(study=study, external_id=external_id, group=f"g{n}", position=n,
                            fields={"prompt": f"Prompt {n}.", "response_a": a, "response_b": b})
    return study


def _rate_by_text(page, url: str) -> dict[str, tuple[str, str, bool]]:  # noqa: ANN001
    """Rate every page choosing the preferred text wherever it is shown; per item: the texts in the order
    shown, and whether the choice was the text shown first."""
    page.goto(url)
    seen = {}
    for _ in PAIRS:
        shown = tuple(page.locator(".candidate .text").all_inner_texts())
        external_id, (a, b, preferred) = next((i, p) for i, p in PAIRS.items() if set(shown) == {p[0], p[1]})
        wanted = a if preferred == "A" else b
        first = shown[0] == wanted
        page.locator("fieldset.question label").nth(0 if first else 1).click()
        with page.expect_navigation():
            page.get_by_role("button", name="Next").click()
        seen[external_id] = (shown[0], shown[1], first)
    assert page.locator("#completion-code").is_visible()
    return seen


def test_two_raters_see_each_pair_in_opposite_orders_and_the_analysis_counts_the_files_a_and_b(pairs, page,
                                                                                               live_server):
    first, second = invitations_create(study=pairs, count=2)
    seen_first = _rate_by_text(page, f"{live_server.url}/r/{first.token}/")
    seen_second = _rate_by_text(page, f"{live_server.url}/r/{second.token}/")

    for external_id in PAIRS:
        assert seen_first[external_id][:2] == tuple(reversed(seen_second[external_id][:2])), external_id
    # Each rater saw the file's B first on half of the pairs.
    for seen in (seen_first, seen_second):
        assert sum(shown_first != PAIRS[i][0] for i, (shown_first, _, _) in seen.items()) == 2

    out = io.StringIO()
    call_command("analyze", "pairs", "--format", "json", "--n-boot", "50", stdout=out)
    result = json.loads(out.getvalue())
    cells = {c["group"]: c for c in result["cells"] if c["pool"] == "human" and c["question"] == "overall"}
    for n, (_, _, preferred) in enumerate(PAIRS.values()):
        # Both raters chose the preferred response: its file letter twice (1 = A, 2 = B).
        assert (cells[f"g{n}"]["n_ratings"], cells[f"g{n}"]["mean"]) == (2, 1.0 if preferred == "A" else 2.0)
    # Beside the judges' rows: the raters' own first-position share, as the browser saw it.
    human = [r for r in result["position_bias"] if r["pool"] == "human"]
    chosen_first = sum(first for seen in (seen_first, seen_second) for _, _, first in seen.values())
    assert [(r["question"], r["n_decisive"], r["n_first"]) for r in human] == [("overall", 8, chosen_first)]
