"""Helpers for rater tests: studies with items, and a client that answers the current page."""
from __future__ import annotations

import re

from django.test import Client

from annotations.models import Item, Rater, Study

STORIES = [
    ("h1", "human", "Marta climbs the steps each evening.", "A lighthouse keeper keeps the light on."),
    ("g1", "gpt2", "The phone was on the table. The table was a lake.", "A text from your own number."),
    ("h2", "human", "The dragon opened a bakery.", "A dragon retires."),
    ("g2", "gpt2", "The dog is a dog and the dog.", "A dog learns to talk."),
]


def add_story_items(study: Study, rows: list[tuple[str, str, str, str]] = STORIES) -> list[Item]:
    return [
        Item.objects.create(study=study, external_id=i, group=g, fields={"story": s, "prompt": p}, position=n)
        for n, (i, g, s, p) in enumerate(rows)
    ]


def open_study(study: Study, **changes: object) -> Study:
    study.status = Study.Status.OPEN
    for key, value in changes.items():
        setattr(study, key, value)
    study.save()
    return study


def url_of(rater: Rater) -> str:
    return f"/r/{rater.token}/"


def page_key(html: str) -> str:
    match = re.search(r'name="page" value="([^"]*)"', html)
    assert match, "the page has no form"
    return match.group(1)


def answer(client: Client, rater: Rater, value: int = 3, **extra: str):
    """Answer every radio group of the current page with `value` and submit; returns the GET response."""
    page = client.get(url_of(rater))
    html = page.content.decode()
    data = {"page": page_key(html), **extra}
    for name in sorted(set(re.findall(r'type="radio" name="([^"]+)"', html))):
        data[name] = str(value)
    return client.post(url_of(rater), data, follow=True)
