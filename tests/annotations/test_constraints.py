"""The database itself refuses duplicate ratings, off-scale scores and cross-study ratings."""
from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from annotations.models import HumanRating, Item, Rater, Study
from annotations.studies import study_create_from_template
from llmjudge.models import Judge, JudgeRun, LLMRating


@pytest.fixture
def item(story_study):
    return Item.objects.create(study=story_study, external_id="s1", group="human", fields={"story": "s", "prompt": "p"})


@pytest.fixture
def question(story_study):
    return story_study.questions.get(key="cohesiveness")


@pytest.fixture
def run(story_study):
    judge = Judge.objects.create(name="j", backend=Judge.Backend.FAKE, model="fake")
    return JudgeRun.objects.create(study=story_study, judge=judge)


def _fails(**kwargs) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        kwargs.pop("model").objects.create(**kwargs)


def test_second_human_rating_of_same_rater_item_question_is_refused(rater, item, question):
    HumanRating.objects.create(rater=rater, item=item, question=question, score=4)
    _fails(model=HumanRating, rater=rater, item=item, question=question, score=3)
    assert HumanRating.objects.get().score == 4


@pytest.mark.parametrize("score", [0, 0.99, 5.01, 6, -3, 1e9])
def test_human_score_outside_the_study_scale_is_refused(rater, item, question, score):
    _fails(model=HumanRating, rater=rater, item=item, question=question, score=score)
    assert HumanRating.objects.count() == 0


@pytest.mark.parametrize("score", [1, 1.5, 3, 4.5, 5])
def test_human_scores_on_the_scale_including_half_points_are_stored(rater, item, question, score):
    HumanRating.objects.create(rater=rater, item=item, question=question, score=score)
    assert HumanRating.objects.get().score == score


def test_updating_a_human_score_off_the_scale_is_refused(rater, item, question):
    rating = HumanRating.objects.create(rater=rater, item=item, question=question, score=4)
    with pytest.raises(IntegrityError), transaction.atomic():
        HumanRating.objects.filter(pk=rating.pk).update(score=7)
    rating.refresh_from_db()
    assert rating.score == 4


def test_scale_follows_the_study_not_a_global_range(db, researcher, rater, item, question):
    seven = study_create_from_template(slug="seven", template="adversarial-fluency", owner=researcher)
    Study.objects.filter(pk=seven.pk).update(scale_max=7)
    other_item = Item.objects.create(study=seven, external_id="t", group="benign", fields={"title": "x"})
    other_rater = Rater.objects.create(study=seven, external_id="r7")
    HumanRating.objects.create(rater=other_rater, item=other_item, question=seven.questions.get(), score=7)
    _fails(model=HumanRating, rater=rater, item=item, question=question, score=7)


def test_rating_an_item_of_another_study_is_refused(db, researcher, rater, question):
    other = study_create_from_template(slug="other", template="adversarial-fluency", owner=researcher)
    foreign = Item.objects.create(study=other, external_id="x", group="benign", fields={"title": "t"})
    _fails(model=HumanRating, rater=rater, item=foreign, question=question, score=3)


def test_second_llm_rating_of_same_run_item_question_sample_is_refused(run, item, question):
    LLMRating.objects.create(run=run, item=item, question=question, sample=0, status="ok", score=4)
    _fails(model=LLMRating, run=run, item=item, question=question, sample=0, status="ok", score=2)
    LLMRating.objects.create(run=run, item=item, question=question, sample=1, status="ok", score=2)
    assert LLMRating.objects.count() == 2


@pytest.mark.parametrize("score", [0, 5.5, 10])
def test_llm_score_outside_the_scale_is_refused(run, item, question, score):
    _fails(model=LLMRating, run=run, item=item, question=question, sample=0, status="ok", score=score)


def test_unparseable_llm_rating_has_no_score_and_ok_rating_must_have_one(run, item, question):
    LLMRating.objects.create(run=run, item=item, question=question, sample=0, status="unparseable", score=None)
    _fails(model=LLMRating, run=run, item=item, question=question, sample=1, status="ok", score=None)
    _fails(model=LLMRating, run=run, item=item, question=question, sample=2, status="refused", score=3)
    assert LLMRating.objects.count() == 1


def test_study_scale_must_run_upwards(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        Study.objects.create(slug="bad", title="b", instruction="i", llm_template="{question}", scale_min=5,
                             scale_max=5)


def test_rater_external_ids_are_unique_within_a_study_but_blank_ids_may_repeat(story_study):
    Rater.objects.create(study=story_study, external_id="p1")
    Rater.objects.create(study=story_study)
    Rater.objects.create(study=story_study)
    with pytest.raises(IntegrityError), transaction.atomic():
        Rater.objects.create(study=story_study, external_id="p1")


def test_rater_tokens_are_long_and_distinct(story_study):
    tokens = {Rater.objects.create(study=story_study).token for _ in range(20)}
    assert len(tokens) == 20
    assert all(len(t) >= 32 for t in tokens)
