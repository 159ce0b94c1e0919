"""The judge kinds' integration tests share one rated study: the story items rated by two raters."""
from __future__ import annotations

import pytest

RATERS = ("ann", "bob")


@pytest.fixture
def rated_study(story_with_items):
    """Two raters who rated every item and question (rater ann also left comments)."""
    from annotations.models import HumanRating, Rater

    for position, name in enumerate(RATERS):
        rater = Rater.objects.create(
            study=story_with_items, external_id=name, demographics={"age": 30 + position, "gender": "female"}
        )
        for item in story_with_items.items.all():
            for question in story_with_items.questions.all():
                HumanRating.objects.create(
                    rater=rater, item=item, question=question, score=(item.position + position) % 5 + 1,
                    comment="Liked the ending." if name == "ann" else "",
                )
    return story_with_items
