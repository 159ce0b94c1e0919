"""Attention checks, gold items, time per item and the researcher's per-rater statistics."""
from __future__ import annotations

import pytest

from annotations.models import Assignment, AttentionCheck, HumanRating, Item, Rater, Study
from annotations.selectors import assignment_progress, study_rater_stats
from annotations.services import assignment_next_step, assignment_start, attention_expected
from tests.support.raterkit import add_story_items, answer, open_study, page_key, url_of


@pytest.fixture
def study(story_study):
    open_study(story_study, attention_positions=[1])
    add_story_items(story_study)
    return story_study


def _expected(rater: Rater) -> int:
    assignment = Assignment.objects.get(rater=rater)
    return attention_expected(study=rater.study, seed=assignment.seed, position=1)


def _to_check(client, rater: Rater) -> str:
    answer(client, rater, 3)
    answer(client, rater, 3)
    html = client.get(url_of(rater)).content.decode()
    assert page_key(html) == "check:1"
    return html


def test_the_check_comes_after_the_configured_number_of_items_and_names_its_answer(client, study):
    rater = Rater.objects.create(study=study)
    html = _to_check(client, rater)
    expected = _expected(rater)
    assert f"please select {expected}." in html
    assert 2 <= expected <= 4  # never an end of the scale, so constant 1s or 5s fail it


def test_a_passed_check_is_stored_apart_from_ratings_and_counts_in_progress(client, study):
    rater = Rater.objects.create(study=study)
    _to_check(client, rater)
    client.post(url_of(rater), {"page": "check:1", "answer": str(_expected(rater))})
    check = AttentionCheck.objects.get()
    assert check.passed and check.position == 1
    assert HumanRating.objects.filter(rater=rater).count() == 4  # one item, no rating for the check
    assert assignment_progress(assignment=Assignment.objects.get(rater=rater)).done == 2
    assert assignment_progress(assignment=Assignment.objects.get(rater=rater)).total == 5


def test_a_failed_check_under_warn_shows_a_warning_and_continues(client, study):
    rater = Rater.objects.create(study=study)
    _to_check(client, rater)
    wrong = 1 if _expected(rater) != 1 else 2
    response = client.post(url_of(rater), {"page": "check:1", "answer": str(wrong)}, follow=True)
    html = response.content.decode()
    assert "attention check" in html
    assert 'name="q_grammaticality"' in html
    assert AttentionCheck.objects.get().passed is False


def test_a_failed_check_under_end_ends_the_session_without_a_code(client, study):
    study.attention_rule = Study.AttentionRule.END
    study.save()
    rater = Rater.objects.create(study=study)
    _to_check(client, rater)
    wrong = 1 if _expected(rater) != 1 else 2
    html = client.post(url_of(rater), {"page": "check:1", "answer": str(wrong)}, follow=True).content.decode()
    assignment = Assignment.objects.get(rater=rater)
    assert assignment.ended_reason == "attention" and assignment.completed_at is not None
    assert assignment.completion_code == ""
    assert "Your session has ended" in html
    assert 'name="page"' not in client.get(url_of(rater)).content.decode()


def test_a_check_answered_twice_is_stored_once(client, study):
    rater = Rater.objects.create(study=study)
    _to_check(client, rater)
    data = {"page": "check:1", "answer": str(_expected(rater))}
    client.post(url_of(rater), data)
    client.post(url_of(rater), {**data, "answer": "1"})
    assert AttentionCheck.objects.count() == 1 and AttentionCheck.objects.get().passed


def test_time_per_item_is_recorded_from_the_browser_or_the_server(client, study):
    study.attention_positions = []
    study.save()
    rater = Rater.objects.create(study=study)
    answer(client, rater, 3, elapsed_ms="4200")
    assert set(HumanRating.objects.values_list("time_spent_ms", flat=True)) == {4200}
    answer(client, rater, 3)  # no JavaScript: the server measures since the page was shown
    relevance = HumanRating.objects.get(question__key="relevance")
    assert relevance.time_spent_ms is not None and relevance.time_spent_ms < 60_000
    claim = Assignment.objects.get(rater=rater).claims.get(completed_at__isnull=False)
    assert claim.time_spent_ms == 4200 + relevance.time_spent_ms


def test_rater_stats_report_gold_accuracy_failures_and_straight_lining(study):
    study.attention_positions = []
    study.save()
    add_story_items(study, [(f"x{n}", "human", f"story {n}", "p") for n in range(4)])
    gold = Item.objects.get(external_id="g1")
    gold.kind, gold.gold_answers = Item.Kind.GOLD, {"grammaticality": 1, "cohesiveness": 1}
    gold.save()
    liner = Rater.objects.create(study=study, external_id="liner")
    careful = Rater.objects.create(study=study, external_id="careful")
    questions = list(study.questions.all())
    for n, item in enumerate(study.items.all()):
        for m, question in enumerate(questions):
            HumanRating.objects.create(rater=liner, item=item, question=question, score=5)
            HumanRating.objects.create(rater=careful, item=item, question=question, score=1 + (n + m) % 5)
    assignment = assignment_start(rater=careful)
    AttentionCheck.objects.create(assignment=assignment, position=1, expected=2, answer=4, passed=False)
    rows = {row.rater.external_id: row for row in study_rater_stats(study=study)}
    assert rows["liner"].straight_lining and rows["liner"].modal_share == 1.0
    assert rows["liner"].gold_answered == 2 and rows["liner"].gold_correct == 0
    assert not rows["careful"].straight_lining
    assert rows["careful"].checks == 1 and rows["careful"].checks_failed == 1
    assert rows["liner"].status == "not started" and rows["careful"].status == "in progress"


def test_gold_answers_do_not_count_towards_straight_lining(study):
    Item.objects.update(kind=Item.Kind.GOLD, gold_answers={"grammaticality": 5})
    rater = Rater.objects.create(study=study)
    for item in study.items.all():
        for question in study.questions.all():
            HumanRating.objects.create(rater=rater, item=item, question=question, score=5)
    (row,) = study_rater_stats(study=study)
    assert row.modal_share is None and not row.straight_lining
    assert row.gold_answered == 4 and row.gold_correct == 4


def test_positions_beyond_the_raters_items_are_ignored(study):
    study.attention_positions = [1, 99]
    study.items_per_rater = 2
    study.save()
    assignment = assignment_start(rater=Rater.objects.create(study=study))
    assert assignment_progress(assignment=assignment).total == 3
    assert assignment_next_step(assignment=assignment).kind == "item"
