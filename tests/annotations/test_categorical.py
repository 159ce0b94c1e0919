"""Categorical studies: named labels stored as the codes 1..k, the spec's rules, the database's scale
rules, and the rater's page showing the labels as choices."""
from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from annotations.models import HumanRating, Item, Rater, Study
from annotations.studies import StudySpecError, study_create
from tests.support.raterkit import answer, open_study, page_key, url_of

SPEC = {
    "title": "Sentiment of a review aspect",
    "kind": "categorical",
    "item_fields": ["review"],
    "human_instruction": "Read the review and label the sentiment toward the aspect.",
    "llm_template": "Read the review.\n{review}\n{question}\nAnswer with Positive, Negative or unknown.",
    "scale": {"labels": ["Positive", "Negative", "unknown"]},
    "questions": [{"key": "food", "text": "What is the sentiment toward the food?"}],
}


@pytest.fixture
def sentiment(researcher):
    study = open_study(study_create(slug="sentiment", spec=SPEC, owner=researcher))
    for n, text in enumerate(["The pasta was wonderful.", "Cold soup, rude waiter."]):
        Item.objects.create(study=study, external_id=f"r{n}", group="reviews", position=n, fields={"review": text})
    return study


def test_the_labels_are_stored_as_codes_1_to_k_and_the_study_is_nominal(sentiment):
    assert (sentiment.kind, sentiment.scale_min, sentiment.scale_max) == ("categorical", 1, 3)
    assert sentiment.scale_labels == {"1": "Positive", "2": "Negative", "3": "unknown"}
    assert sentiment.category_labels() == ["Positive", "Negative", "unknown"]
    assert (sentiment.category_code("Negative"), sentiment.category_code("negative")) == (2, None)
    assert sentiment.is_nominal and sentiment.is_categorical and not sentiment.is_pairwise


def test_likert_and_pairwise_studies_keep_their_kinds(story_study):
    assert not story_study.is_nominal and not story_study.is_categorical
    assert story_study.category_labels() == []


@pytest.mark.parametrize(("scale", "message"), [
    ({"labels": ["Positive"]}, "at least two labels"),
    ({"labels": "Positive, Negative"}, "at least two labels"),
    ({"min": 1, "max": 3}, "at least two labels"),
    ({"labels": ["Positive", ""]}, "must be a non-empty string"),
    ({"labels": ["Positive", " Negative"]}, "without outer spaces"),
    ({"labels": ["Positive", 2]}, "must be a non-empty string"),
    ({"labels": ["Positive", "positive"]}, "appear twice"),
    ({"labels": ["Positive", "Negative"], "min": 0}, "scale's min is 1"),
    ({"labels": ["Positive", "Negative"], "max": 5}, "scale's max is 2"),
    ({"labels": ["Positive", "x" * 101]}, "longer than 100"),
])
def test_bad_categorical_scales_are_refused_with_one_line_and_create_nothing(researcher, scale, message):
    with pytest.raises(StudySpecError, match=message) as caught:
        study_create(slug="bad", spec={**SPEC, "scale": scale}, owner=researcher)
    assert "\n" not in str(caught.value)
    assert not Study.objects.filter(slug="bad").exists()


def test_a_categorical_study_has_no_pair_fields(researcher):
    with pytest.raises(StudySpecError, match="pair_fields is only for kind 'pairwise'"):
        study_create(slug="bad", spec={**SPEC, "pair_fields": ["review", "review"]}, owner=researcher)


def test_create_study_from_a_file_accepts_a_categorical_scale(tmp_path, researcher):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SPEC), encoding="utf-8")
    call_command("create_study", "from-file", "--file", str(path), "--owner", "owner")
    study = Study.objects.get(slug="from-file")
    assert (study.kind, study.category_labels(), study.owner) == ("categorical", ["Positive", "Negative", "unknown"],
                                                                    researcher)
    path.write_text(json.dumps({**SPEC, "scale": {"labels": ["only"]}}), encoding="utf-8")
    with pytest.raises(CommandError, match="at least two labels"):
        call_command("create_study", "bad-file", "--file", str(path))


def test_the_database_keeps_a_categorical_scale_starting_at_1(sentiment):
    with pytest.raises(IntegrityError), transaction.atomic():
        Study.objects.filter(pk=sentiment.pk).update(scale_min=0)


def test_the_database_refuses_a_code_past_the_last_label(sentiment):
    rater = Rater.objects.create(study=sentiment, external_id="ann-1")
    item, question = sentiment.items.first(), sentiment.questions.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        HumanRating.objects.create(rater=rater, item=item, question=question, score=4)
    HumanRating.objects.create(rater=rater, item=item, question=question, score=3)
    assert HumanRating.objects.count() == 1


def test_the_rater_page_shows_the_labels_as_choices_and_stores_the_code(client, sentiment):
    rater = Rater.objects.create(study=sentiment)
    html = unescape(client.get(url_of(rater)).content.decode())
    assert re.findall(r'type="radio" name="q_food" value="(\d)"', html) == ["1", "2", "3"]
    assert re.findall(r"<span>(Positive|Negative|unknown)</span>", html) == ["Positive", "Negative", "unknown"]

    response = client.post(url_of(rater), {"page": page_key(html), "q_food": "4"})
    assert response.status_code == 200 and HumanRating.objects.count() == 0

    answer(client, rater, 2)
    assert list(HumanRating.objects.values_list("score", flat=True)) == [2.0]
