"""The researcher's home page: their studies with item counts, in a fixed number of queries."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotations.models import Item, Study
from annotations.studies import study_create_from_template

pytestmark = pytest.mark.django_db


def _studies(owner, count: int, items: int) -> None:
    for n in range(count):
        study = study_create_from_template(slug=f"home-{owner.pk}-{n}", template="story-likert", owner=owner)
        Item.objects.bulk_create(
            Item(study=study, external_id=f"i{k}", group="human", position=k, fields={"story": "s", "prompt": "p"})
            for k in range(items + n)
        )


def _page(client) -> tuple[str, int]:
    with CaptureQueriesContext(connection) as queries:
        html = client.get("/").content.decode()
    return html, len(queries)


def test_each_study_shows_its_item_count_and_more_studies_cost_no_more_queries(client, researcher):
    client.force_login(researcher)
    _studies(researcher, 2, items=3)
    html, few = _page(client)
    assert Study.objects.filter(owner=researcher).count() == 2
    assert "<td>3</td>" in html and "<td>4</td>" in html  # 3 and 4 items

    for n in range(2, 8):
        study = study_create_from_template(slug=f"more-{n}", template="story-likert", owner=researcher)
        Item.objects.create(study=study, external_id="x", group="human", position=0, fields={"story": "s", "prompt": "p"})
    html, many = _page(client)
    assert html.count("dashboard</a>") == 8
    assert many == few
